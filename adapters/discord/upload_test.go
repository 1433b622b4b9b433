package discord_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/discord"
	"github.com/heraldgw/herald/adapters/discord/discordtest"
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSendFile uploads through discordgo's multipart message create into
// the fake; no gateway connection is needed for REST.
func TestSendFile(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	a := discord.New(discord.Config{Token: "tok", APIBase: srv.APIBase()})
	ctx := waitCtx(t)
	dm := herald.Target{Platform: herald.PlatformDiscord, ChatID: "dm-42"}
	chart := bytes.Repeat([]byte("\x89PNG chart "), 100)
	chartPath := writeFile(t, "chart.png", chart)

	if got := a.MaxFileSize(); got != 10<<20 {
		t.Errorf("MaxFileSize = %d, want 10 MiB", got)
	}
	if got := discord.New(discord.Config{MaxUpload: 25 << 20}).MaxFileSize(); got != 25<<20 {
		t.Errorf("MaxFileSize with MaxUpload 25 MiB = %d", got)
	}

	last := func(t *testing.T) discordtest.Message {
		t.Helper()
		sent := srv.Sent()
		if len(sent) == 0 {
			t.Fatal("nothing sent")
		}
		return sent[len(sent)-1]
	}

	t.Run("caption and reply in a DM", func(t *testing.T) {
		sent, err := a.SendFile(ctx, dm, adapters.OutgoingFile{Path: chartPath, Name: "chart.png", MIME: "image/png", Type: herald.MediaImage,
			Size: int64(len(chart)), Caption: "the chart @everyone", ReplyTo: "500"})
		if err != nil {
			t.Fatal(err)
		}
		m := last(t)
		if m.ID != sent.MessageID || m.ChannelID != "dm-42" || m.Content != "the chart @everyone" || m.ReplyTo != "500" || len(m.Files) != 1 {
			t.Fatalf("sent %+v (id %q)", m, sent.MessageID)
		}
		f := m.Files[0]
		if f.Field != "files[0]" || f.Name != "chart.png" || f.ContentType != "image/png" || !bytes.Equal(f.Data, chart) {
			t.Errorf("file %s %q %s, %d bytes", f.Field, f.Name, f.ContentType, len(f.Data))
		}
		golden(t, "upload_reply.json", m.Body)
	})
	t.Run("into a thread, no caption", func(t *testing.T) {
		if _, err := a.SendFile(ctx, herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1", ThreadID: "t1"},
			adapters.OutgoingFile{Path: chartPath, MIME: "image/png"}); err != nil {
			t.Fatal(err)
		}
		if m := last(t); m.ChannelID != "t1" || m.Content != "" || len(m.Files) != 1 || m.Files[0].Name != "chart.png" {
			t.Errorf("sent %+v, want the file in thread t1 named after its path", m)
		}
	})
	t.Run("a name that is a path", func(t *testing.T) {
		if _, err := a.SendFile(ctx, dm, adapters.OutgoingFile{Path: chartPath, Name: "../../.env\r\nX-Evil: 1"}); err != nil {
			t.Fatal(err)
		}
		if name := last(t).Files[0].Name; strings.ContainsAny(name, "/\\\r\n") || !strings.HasSuffix(name, "X-Evil: 1") {
			t.Errorf("uploaded as %q", name)
		}
	})
	t.Run("caption over 2000 characters: file, then text", func(t *testing.T) {
		var b strings.Builder
		for i := 0; utf8.RuneCountInString(b.String()) < 4500; i++ {
			b.WriteString("é line of the caption\n")
		}
		caption := strings.TrimSpace(b.String())
		before := len(srv.Sent())
		sent, err := a.SendFile(ctx, dm, adapters.OutgoingFile{Path: chartPath, Caption: caption})
		if err != nil {
			t.Fatal(err)
		}
		msgs := srv.Sent()[before:]
		if len(msgs) != 4 || msgs[0].ID != sent.MessageID || len(msgs[0].Files) != 1 || msgs[0].Content != "" {
			t.Fatalf("%d messages; want the file alone, then 3 parts of text", len(msgs))
		}
		var parts []string
		for _, m := range msgs[1:] {
			if len(m.Files) != 0 || m.ChannelID != "dm-42" || utf8.RuneCountInString(m.Content) > 2000 {
				t.Errorf("text part %+v", m)
			}
			parts = append(parts, m.Content)
		}
		if strings.Join(parts, "\n") != caption {
			t.Error("the text parts, joined, are not the caption")
		}
	})

	t.Run("a long caption with nowhere to break", func(t *testing.T) {
		caption := strings.Repeat("é", 4100)
		before := len(srv.Sent())
		if _, err := a.SendFile(ctx, dm, adapters.OutgoingFile{Path: chartPath, Caption: caption}); err != nil {
			t.Fatal(err)
		}
		var joined strings.Builder
		msgs := srv.Sent()[before:]
		for _, m := range msgs[1:] {
			joined.WriteString(m.Content)
		}
		if len(msgs) != 4 || utf8.RuneCountInString(msgs[1].Content) != 2000 || joined.String() != caption {
			t.Errorf("%d messages, first part %d characters; want the file, then 2000+2000+100", len(msgs), utf8.RuneCountInString(msgs[1].Content))
		}
	})

	big := writeFile(t, "big.bin", make([]byte, 10<<20+1))
	t.Run("over MaxFileSize", func(t *testing.T) {
		before := len(srv.Sent())
		_, err := a.SendFile(ctx, dm, adapters.OutgoingFile{Path: big})
		if !errors.Is(err, discord.ErrUploadTooLarge) || !strings.Contains(err.Error(), `"big.bin"`) {
			t.Errorf("err = %v, want ErrUploadTooLarge naming big.bin", err)
		}
		if len(srv.Sent()) != before {
			t.Error("something was sent")
		}
	})
	t.Run("over the server's limit", func(t *testing.T) {
		boosted := discord.New(discord.Config{Token: "tok", APIBase: srv.APIBase(), MaxUpload: 25 << 20})
		_, err := boosted.SendFile(ctx, dm, adapters.OutgoingFile{Path: big})
		var tmp *adapters.TemporaryError
		var ra *adapters.RetryAfterError
		if err == nil || !strings.Contains(err.Error(), "413") || errors.As(err, &tmp) || errors.As(err, &ra) || adapters.IsFatal(err) {
			t.Errorf("err = %v, want a plain 413 error", err)
		}
	})
	t.Run("429", func(t *testing.T) {
		srv.RateLimitSends(1, 250*time.Millisecond)
		before := len(srv.Sent())
		_, err := a.SendFile(ctx, dm, adapters.OutgoingFile{Path: chartPath, Caption: "later"})
		var ra *adapters.RetryAfterError
		if !errors.As(err, &ra) || ra.After != 250*time.Millisecond {
			t.Errorf("err = %v, want RetryAfterError of 250ms", err)
		}
		if len(srv.Sent()) != before {
			t.Error("a rate-limited upload was recorded")
		}
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := a.SendFile(ctx, dm, adapters.OutgoingFile{Path: filepath.Join(t.TempDir(), "nope.pdf"), Name: "nope.pdf"})
		if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.pdf") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a directory", func(t *testing.T) {
		if _, err := a.SendFile(ctx, dm, adapters.OutgoingFile{Path: t.TempDir()}); err == nil {
			t.Error("a directory was uploaded")
		}
	})
}
