package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/hooks"
)

// pngBytes is a 1×1 PNG.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func TestImagesGoToTheModelAsPartsNotToTheHistory(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "photo.png")
	os.WriteFile(img, pngBytes, 0o600)
	media := []herald.Media{{Type: herald.MediaImage, MIME: "image/png", Name: "photo.png", Size: int64(len(pngBytes)), Path: img}}
	prompt := "look\n\n" + AttachmentLine("image", "photo.png", "image/png", int64(len(pngBytes)), "saved at "+img)
	for _, vision := range []bool{true, false} {
		m := &funcModel{fn: func(int, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
			return textResp("a pixel"), nil
		}}
		a := newAgent(m, hooks.NewRegistry(nil))
		a.Vision = vision
		res, err := a.Run(context.Background(), prompt, Options{Media: media})
		if err != nil {
			t.Fatal(err)
		}
		user := m.requests()[0].Messages[0]
		var images []string
		for _, p := range user.MultiContent {
			if p.Type == openai.ChatMessagePartTypeImageURL {
				images = append(images, p.ImageURL.URL)
			}
		}
		if vision {
			if len(images) != 1 || !strings.HasPrefix(images[0], "data:image/png;base64,iVBOR") || messageText(user) != prompt {
				t.Fatalf("vision: request user message = %+v", user)
			}
		} else if len(images) != 0 || user.Content != prompt {
			t.Fatalf("no vision: request user message = %+v", user)
		}
		if stored := res.Messages[0]; stored.Content != prompt || stored.MultiContent != nil {
			t.Fatalf("stored user message = %+v; want the text form only", stored)
		}
	}
}

func TestSupportsVision(t *testing.T) {
	for model, want := range map[string]bool{"gpt-4o-mini": true, "gpt-3.5-turbo": false, "o3-mini": false, "claude-sonnet-4": true, "deepseek-chat": false} {
		if SupportsVision(model) != want {
			t.Errorf("SupportsVision(%q) = %v", model, !want)
		}
	}
}

func TestEchoStatesAttachments(t *testing.T) {
	text := "what is this?\n\n" + AttachmentLine("image", "photo.jpg", "image/jpeg", 34*1024, "saved at /m/photo.jpg") + "\n" +
		AttachmentLine("document", "big file.pdf", "", 0, "not downloaded: over the limit")
	resp, err := Echo{}.Complete(context.Background(), openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: text}}})
	if err != nil {
		t.Fatal(err)
	}
	want := EchoPrefix + "what is this?\n[echo] image photo.jpg 34 KB\n[echo] document big file.pdf"
	if got := resp.Choices[0].Message.Content; got != want {
		t.Fatalf("echo = %q\nwant   %q", got, want)
	}
	// an image part (vision) is read through the text part
	resp, _ = Echo{}.Complete(context.Background(), openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{
		{Type: openai.ChatMessagePartTypeText, Text: AttachmentLine("voice", "v.ogg", "audio/ogg", 2048, "saved at /m/v.ogg")},
		{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "data:image/png;base64,AA"}},
	}}}})
	if got := resp.Choices[0].Message.Content; got != EchoPrefix+"[echo] voice v.ogg 2 KB" {
		t.Fatalf("echo of parts = %q", got)
	}
}

