package slack_test

// Files in and out, with the real slack-go client against slacktest:
// file shares become herald.Media (Socket Mode and the Events API), Fetch
// reads url_private with the bot token and sends it nowhere else, and
// SendFile uploads with files.getUploadURLExternal / upload /
// files.completeUploadExternal.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/slack"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
)

var (
	_ adapters.Fetcher    = (*slack.Adapter)(nil)
	_ adapters.FileSender = (*slack.Adapter)(nil)
)

// pngBytes is the start of a PNG file: enough for a content sniffer.
var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

func TestFileShareReachesSinkWithMedia(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	sink := make(chanSink, 8)
	run(t, ad, sink)

	photo := srv.AddFile("photo.png", "image/png", pngBytes)
	clip := srv.AddFile("audio_message.webm", "audio/webm", []byte("webm audio"))
	clip.MediaDisplayType = "audio"
	doc := srv.AddFile("report.pdf", "application/pdf", []byte("%PDF-1.4"))

	// a captionless share in a DM: text "", three files
	in := srv.ShareFiles("DU1", "im", "U1", "", photo, clip, doc)
	m := sink.next(t)
	if m.ID != in.TS || m.Text != "" || m.Source.ChatType != herald.ChatDM {
		t.Fatalf("message = %+v", m)
	}
	want := []herald.Media{
		{Type: herald.MediaImage, MIME: "image/png", Name: "photo.png", Size: int64(len(pngBytes)), URL: photo.URLPrivateDownload, Ref: photo.ID},
		{Type: herald.MediaVoice, MIME: "audio/webm", Name: "audio_message.webm", Size: 10, URL: clip.URLPrivateDownload, Ref: clip.ID},
		{Type: herald.MediaDocument, MIME: "application/pdf", Name: "report.pdf", Size: 8, URL: doc.URLPrivateDownload, Ref: doc.ID},
	}
	if !mediaEqual(m.Media, want) {
		t.Errorf("media = %+v\nwant    %+v", m.Media, want)
	}

	// a share with a caption in a channel thread; the mention is removed
	// from the text and the file still arrives
	ev := srv.FileShareEvent("C1", "channel", "U2", "<@"+srv.BotUserID()+"> look at this", "1699999999.000001", photo)
	srv.Inject(ev)
	m = sink.next(t)
	if m.Text != "look at this" || !m.Mentioned || m.Source.ThreadID != "1699999999.000001" || len(m.Media) != 1 || m.Media[0].Ref != photo.ID {
		t.Errorf("captioned share = %+v", m)
	}

	// an ordinary message event (no subtype) carrying files, and an
	// app_mention carrying files
	plain := srv.MessageEvent("DU1", "im", "U1", "see attached", "")
	plain["files"] = []any{doc.Object()}
	srv.Inject(plain)
	if m = sink.next(t); m.Text != "see attached" || len(m.Media) != 1 || m.Media[0].Ref != doc.ID {
		t.Errorf("message with files = %+v", m)
	}
	mention := srv.MentionEvent("C1", "U2", "this one")
	mention["files"] = []any{photo.Object()}
	srv.Inject(mention)
	if m = sink.next(t); m.Text != "this one" || len(m.Media) != 1 || m.Media[0].Type != herald.MediaImage {
		t.Errorf("app_mention with files = %+v", m)
	}
}

func mediaEqual(a, b []herald.Media) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestFileShareOverEventsAPI(t *testing.T) {
	srv := newFake(t)
	sink := make(chanSink, 8)
	_, url := runEvents(t, srv, sink)
	f := srv.AddFile("notes.txt", "text/plain", []byte("hello"))
	_, body := srv.Callback(srv.FileShareEvent("DU7", "im", "U7", "", "", f))
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, url, bytes.NewReader(body))
	slacktest.Sign(req.Header, signingSecret, time.Now(), body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	m := sink.next(t)
	want := []herald.Media{{Type: herald.MediaDocument, MIME: "text/plain", Name: "notes.txt", Size: 5, URL: f.URLPrivateDownload, Ref: f.ID}}
	if !mediaEqual(m.Media, want) || m.Text != "" {
		t.Errorf("message = %+v", m)
	}
}

