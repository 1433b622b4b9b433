package slack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/slack-go/slack/slackevents"
)

// TestInboundMediaGolden pins the Media JSON herald makes of a file_share
// event as Slack sends it (testdata/file_share_event.json, parsed by
// slack-go as the Events API receiver does): an image, an audio clip
// recorded in Slack (voice; its video/mp4 MIME read as audio/mp4), an
// uploaded MP3 (audio), a video, a snippet, a PDF, and a file hidden by
// the plan's limit and a deleted one (both skipped: nothing to fetch).
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
	m, ok := a.translate(ev.InnerEvent.Data)
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