func TestMediaCacheReadableNeverWritable(t *testing.T) {
	e := newFileEnv(t)
	cache := filepath.Join(e.home, "media", "sess1")
	os.MkdirAll(cache, 0o700)
	doc := filepath.Join(cache, "notes.txt")
	os.WriteFile(doc, []byte("meeting at noon\n"), 0o600)
	os.WriteFile(filepath.Join(e.home, "state.db"), []byte("SQLite format 3\x00"), 0o600)
	other := filepath.Join(e.home, "media", "sess2")
	os.MkdirAll(other, 0o700)
	os.WriteFile(filepath.Join(other, "theirs.txt"), []byte("another chat's file"), 0o600)
	os.Symlink(filepath.Join(other, "theirs.txt"), filepath.Join(e.work, "theirs-link.txt"))
	turn := &Turn{SessionID: "sess1", MediaDir: cache}
	read := func(p string) (string, error) {
		return (&ReadFile{Paths: e.paths}).Run(context.Background(), &Call{Args: map[string]any{"path": p}, Turn: turn})
	}
	if got, err := read(doc); err != nil || !strings.Contains(got, "meeting at noon") {
		t.Fatalf("read_file of a cached document = %v, %v", got, err)
	}
	// another conversation's attachments, directly or through a link
	for _, p := range []string{filepath.Join(other, "theirs.txt"), "theirs-link.txt", filepath.Join(cache, "..", "sess2", "theirs.txt")} {
		if _, err := read(p); !errors.Is(err, ErrOutside) {
			t.Errorf("read_file %s: %v; want a refusal", p, err)
		}
	}
	if _, err := callTool(t, &ReadFile{Paths: e.paths}, map[string]any{"path": doc}); !errors.Is(err, ErrOutside) {
		t.Errorf("read_file with no conversation read the cache: %v", err)
	}
	for _, tc := range []struct {
		tool Tool
		args map[string]any
	}{
		{&WriteFile{Paths: e.paths}, map[string]any{"path": doc, "content": "changed"}},
		{&WriteFile{Paths: e.paths}, map[string]any{"path": filepath.Join(cache, "new.txt"), "content": "x"}},
		{&Patch{Paths: e.paths}, map[string]any{"path": doc, "old_string": "noon", "new_string": "midnight"}},
		{&ReadFile{Paths: e.paths}, map[string]any{"path": filepath.Join(e.home, "state.db")}},
		{&ReadFile{Paths: e.paths}, map[string]any{"path": filepath.Join(e.home, "config.yaml")}},
		{&ReadFile{Paths: e.paths}, map[string]any{"path": filepath.Join(cache, "..", "..", "config.yaml")}},
	} {
		if _, err := callTool(t, tc.tool, tc.args); !errors.Is(err, ErrOutside) {
			t.Errorf("%s %v: err = %v; want a refusal", tc.tool.Name(), tc.args["path"], err)
		}
	}
	if b, _ := os.ReadFile(doc); string(b) != "meeting at noon\n" {
		t.Fatalf("cached document changed: %q", b)
	}
}