func TestFetch(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	f := srv.AddFile("photo.png", "image/png", pngBytes)
	for _, u := range []string{f.URLPrivateDownload, f.URLPrivate} {
		rc, err := ad.Fetch(ctxT(t), herald.Media{Type: herald.MediaImage, MIME: "image/png", URL: u, Ref: f.ID})
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(b, pngBytes) {
			t.Fatalf("Fetch(%s) = %q, %v", u, b, err)
		}
	}
	reqs := srv.FileRequests()
	if len(reqs) != 2 {
		t.Fatalf("file requests = %+v", reqs)
	}
	for _, r := range reqs {
		if r.Authorization != "Bearer "+botToken || !r.Authorized {
			t.Errorf("request %s carried Authorization %q", r.Path, r.Authorization)
		}
	}
}

// recorder is a foreign host: it records the Authorization header of
// every request it gets.
type recorder struct {
	mu    sync.Mutex
	auths []string
	srv   *httptest.Server
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.auths = append(r.auths, req.Header.Get("Authorization"))
		r.mu.Unlock()
		if h != nil {
			h(w, req)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(pngBytes)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.auths...)
}

func TestFetchRefusesForeignHosts(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	evil := newRecorder(t, nil)
	fakeHost := strings.TrimPrefix(srv.URL(), "http://")
	for _, u := range []string{
		evil.srv.URL + "/files-pri/T1-F1/x.png",
		"https://evil.example/files-pri/T1-F1/x.png",
		"http://files.slack.com/files-pri/T1-F1/x.png",               // not https
		"https://files.slack.com.evil.example/files-pri/T1-F1/x.png", // a suffix, not the host
		"https://files.slack.com@evil.example/files-pri/T1-F1/x.png",
		"https://user:pw@files.slack.com/files-pri/T1-F1/x.png",
		"https://" + fakeHost + "/files-pri/T1-F1/x.png", // the fake's host over another scheme
		"//evil.example/x.png",
		"/files-pri/T1-F1/x.png",
		"",
	} {
		_, err := ad.Fetch(ctxT(t), herald.Media{Type: herald.MediaImage, URL: u, Ref: "F1"})
		if err == nil {
			t.Errorf("Fetch(%q) succeeded", u)
			continue
		}
		if !strings.Contains(err.Error(), "F1") || strings.Contains(err.Error(), botToken) {
			t.Errorf("Fetch(%q) error %q should name the file and not the token", u, err)
		}
	}
	if got := evil.requests(); len(got) != 0 {
		t.Errorf("the foreign host got %d requests: %q", len(got), got)
	}
}

// TestFetchRedirectKeepsTheToken: a file host that redirects elsewhere
// (Slack redirects to the workspace's sign-in page) does not take the
// token with it, and the answer is reported as an access problem.
func TestFetchRedirectKeepsTheToken(t *testing.T) {
	srv := newFake(t)
	evil := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html>sign in</html>")
	})
	files := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil.srv.URL+"/?redir="+r.URL.Path, http.StatusFound)
	})
	ad := newAdapter(srv, func(c *slack.Config) { c.FilesURL = files.srv.URL })
	_, err := ad.Fetch(ctxT(t), herald.Media{Type: herald.MediaImage, MIME: "image/png", URL: files.srv.URL + "/files-pri/T1-F9/x.png", Ref: "F9"})
	if err == nil || !strings.Contains(err.Error(), "F9") || !strings.Contains(err.Error(), "sign-in") {
		t.Errorf("err = %v, want a sign-in error naming F9", err)
	}
	if got := files.requests(); len(got) != 1 || got[0] != "Bearer "+botToken {
		t.Errorf("file host got %q", got)
	}
	for _, a := range evil.requests() {
		if a != "" {
			t.Errorf("the redirect target got Authorization %q", a)
		}
	}
}

