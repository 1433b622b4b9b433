package local_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/gateway/gatewaytest"
	"github.com/heraldgw/herald/sessions"
)

type outboxPage struct {
	Status   int
	Error    string                `json:"error"`
	Messages []local.OutboxMessage `json:"messages"`
}

func (p outboxPage) texts() string {
	var s []string
	for _, m := range p.Messages {
		s = append(s, m.Text)
	}
	return strings.Join(s, "|")
}

func getOutbox(t *testing.T, h http.Handler, url, path string) outboxPage {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.Host = "127.0.0.1"
	if url != "" {
		req = httptest.NewRequestWithContext(t.Context(), "GET", url+path, nil)
		req.RequestURI = ""
	}
	req.Header.Set("Authorization", "Bearer test-token")
	var res *http.Response
	if h != nil {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		res = rec.Result()
	} else {
		var err error
		if res, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	p := outboxPage{Status: res.StatusCode}
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("GET %s: %s %s", path, res.Status, body)
	}
	return p
}

func openStore(t *testing.T, p string) *sessions.Store {
	t.Helper()
	st, err := sessions.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func send(t *testing.T, a *local.Adapter, chat, text string) string {
	t.Helper()
	s, err := a.Send(context.Background(), herald.Target{Platform: herald.PlatformLocal, ChatID: chat}, adapters.Outgoing{Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return s.MessageID
}

// A turn longer than the POST's wait: the POST answers 202 pending, and
// the reply is read from the chat's outbox by a GET that waits for it.
func TestOutboxKeepsAReplyAfterThePostGaveUp(t *testing.T) {
	model := newGateModel("slow")
	g := gatewaytest.Start(t, gatewaytest.Options{Model: model})
	if a := post(t, g.URL, "?wait=0.05", msg("c", "", "slow")); a.Status != http.StatusAccepted || a.State != adapters.StatusPending {
		t.Fatalf("POST: status %d %q, want 202 pending", a.Status, a.State)
	}
	if p := getOutbox(t, nil, g.URL, "/v1/chats/c/messages"); p.Status != 200 || p.Messages == nil || len(p.Messages) != 0 {
		t.Fatalf("before the reply: %+v", p)
	}
	got := make(chan outboxPage, 1)
	go func() { got <- getOutbox(t, nil, g.URL, "/v1/chats/c/messages?wait=60") }()
	close(model.gates["slow"])
	p := <-got
	if p.Status != 200 || p.texts() != "reply to slow" || p.Messages[0].ID == "" || p.Messages[0].CreatedAt.IsZero() {
		t.Fatalf("outbox after the turn: %+v", p)
	}
	// nothing after the last id
	if p := getOutbox(t, nil, g.URL, "/v1/chats/c/messages?after="+p.Messages[0].ID); p.Status != 200 || len(p.Messages) != 0 {
		t.Fatalf("after the last id: %+v", p)
	}
}

// The reply to a message queued behind a running turn reaches the
// outbox, after the running turn's.
func TestOutboxKeepsTheReplyToAQueuedMessage(t *testing.T) {
	model := newGateModel("first")
	g := gatewaytest.Start(t, gatewaytest.Options{Model: model})
	first := make(chan answer, 1)
	go func() { first <- post(t, g.URL, "?wait=60", msg("c", "", "first")) }()
	<-model.entered
	if a := post(t, g.URL, "?wait=20", msg("c", "", "/q second")); a.Status != http.StatusOK || a.State != adapters.StatusQueued {
		t.Fatalf("/q: status %d %q %q", a.Status, a.State, a.text())
	}
	close(model.gates["first"])
	if a := <-first; a.text() != "reply to first" {
		t.Fatalf("first: %q", a.text())
	}
	var seen []string
	after := ""
	for len(seen) < 3 {
		p := getOutbox(t, nil, g.URL, "/v1/chats/c/messages?wait=60&after="+after)
		for _, m := range p.Messages {
			seen = append(seen, m.Text)
			after = m.ID
		}
	}
	if got := strings.Join(seen, "|"); got != "Queued for the next turn.|reply to first|reply to second" {
		t.Fatalf("outbox: %q", got)
	}
}

func TestOutboxRefusesBadQueries(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{})
	long := strings.Repeat("x", local.MaxIDLength+1)
	for _, tc := range []struct{ query, why string }{
		{"?after=x", `after="x" is not a message id`},
		{"?after=-1", `after="-1" is not a message id`},
		{"?after=1.5", `after="1.5" is not a message id`},
		{"?wait=soon", `wait="soon" is not a number`},
		{"?wait=-1", "negative"},
		{"?wait=NaN", "finite"},
	} {
		if p := getOutbox(t, nil, g.URL, "/v1/chats/c/messages"+tc.query); p.Status != 400 || !strings.Contains(p.Error, tc.why) {
			t.Errorf("%s: %d %q, want 400 saying %q", tc.query, p.Status, p.Error, tc.why)
		}
	}
	if p := getOutbox(t, nil, g.URL, "/v1/chats/"+long+"/messages"); p.Status != 400 || !strings.Contains(p.Error, "257 bytes") {
		t.Errorf("long chat id: %+v", p)
	}
	if p := getOutbox(t, nil, g.URL, "/v1/chats/nobody/messages?after=99"); p.Status != 200 || p.Messages == nil || len(p.Messages) != 0 {
		t.Errorf("unknown chat: %+v", p)
	}
	// the token and the Host are checked as on every endpoint
	res, err := http.Get(g.URL + "/v1/chats/c/messages")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %s", res.Status)
	}
	h := local.New(local.Config{Token: "test-token"}).Handler(nil)
	req := httptest.NewRequest("GET", "/v1/chats/c/messages", nil)
	req.Host = "evil.example"
	req.Header.Set("Authorization", "Bearer test-token")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("foreign Host: %d", rec.Code)
	}
}