func TestSendFilePaths(t *testing.T) {
	e := newFileEnv(t)
	cache := filepath.Join(e.home, "media", "s1")
	os.MkdirAll(cache, 0o700)
	os.WriteFile(filepath.Join(cache, "in.jpg"), []byte("jpeg"), 0o600)
	os.MkdirAll(filepath.Join(e.home, "media", "s2"), 0o700)
	os.WriteFile(filepath.Join(e.home, "media", "s2", "x.jpg"), []byte("jpeg"), 0o600)
	os.WriteFile(filepath.Join(e.home, "local.token"), []byte("hl_secret"), 0o600)
	os.WriteFile(filepath.Join(e.home, "state.db"), []byte("db"), 0o600)
	os.WriteFile(filepath.Join(e.work, ".env"), []byte("OPENAI_API_KEY=sk-x"), 0o600)
	os.WriteFile(filepath.Join(e.work, "bot.token"), []byte("t"), 0o600)
	os.WriteFile(filepath.Join(e.work, "chart.png"), pngBytes, 0o644)
	os.Symlink(filepath.Join(e.home, "local.token"), filepath.Join(e.work, "innocent.txt"))
	os.Symlink(filepath.Join(e.work, ".env"), filepath.Join(e.work, "env-link.txt"))
	syscall.Mkfifo(filepath.Join(e.work, "pipe"), 0o600)
	for p, ok := range map[string]bool{
		"chart.png":                          true,
		filepath.Join(cache, "in.jpg"):       true,
		filepath.Join(e.allowed, "s.txt"):    true,
		".env":                               false,
		"env-link.txt":                       false,
		"bot.token":                          false,
		"innocent.txt":                       false,
		filepath.Join(e.home, "local.token"): false,
		filepath.Join(e.home, "state.db"):    false,
		filepath.Join(e.home, "config.yaml"): false,
		"../other/secret.txt":                false,
		"pipe":                               false,
		filepath.Join(cache, "..", "..", "state.db"):  false,
		filepath.Join(e.home, "media", "s2", "x.jpg"): false,
	} {
		f, _, err := e.paths.OpenForSend(p, cache)
		if f != nil {
			f.Close()
		}
		if (err == nil) != ok {
			t.Errorf("OpenForSend(%s) err = %v; want allowed=%v", p, err, ok)
		}
	}
	// the tool queues the file for the answer
	m := toolThenText("send_file", map[string]any{"path": "chart.png", "caption": "the chart"})
	a := newAgent(m, hooks.NewRegistry(nil), &SendFile{Paths: e.paths})
	res, err := a.Run(context.Background(), "send the chart", Options{Turn: Turn{ChatID: "c1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Path != filepath.Join(e.work, "chart.png") || res.Files[0].Caption != "the chart" {
		t.Fatalf("Files = %+v", res.Files)
	}
	// a run with no chat (a cron job, BOOT.md) is told it cannot send
	m = toolThenText("send_file", map[string]any{"path": "chart.png"})
	res, err = newAgent(m, hooks.NewRegistry(nil), &SendFile{Paths: e.paths}).Run(context.Background(), "send", Options{Turn: Turn{Platform: "cron"}})
	if err != nil || len(res.Files) != 0 || !strings.Contains(res.FinalResponse, "no chat to send a file to") {
		t.Fatalf("without a chat: %+v, %v", res, err)
	}
}

func TestDelegatedSendFileGoesWithTheParentsAnswer(t *testing.T) {
	e := newFileEnv(t)
	os.WriteFile(filepath.Join(e.work, "out.txt"), []byte("x"), 0o644)
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == openai.ChatMessageRoleUser && last.Content == "parent":
			return callResp("d1", "delegate_task", map[string]any{"goal": "child"}), nil
		case last.Role == openai.ChatMessageRoleUser && last.Content == "child":
			return callResp("s1", "send_file", map[string]any{"path": "out.txt"}), nil
		}
		return textResp("done"), nil
	}}
	a := newAgent(m, hooks.NewRegistry(nil), &SendFile{Paths: e.paths})
	a.Tools.Add(&Delegate{Agent: a})
	res, err := a.Run(context.Background(), "parent", Options{Turn: Turn{ChatID: "c1", SessionID: "s"}})
	if err != nil || len(res.Files) != 1 || res.Files[0].Path != filepath.Join(e.work, "out.txt") {
		t.Fatalf("Files = %+v, %v", res.Files, err)
	}
}

func TestTranscriberAgainstFakeServer(t *testing.T) {
	srv := agenttest.New(t)
	srv.Transcript = "  buy milk  "
	p := filepath.Join(t.TempDir(), "voice.ogg")
	os.WriteFile(p, []byte("OggS fake audio"), 0o600)
	got, err := NewTranscriber(srv.BaseURL(), "sk-stt", "whisper-1", nil).Transcribe(context.Background(), p)
	if err != nil || got != "buy milk" {
		t.Fatalf("Transcribe = %q, %v", got, err)
	}
	tr := srv.Transcriptions()
	if len(tr) != 1 || tr[0].Model != "whisper-1" || tr[0].FileName != "voice.ogg" || string(tr[0].Data) != "OggS fake audio" || tr[0].Authorization != "Bearer sk-stt" {
		t.Fatalf("server saw %+v", tr)
	}
}
