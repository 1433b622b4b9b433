package telegram_test

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
)

// pngFile writes a w×h PNG and returns its path and bytes.
func pngFile(t *testing.T, w, h int) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "chart.png", buf.Bytes()), buf.Bytes()
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Each kind goes out with its own method, into the target's chat and
// forum topic, as a reply, with the caption formatted as text is.
func TestSendFileMethods(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	if ad.MaxFileSize() != 50<<20 {
		t.Errorf("MaxFileSize = %d, want 50 MB", ad.MaxFileSize())
	}
	img, imgData := pngFile(t, 64, 48)
	other := []byte("OggS fake bytes")
	for _, tc := range []struct {
		kind, mime, method, field string
	}{
		{herald.MediaImage, "image/png", "sendPhoto", "photo"},
		{herald.MediaVoice, "audio/ogg", "sendVoice", "voice"},
		{herald.MediaAudio, "audio/mpeg", "sendAudio", "audio"},
		{herald.MediaVideo, "video/mp4", "sendVideo", "video"},
		{herald.MediaDocument, "application/pdf", "sendDocument", "document"},
		{herald.MediaImage, "image/gif", "sendDocument", "document"},
	} {
		t.Run(tc.method+" "+tc.mime, func(t *testing.T) {
			path, data := img, imgData
			if tc.kind != herald.MediaImage {
				path, data = writeFile(t, "local-name.bin", other), other
			}
			before := len(srv.Calls(tc.method))
			to := herald.Target{Platform: herald.PlatformTelegram, ChatID: "-1001", ThreadID: "7"}
			sent, err := ad.SendFile(ctxT(t), to, adapters.OutgoingFile{Path: path, Name: "shown." + tc.field, MIME: tc.mime, Type: tc.kind,
				Caption: "here is **the file**", ReplyTo: "55"})
			if err != nil {
				t.Fatal(err)
			}
			calls := srv.Calls(tc.method)
			if len(calls) != before+1 {
				t.Fatalf("%d %s calls, want %d", len(calls), tc.method, before+1)
			}
			c := calls[len(calls)-1]
			if c.ChatID != "-1001" || c.ThreadID != "7" || c.ReplyTo != "55" || c.FileField != tc.field || c.FileName != "shown."+tc.field ||
				!bytes.Equal(c.File, data) || c.Caption != "here is <b>the file</b>" || c.ParseMode != "HTML" || sent.MessageID != c.MessageID {
				t.Errorf("recorded %+v (sent %+v)", c, sent)
			}
		})
	}
}

// A photo Telegram refuses (here for its dimensions) goes again as a
// document, with its caption.
func TestSendFilePhotoFallsBackToDocument(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	path, data := pngFile(t, 2100, 100) // a ratio over 20
	_, err := ad.SendFile(ctxT(t), herald.Target{ChatID: "42"}, adapters.OutgoingFile{Path: path, Name: "wide.png", Type: herald.MediaImage, MIME: "image/png", Caption: "wide"})
	if err != nil {
		t.Fatal(err)
	}
	docs := srv.Calls("sendDocument")
	if srv.Attempts("sendPhoto") != 1 || len(srv.Calls("sendPhoto")) != 0 || len(docs) != 1 || !bytes.Equal(docs[0].File, data) || docs[0].Caption != "wide" {
		t.Errorf("sendPhoto attempts %d, documents %+v", srv.Attempts("sendPhoto"), docs)
	}
}