// TestFetchWithoutAccess: a token that cannot read the file gets Slack's
// sign-in page (HTML, status 200): Fetch reports that, not the page as
// the file.
func TestFetchWithoutAccess(t *testing.T) {
	srv := newFake(t)
	f := srv.AddFile("photo.png", "image/png", pngBytes)
	ad := newAdapter(srv, func(c *slack.Config) { c.BotToken = "xoxb-some-other-workspace" })
	_, err := ad.Fetch(ctxT(t), herald.Media{Type: herald.MediaImage, MIME: "image/png", URL: f.URLPrivateDownload, Ref: f.ID})
	if err == nil || !strings.Contains(err.Error(), f.ID) || !strings.Contains(err.Error(), "files:read") || strings.Contains(err.Error(), "xoxb-") {
		t.Errorf("err = %v, want an access error naming %s and the files:read scope, without the token", err, f.ID)
	}
	// an HTML file the bot may read is served as it is
	page := srv.AddFile("page.html", "text/html", []byte("<p>hi</p>"))
	ok := newAdapter(srv)
	rc, err := ok.Fetch(ctxT(t), herald.Media{Type: herald.MediaDocument, MIME: "text/html", URL: page.URLPrivate, Ref: page.ID})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "<p>hi</p>" {
		t.Errorf("html file = %q", b)
	}
}

