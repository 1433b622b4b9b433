package telegram_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/agent"
)

var alice = telegramtest.User{ID: 42, UserName: "alice", First: "Alice"}

// A photo sent with no caption is a message with empty text and one
// image, the largest size's file_id as its Ref.
func TestInboundPhotoWithoutCaption(t *testing.T) {
	srv := newFake(t)
	sk := newSink()
	run(t, newAdapter(srv, nil), sk)
	f := srv.AddFile("photos/file_1.jpg", []byte("\xff\xd8\xff jpeg bytes"))
	srv.DMMedia(alice, telegramtest.Media{Kind: "photo", File: f})
	m := sk.next(t)
	if m.Text != "" {
		t.Errorf("text = %q, want empty", m.Text)
	}
	want := herald.Media{Type: herald.MediaImage, MIME: "image/jpeg", Name: "photo.jpg", Size: int64(f.Size), Ref: f.ID}
	if len(m.Media) != 1 || m.Media[0] != want {
		t.Fatalf("media = %+v, want [%+v]", m.Media, want)
	}
}

// Voice notes and documents without captions reach the sink too; the
// caption, when there is one, is the text.
func TestInboundVoiceAndDocument(t *testing.T) {
	srv := newFake(t)
	sk := newSink()
	run(t, newAdapter(srv, nil), sk)
	voice := srv.AddFile("voice/file_2.oga", []byte("OggS voice"))
	doc := srv.AddFile("documents/file_3.pdf", []byte("%PDF-1.7"))
	srv.DMMedia(alice, telegramtest.Media{Kind: "voice", File: voice, MIME: "audio/ogg"})
	srv.DMMedia(alice, telegramtest.Media{Kind: "document", File: doc, Name: "notes.pdf", MIME: "application/pdf", Caption: "read this"})
	if m := sk.next(t); m.Text != "" || len(m.Media) != 1 || m.Media[0].Type != herald.MediaVoice || m.Media[0].Name != "voice.ogg" || m.Media[0].Ref != voice.ID {
		t.Errorf("voice message = %+v", m)
	}
	if m := sk.next(t); m.Text != "read this" || len(m.Media) != 1 || m.Media[0].Type != herald.MediaDocument || m.Media[0].Name != "notes.pdf" || m.Media[0].MIME != "application/pdf" {
		t.Errorf("document message = %+v", m)
	}
}

// syncBuffer is a log destination tests read while the adapter writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logged returns an adapter whose debug-level log goes to the buffer.
func logged(srv *telegramtest.Server) (*telegram.Adapter, *syncBuffer) {
	logs := &syncBuffer{}
	ad := newAdapter(srv, func(c *telegram.Config) {
		c.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	return ad, logs
}

func readAll(t *testing.T, rc io.ReadCloser, err error) []byte {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An inbound photo's bytes come back through Fetch (getFile, then the
// file endpoint beside the configured api_endpoint), and the token is in
// none of the Media, the log, or the errors of failed fetches.
func TestFetchAndTokenNeverLeaks(t *testing.T) {
	srv := newFake(t)
	ad, logs := logged(srv)
	sk := newSink()
	run(t, ad, sk)
	data := []byte("\xff\xd8\xff\xe0 a photo")
	f := srv.AddFile("photos/file 1.jpg", data)
	srv.DMMedia(alice, telegramtest.Media{Kind: "photo", File: f})
	m := sk.next(t)
	ctx := ctxT(t)
	rc, err := ad.Fetch(ctx, m.Media[0])
	if got := readAll(t, rc, err); !bytes.Equal(got, data) {
		t.Errorf("Fetch = %q, want %q", got, data)
	}
	if n := srv.Attempts("download"); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}

	var errs []error
	_, err = ad.Fetch(ctx, herald.Media{Type: herald.MediaImage, Ref: "no-such-file"})
	errs = append(errs, err)
	srv.Fail("download", 1, telegramtest.Failure{Code: 404, Description: "Not Found"})
	_, err = ad.Fetch(ctx, m.Media[0])
	errs = append(errs, err)
	srv.Fail("download", 1, telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
	_, err = ad.Fetch(ctx, m.Media[0])
	errs = append(errs, err)
	// two: the client retries a GET once when a kept-alive connection
	// breaks
	srv.Drop("download", 2)
	_, err = ad.Fetch(ctx, m.Media[0])
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Fatalf("fetch %d: no error", i)
		}
		if strings.Contains(err.Error(), srv.Token()) || strings.Contains(err.Error(), "/file/bot") {
			t.Errorf("fetch %d: error carries the URL or token: %v", i, err)
		}
		want := f.ID
		if i == 0 {
			want = "no-such-file"
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("fetch %d: error does not name the file_id %s: %v", i, want, err)
		}
	}
	var tmp *adapters.TemporaryError
	for _, i := range []int{2, 3} {
		if !errors.As(errs[i], &tmp) {
			t.Errorf("fetch %d: %T, want a TemporaryError for a 502 or a lost connection", i, errs[i])
		}
	}
	js, _ := json.Marshal(m)
	for what, s := range map[string]string{"media": string(js), "log": logs.String()} {
		if strings.Contains(s, srv.Token()) {
			t.Errorf("the %s carries the token:\n%s", what, s)
		}
	}
}

// A file the Bot API will not let a bot download (over 20 MB) fails with
// ErrTooLarge: at once when the update declared its size, after getFile
// when it did not.
func TestFetchOversize(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	ctx := ctxT(t)
	big := srv.AddLargeFile("videos/file_9.mp4", telegram.MaxDownloadSize+1)
	_, err := ad.Fetch(ctx, herald.Media{Type: herald.MediaVideo, Ref: big.ID, Size: int64(big.Size)})
	if !errors.Is(err, telegram.ErrTooLarge) || srv.Attempts("getFile") != 0 {
		t.Errorf("declared oversize: err %v after %d getFile, want ErrTooLarge and no request", err, srv.Attempts("getFile"))
	}
	_, err = ad.Fetch(ctx, herald.Media{Type: herald.MediaVideo, Ref: big.ID})
	if !errors.Is(err, telegram.ErrTooLarge) || srv.Attempts("download") != 0 {
		t.Errorf("undeclared oversize: err %v after %d downloads, want ErrTooLarge from getFile", err, srv.Attempts("download"))
	}
	if err != nil && !strings.Contains(err.Error(), "20 MB") {
		t.Errorf("the error does not state the limit: %v", err)
	}
}

// Through the gateway, a photo with no caption is answered (the echo
// model answers even an empty text).
func TestGatewayAnswersPhotoWithoutCaption(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), agent.Echo{})
	f := srv.AddFile("photos/file_1.jpg", []byte("\xff\xd8\xff"))
	srv.DMMedia(alice, telegramtest.Media{Kind: "photo", File: f})
	calls, err := srv.WaitCalls(ctxT(t), "sendMessage", 1)
	if err != nil {
		t.Fatal(err)
	}
	if calls[0].ChatID != "42" {
		t.Errorf("reply = %+v", calls[0])
	}
}