// A voice note to a user who does not take voice messages goes as a
// document.
func TestSendFileVoiceForbiddenFallsBackToDocument(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	path := writeFile(t, "note.ogg", []byte("OggS"))
	srv.Fail("sendVoice", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: VOICE_MESSAGES_FORBIDDEN"})
	if _, err := ad.SendFile(ctxT(t), herald.Target{ChatID: "42"}, adapters.OutgoingFile{Path: path, MIME: "audio/ogg"}); err != nil {
		t.Fatal(err)
	}
	if docs := srv.Calls("sendDocument"); srv.Attempts("sendVoice") != 1 || len(docs) != 1 || docs[0].FileName != "note.ogg" {
		t.Errorf("sendVoice attempts %d, documents %+v", srv.Attempts("sendVoice"), docs)
	}
}

// A caption over 1024 units goes as a message of its own after the file.
func TestSendFileLongCaption(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	path := writeFile(t, "notes.txt", []byte("notes"))
	long := strings.Repeat("word ", 300) // 1500 units
	_, err := ad.SendFile(ctxT(t), herald.Target{ChatID: "42", ThreadID: "3"}, adapters.OutgoingFile{Path: path, Type: herald.MediaDocument, Caption: long})
	if err != nil {
		t.Fatal(err)
	}
	all := srv.Calls("")
	if len(all) != 2 || all[0].Method != "sendDocument" || all[0].Caption != "" || all[0].FileName != "notes.txt" ||
		all[1].Method != "sendMessage" || all[1].Text != strings.TrimSpace(long) && all[1].Text != long || all[1].ThreadID != "3" {
		t.Errorf("calls = %+v", all)
	}
}

// A caption whose markup Telegram refuses is sent again plain; a 429 is
// a RetryAfterError, as for text; an error envelope is a plain error.
func TestSendFileErrors(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	path := writeFile(t, "a.txt", []byte("a"))
	to := herald.Target{ChatID: "42"}
	file := adapters.OutgoingFile{Path: path, Type: herald.MediaDocument, Caption: "**a**"}

	srv.Fail("sendDocument", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: can't parse entities: Unsupported start tag"})
	if _, err := ad.SendFile(ctxT(t), to, file); err != nil {
		t.Fatal(err)
	}
	if c := srv.Calls("sendDocument"); len(c) != 1 || c[0].ParseMode != "" || c[0].Caption != "**a**" {
		t.Errorf("after a markup refusal: %+v", c)
	}

	srv.RateLimit("sendDocument", 1, 7)
	_, err := ad.SendFile(ctxT(t), to, file)
	var ra *adapters.RetryAfterError
	if !errors.As(err, &ra) || ra.After != 7*time.Second {
		t.Errorf("429: err = %v, want RetryAfterError 7s", err)
	}

	srv.Fail("sendVoice", 1, telegramtest.Failure{Code: 403, Description: "Forbidden: bot was blocked by the user"})
	_, err = ad.SendFile(ctxT(t), to, adapters.OutgoingFile{Path: path, Type: herald.MediaVoice})
	if err == nil || !strings.Contains(err.Error(), "blocked") || adapters.IsFatal(err) || strings.Contains(err.Error(), srv.Token()) {
		t.Errorf("403: err = %v", err)
	}
	srv.Fail("sendAudio", 1, telegramtest.Failure{Code: 413, Description: "Request Entity Too Large"})
	if _, err = ad.SendFile(ctxT(t), to, adapters.OutgoingFile{Path: path, Type: herald.MediaAudio}); !errors.Is(err, telegram.ErrTooLarge) {
		t.Errorf("413: err = %v, want ErrTooLarge", err)
	}
	srv.Drop("sendVideo", 1)
	_, err = ad.SendFile(ctxT(t), to, adapters.OutgoingFile{Path: path, Type: herald.MediaVideo})
	var tmp *adapters.TemporaryError
	if !errors.As(err, &tmp) || strings.Contains(err.Error(), srv.Token()) {
		t.Errorf("lost connection: err = %v, want a TemporaryError without the token", err)
	}
	if n := srv.Attempts("sendDocument"); n != 3 {
		t.Errorf("sendDocument attempts = %d, want 3 (refused, plain, rate limited)", n)
	}
}

// A file over 50 MB is refused with ErrTooLarge before any request.
func TestSendFileOversize(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	path := filepath.Join(t.TempDir(), "big.bin")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// sparse: no 50 MB written
	if err := f.Truncate(telegram.MaxUploadSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ad.SendFile(ctxT(t), herald.Target{ChatID: "42"}, adapters.OutgoingFile{Path: path, Type: herald.MediaVideo})
	if !errors.Is(err, telegram.ErrTooLarge) || srv.Attempts("sendVideo") != 0 || !strings.Contains(err.Error(), "50 MB") {
		t.Errorf("err = %v after %d requests, want ErrTooLarge naming 50 MB and no request", err, srv.Attempts("sendVideo"))
	}
}