func TestFetchLimits(t *testing.T) {
	srv := newFake(t)
	big := srv.AddFile("big.bin", "application/octet-stream", bytes.Repeat([]byte("x"), 4096))
	ad := newAdapter(srv, func(c *slack.Config) { c.FetchLimit = 1000 })
	rc, err := ad.Fetch(ctxT(t), herald.Media{Type: herald.MediaDocument, URL: big.URLPrivate, Ref: big.ID})
	if err == nil {
		// the ceiling may only show while reading
		_, err = io.ReadAll(rc)
		rc.Close()
	}
	if err == nil || !strings.Contains(err.Error(), big.ID) || !strings.Contains(err.Error(), "1000") {
		t.Errorf("err = %v, want the ceiling named for %s", err, big.ID)
	}

	srv.FailFileNext(1, slacktest.Failure{Status: http.StatusTooManyRequests, RetryAfter: 3})
	_, err = ad.Fetch(ctxT(t), herald.Media{URL: big.URLPrivate, Ref: big.ID})
	var ra *adapters.RetryAfterError
	if !errors.As(err, &ra) || ra.After != 3*time.Second {
		t.Errorf("429 err = %v, want RetryAfterError 3s", err)
	}
	srv.FailFileNext(1, slacktest.Failure{Status: http.StatusNotFound, Error: "gone"})
	if _, err = ad.Fetch(ctxT(t), herald.Media{URL: big.URLPrivate, Ref: big.ID}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404 err = %v", err)
	}
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSendFile(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	if got := ad.MaxFileSize(); got != 1<<30 {
		t.Errorf("MaxFileSize = %d, want 1 GiB", got)
	}
	path := writeTemp(t, "chart.png", pngBytes)

	// in a channel thread, with a Markdown caption
	sent, err := ad.SendFile(ctxT(t), herald.Target{Platform: herald.PlatformSlack, ChatID: "C1", ThreadID: "1700000000.000100"},
		adapters.OutgoingFile{Path: path, Name: "chart.png", MIME: "image/png", Type: herald.MediaImage, Size: int64(len(pngBytes)), Caption: "the **chart** <3"})
	if err != nil {
		t.Fatal(err)
	}
	// in a DM, no caption, the name taken from the path
	if _, err := ad.SendFile(ctxT(t), herald.Target{Platform: herald.PlatformSlack, ChatID: "DU1"}, adapters.OutgoingFile{Path: path}); err != nil {
		t.Fatal(err)
	}
	ups, err := srv.WaitUploads(ctxT(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	u := ups[0]
	if u.Channel != "C1" || u.ThreadTS != "1700000000.000100" || u.InitialComment != "the *chart* &lt;3" || u.Name != "chart.png" || !bytes.Equal(u.Data, pngBytes) || sent.MessageID != u.FileID {
		t.Errorf("upload = %+v (sent %+v)", u, sent)
	}
	if u := ups[1]; u.Channel != "DU1" || u.ThreadTS != "" || u.InitialComment != "" || u.Name != "chart.png" {
		t.Errorf("DM upload = %+v", u)
	}
}

func TestSendFileErrors(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	path := writeTemp(t, "a.txt", []byte("abc"))
	to := herald.Target{Platform: herald.PlatformSlack, ChatID: "C1"}

	srv.RateLimitUploadNext(1, 7)
	_, err := ad.SendFile(ctxT(t), to, adapters.OutgoingFile{Path: path})
	var ra *adapters.RetryAfterError
	if !errors.As(err, &ra) || ra.After != 7*time.Second {
		t.Errorf("429 err = %v, want RetryAfterError 7s", err)
	}
	srv.FailNext("files.completeUploadExternal", 1, slacktest.Failure{Status: http.StatusTooManyRequests, RetryAfter: 2})
	if _, err = ad.SendFile(ctxT(t), to, adapters.OutgoingFile{Path: path}); !errors.As(err, &ra) || ra.After != 2*time.Second {
		t.Errorf("429 on complete err = %v, want RetryAfterError 2s", err)
	}
	srv.FailNext("files.completeUploadExternal", 1, slacktest.Failure{Error: "not_in_channel"})
	if _, err = ad.SendFile(ctxT(t), to, adapters.OutgoingFile{Path: path}); err == nil || !strings.Contains(err.Error(), "not_in_channel") {
		t.Errorf("err = %v, want not_in_channel", err)
	}

	// over Slack's 1 GiB: refused before anything is sent (a sparse file)
	huge := filepath.Join(t.TempDir(), "huge.bin")
	fh, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(1<<30 + 1); err != nil {
		t.Skip("no sparse files here:", err)
	}
	fh.Close()
	calls := srv.Calls("files.getUploadURLExternal")
	if _, err = ad.SendFile(ctxT(t), to, adapters.OutgoingFile{Path: huge}); err == nil || !strings.Contains(err.Error(), "1 GiB") {
		t.Errorf("oversize err = %v", err)
	}
	empty := writeTemp(t, "empty.txt", nil)
	if _, err = ad.SendFile(ctxT(t), to, adapters.OutgoingFile{Path: empty}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty file err = %v", err)
	}
	if _, err = ad.SendFile(ctxT(t), herald.Target{Platform: herald.PlatformSlack}, adapters.OutgoingFile{Path: path}); err == nil {
		t.Error("no channel and no home channel: want an error")
	}
	if got := srv.Calls("files.getUploadURLExternal"); got != calls {
		t.Errorf("refused uploads still called Slack (%d calls)", got-calls)
	}
	if len(srv.Uploads()) != 0 {
		t.Errorf("uploads = %+v", srv.Uploads())
	}
}

// TestSlackConnectFileStub: in Slack Connect channels an event carries
// only the file's id (file_access: check_file_info); the Media holds the
// id and Fetch looks the URL up with files.info.
func TestSlackConnectFileStub(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	sink := make(chanSink, 8)
	run(t, ad, sink)
	f := srv.AddFile("shared.pdf", "application/pdf", []byte("%PDF-1.7 shared"))
	ev := srv.MessageEvent("C5", "channel", "U5", "from the other org", "")
	ev["subtype"] = "file_share"
	ev["files"] = []any{f.Stub()}
	srv.Inject(ev)
	m := sink.next(t)
	want := []herald.Media{{Type: herald.MediaDocument, Ref: f.ID}}
	if !mediaEqual(m.Media, want) {
		t.Fatalf("media = %+v, want %+v", m.Media, want)
	}
	rc, err := ad.Fetch(ctxT(t), m.Media[0])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "%PDF-1.7 shared" || srv.Calls("files.info") != 1 {
		t.Errorf("fetched %q with %d files.info calls", b, srv.Calls("files.info"))
	}
	if _, err := ad.Fetch(ctxT(t), herald.Media{Ref: "F404"}); err == nil || !strings.Contains(err.Error(), "F404") || !strings.Contains(err.Error(), "file_not_found") {
		t.Errorf("unknown file: err = %v", err)
	}
}
