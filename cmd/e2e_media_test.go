package cmd_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// Offline, the echo model states what it received, and the attachment is
// in the media cache of the chat's session.
func TestGatewayEchoStatesAttachments(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{Home: t.TempDir()})
	r := g.Send(t, cmdtest.Message{ChatID: "c1", UserID: "u1", Media: []cmdtest.Media{{Name: "photo.png", MIME: "image/png", Data: tinyPNG}}})
	if r.Status != "done" || r.Text() != agent.EchoPrefix+"[echo] image photo.png 67 B" {
		t.Fatalf("reply = %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(g.Home, "media", r.SessionID, "photo.png")); err != nil || !bytes.Equal(b, tinyPNG) {
		t.Fatalf("cached photo: %v", err)
	}
}

// With a model endpoint and speech-to-text configured, a voice note is
// transcribed by the endpoint's audio API and the model answers the
// transcript; a MEDIA: line in the answer sends a file from the working
// directory back to the local client.
func TestGatewayVoiceAndFilesWithAModel(t *testing.T) {
	srv := agenttest.New(t, agenttest.Reply{Content: "Here is the plan.\nMEDIA:plan.txt"})
	srv.Transcript = "send me the plan"
	home, work := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(work, "plan.txt"), []byte("1. water the plants\n"), 0o644)
	cfg := "model:\n  default: gpt-4o-mini\n  base_url: " + srv.BaseURL() + "\n  api_key: sk-test-123456\n" +
		"agent:\n  workdir: " + work + "\nstt:\n  enabled: true\n"
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600)
	g := cmdtest.Start(t, cmdtest.Options{Home: home})
	r := g.Send(t, cmdtest.Message{ChatID: "c1", UserID: "u1", Media: []cmdtest.Media{{Name: "voice.ogg", MIME: "audio/ogg", Data: []byte("OggS\x00\x02 voice")}}})
	if len(r.Replies) != 2 || r.Replies[0].Text != "Here is the plan." || r.Replies[1].File == nil {
		t.Fatalf("replies = %+v", r)
	}
	if got := g.GetFile(t, r.Replies[1].File); string(got) != "1. water the plants\n" {
		t.Fatalf("file = %q", got)
	}
	if tr := srv.Transcriptions(); len(tr) != 1 || tr[0].Authorization != "Bearer sk-test-123456" || tr[0].Model != "whisper-1" {
		t.Fatalf("transcriptions = %+v", tr)
	}
	if seen := srv.Requests()[0].UserText(); !strings.HasPrefix(seen, agent.TranscriptPrefix+"send me the plan") {
		t.Fatalf("the model saw %q", seen)
	}
}
