package slack

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/heraldgw/herald"
)

// TestInboundMediaGolden pins the Media JSON herald makes of a file_share
// event as Slack sends it (testdata/file_share_event.json, parsed by
// slack-go as the Events API receiver does): an image, an audio clip
// recorded in Slack (voice; its video/mp4 MIME read as audio/mp4), an
// uploaded MP3 (audio), a video, a snippet, a PDF, a Slack Connect file
// (its id only), and a file hidden by the plan's limit and a deleted one
// (both skipped: nothing to fetch).
func TestInboundMediaGolden(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "file_share_event.json"))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := slackevents.ParseEvent(json.RawMessage(raw), slackevents.OptionNoVerifyToken())
	if err != nil {
		t.Fatal(err)
	}
	a := New(Config{BotToken: "xoxb-test"})
	m, ok := a.translate(context.Background(), ev.InnerEvent.Data)
	if !ok {
		t.Fatal("the file_share event was ignored")
	}
	if m.Text != "the numbers for Q3" {
		t.Errorf("text = %q", m.Text)
	}
	got, err := json.MarshalIndent(m.Media, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "media.golden", string(got)+"\n")
}

func TestMediaKind(t *testing.T) {
	cases := []struct {
		file       slackapi.File
		kind, mime string
	}{
		{slackapi.File{Name: "audio_message.webm", Mimetype: "audio/webm"}, herald.MediaVoice, "audio/webm"},
		{slackapi.File{Name: "audio_message.mp4", Mimetype: "video/mp4"}, herald.MediaVoice, "audio/mp4"},
		{slackapi.File{Name: "clip.mp4", Mimetype: "video/mp4", MediaDisplayType: "audio"}, herald.MediaVoice, "audio/mp4"},
		{slackapi.File{Name: "talk.mp3", Mimetype: "audio/mpeg", MediaDisplayType: "audio"}, herald.MediaAudio, "audio/mpeg"},
		{slackapi.File{Name: "audio_message_notes.pdf", Mimetype: "application/pdf"}, herald.MediaDocument, "application/pdf"},
		{slackapi.File{Name: "screen.mp4", Mimetype: "video/mp4", MediaDisplayType: "video"}, herald.MediaVideo, "video/mp4"},
		{slackapi.File{Name: "note.ogg", Mimetype: "audio/ogg"}, herald.MediaVoice, "audio/ogg"},
		{slackapi.File{Name: "Photo.PNG", Mimetype: ""}, herald.MediaImage, "image/png"},
		{slackapi.File{Name: "page.html", Mimetype: ""}, herald.MediaDocument, "text/html"},
		{slackapi.File{Name: "blob", Mimetype: " Image/JPEG "}, herald.MediaImage, "image/jpeg"},
	}
	for _, c := range cases {
		if kind, mime := mediaKind(c.file); kind != c.kind || mime != c.mime {
			t.Errorf("mediaKind(%s, %q) = %s %s, want %s %s", c.file.Name, c.file.Mimetype, kind, mime, c.kind, c.mime)
		}
	}
}

func TestCeilingReader(t *testing.T) {
	for _, n := range []int{0, 999, 1000, 1001, 5000} {
		r := &ceilingReader{rc: io.NopCloser(strings.NewReader(strings.Repeat("x", n))), left: 1000, limit: 1000, ref: "F1"}
		b, err := io.ReadAll(r)
		if n <= 1000 && (err != nil || len(b) != n) {
			t.Errorf("%d bytes: read %d, %v", n, len(b), err)
		}
		if n > 1000 && (err == nil || !strings.Contains(err.Error(), "F1") || len(b) > 1000) {
			t.Errorf("%d bytes: read %d, %v; want an error naming F1 after at most 1000", n, len(b), err)
		}
	}
}