// A waiting GET answers as soon as a message is stored, and not before;
// with nothing new it answers empty once its wait is over.
func TestOutboxWaitReturnsWhenAMessageArrives(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		st := openStore(t, filepath.Join(dir, "state.db"))
		a := local.New(local.Config{Token: "test-token", Outbox: st})
		h := a.Handler(nil)
		first := send(t, a, "c", "earlier")
		start := time.Now()
		got := make(chan outboxPage, 1)
		go func() { got <- getOutbox(t, h, "", "/v1/chats/c/messages?wait=60&after="+first) }()
		stillWaiting := func(why string) {
			synctest.Wait()
			select {
			case p := <-got:
				t.Fatalf("answered %s: %+v", why, p)
			default:
			}
		}
		time.Sleep(10 * time.Second)
		stillWaiting("with nothing new")
		send(t, a, "other", "not for c")
		stillWaiting("when another chat got a message")
		send(t, a, "c", "now")
		p := <-got
		if p.Status != 200 || p.texts() != "now" || time.Since(start) != 10*time.Second {
			t.Fatalf("after %v: %+v", time.Since(start), p)
		}
		// nothing new: empty once the wait, cut to MaxMessagesWait, is over
		start = time.Now()
		p = getOutbox(t, h, "", "/v1/chats/c/messages?wait=600&after="+p.Messages[0].ID)
		if p.Status != 200 || len(p.Messages) != 0 || time.Since(start) != local.MaxMessagesWait {
			t.Fatalf("empty wait: %v, %+v", time.Since(start), p)
		}
		st.Close()
	})
}

// What was sent survives a restart; a message that cannot be stored is
// not reported sent.
func TestOutboxSurvivesARestartAndFailsSendWhenItCannotStore(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.db")
	st, err := sessions.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	a := local.New(local.Config{Token: "test-token", Outbox: st})
	send(t, a, "c", "one")
	send(t, a, "c", "two")
	st.Close()
	if _, err := a.Send(context.Background(), herald.Target{Platform: herald.PlatformLocal, ChatID: "c"}, adapters.Outgoing{Text: "lost"}); err == nil {
		t.Fatal("Send reported success with its store closed")
	}
	a = local.New(local.Config{Token: "test-token", Outbox: openStore(t, p)})
	if got := getOutbox(t, a.Handler(nil), "", "/v1/chats/c/messages"); got.texts() != "one|two" {
		t.Fatalf("after a restart: %+v", got)
	}
}

// Every stored message is a "message" event on /v1/events.
func TestOutboxMessageEvent(t *testing.T) {
	pub := &publisher{}
	a := local.New(local.Config{Token: "test-token", Events: pub.subscribe, Outbox: openStore(t, filepath.Join(t.TempDir(), "state.db"))})
	srv := httptest.NewServer(a.Handler(nil))
	t.Cleanup(srv.Close)
	res, c := subscribe(t, strings.TrimPrefix(srv.URL, "http://"), "")
	id := send(t, a, "c1", "hello there")
	ev := readEvents(t, res, c, 1)
	var data struct {
		EventType string `json:"event_type"`
		Context   struct {
			ChatID string `json:"chat_id"`
			ID     string `json:"id"`
			Text   string `json:"text"`
		} `json:"context"`
	}
	if len(ev) != 1 || ev[0].name != "message" || json.Unmarshal([]byte(ev[0].data), &data) != nil ||
		data.Context.ChatID != "c1" || data.Context.ID != id || data.Context.Text != "hello there" {
		t.Fatalf("events: %+v", ev)
	}
}

// A file's caption and reference are kept like a text message.
func TestOutboxKeepsSentFiles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "report.txt")
	if err := os.WriteFile(src, []byte("all green\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st := openStore(t, filepath.Join(dir, "state.db"))
	a := local.New(local.Config{Token: "test-token", FilesDir: filepath.Join(dir, "files"), Outbox: st})
	sendFile := func() (adapters.Sent, error) {
		return a.SendFile(context.Background(), herald.Target{Platform: herald.PlatformLocal, ChatID: "c"},
			adapters.OutgoingFile{Path: src, Name: "report.txt", MIME: "text/plain", Caption: "the nightly report"})
	}
	sent, err := sendFile()
	if err != nil {
		t.Fatal(err)
	}
	p := getOutbox(t, a.Handler(nil), "", "/v1/chats/c/messages")
	if len(p.Messages) != 1 || p.Messages[0].Text != "the nightly report" || p.Messages[0].File == nil ||
		p.Messages[0].File.ID != sent.MessageID || p.Messages[0].File.Name != "report.txt" || p.Messages[0].File.URL != "/v1/files/"+sent.MessageID {
		t.Fatalf("outbox after a file: %+v", p)
	}
	// a file that cannot be recorded is not sent, and its copy not kept
	st.Close()
	if _, err := sendFile(); err == nil {
		t.Fatal("SendFile reported success with its store closed")
	}
	if copies, _ := os.ReadDir(filepath.Join(dir, "files")); len(copies) != 1 {
		t.Fatalf("%d copies kept, want the first file's only", len(copies))
	}
}
