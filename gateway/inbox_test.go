package gateway

// Tests of the inbound journal: stored before Receive returns, finished
// when handled, replayed once after a crash, and the persisted dedup that
// keeps a platform's replay after a restart from being answered again.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/adapters/slack"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// journalWait bounds every wait on an event in these tests; nothing sleeps.
const journalWait = 20 * time.Second

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), journalWait)
	t.Cleanup(cancel)
	return ctx
}

// journalState reads a row's state ("" when there is none).
func journalState(t *testing.T, db *sql.DB, platform, chat, id string) string {
	t.Helper()
	var state string
	err := db.QueryRow(`SELECT state FROM inbox WHERE platform = ? AND chat_id = ? AND message_id = ?`, platform, chat, id).Scan(&state)
	if err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	return state
}

// running is a Runner over a store in dir, stopped (and its store closed)
// by stop or at the end of the test.
type running struct {
	r     *Runner
	store *sessions.Store
	stop  func()
}

func runAt(t *testing.T, dir string, model agent.Model, ads []adapters.Adapter, opts ...harnessOpt) *running {
	t.Helper()
	st, err := sessions.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg := hooks.NewRegistry(nil)
	if model == nil {
		model = agent.Echo{}
	}
	cfg := Config{Adapters: ads, Store: st, Hooks: reg, AllowAllUsers: true,
		Agent: &agent.Agent{Model: model, Tools: agent.NewTools(), Hooks: reg, ModelName: "journal-test"}}
	for _, o := range opts {
		o(&cfg)
	}
	r := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(journalWait):
				t.Error("the gateway did not stop")
			}
			cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
			reg.Close(cctx)
			ccancel()
			st.Close()
		})
	}
	t.Cleanup(stop)
	return &running{r: r, store: st, stop: stop}
}

// notifyAdapter is a fakeAdapter that also reports each text it sent.
type notifyAdapter struct {
	*fakeAdapter
	sent chan<- string
}

func (n *notifyAdapter) Send(ctx context.Context, to herald.Target, out adapters.Outgoing) (adapters.Sent, error) {
	s, err := n.fakeAdapter.Send(ctx, to, out)
	if err == nil {
		n.sent <- out.Text
	}
	return s, err
}

func fakeMsg(chat, id, text string) herald.Message {
	return herald.Message{ID: id, Text: text, Source: herald.Source{Platform: "fake", ChatID: chat, ChatType: herald.ChatDM, UserID: "u1"}}
}

// The message is in the journal when Receive returns, while its turn is
// still running; the row is finished once the receipt resolves.
func TestReceiveJournalsBeforeReturning(t *testing.T) {
	g := newGate()
	ad := &fakeAdapter{name: "fake"}
	rn := runAt(t, t.TempDir(), g, []adapters.Adapter{ad})
	rec := rn.r.Receive(context.Background(), fakeMsg("c1", "41", "hello"))
	if got := journalState(t, rn.store.DB(), "fake", "c1", "41"); got != sessions.InboundReceived {
		t.Fatalf("journal state when Receive returned = %q, want %q", got, sessions.InboundReceived)
	}
	g.wait(t)
	g.release <- struct{}{}
	select {
	case <-rec.Done():
	case <-time.After(journalWait):
		t.Fatal("receipt never resolved")
	}
	rn.stop() // Run returns after the journal recorded the outcome
	st, err := sessions.Open(rn.store.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got := journalState(t, st.DB(), "fake", "c1", "41"); got != sessions.InboundDone {
		t.Fatalf("journal state after the answer = %q, want done", got)
	}
	if rows, _ := st.UnfinishedInbound(context.Background()); len(rows) != 0 {
		t.Fatalf("unfinished rows after a clean stop: %+v", rows)
	}
}

// Rows a crash left unfinished are handled at the next start, before any
// adapter runs, once: a row already replayed is given up.
func TestUnfinishedMessagesReplayedOnce(t *testing.T) {
	dir := t.TempDir()
	st, err := sessions.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, m := range []herald.Message{fakeMsg("c1", "1", "left by a crash"), fakeMsg("c2", "2", "crashed twice")} {
		body, _ := json.Marshal(m)
		if _, err := st.RecordInbound(ctx, sessions.Inbound{Platform: "fake", ChatID: m.Source.ChatID, MessageID: m.ID, Message: string(body), ReceivedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	st.SetInboundState(ctx, "fake", "c2", "2", sessions.InboundReplayed, time.Now())
	st.Close()

	ad := &fakeAdapter{name: "fake"}
	sent := make(chan string, 8)
	rn := runAt(t, dir, nil, []adapters.Adapter{&notifyAdapter{ad, sent}})
	// a platform re-sending the replayed message is not answered twice
	if o := rn.r.Receive(ctx, fakeMsg("c1", "1", "left by a crash")).Outcome(); o.Status != adapters.StatusSkipped || o.Err != nil {
		t.Fatalf("re-sent journalled message: %+v", o)
	}
	select {
	case <-sent:
	case <-time.After(journalWait):
		t.Fatal("the message left by the crash was not answered")
	}
	rn.stop()
	if got := ad.texts(); len(got) != 1 || !strings.Contains(got[0], "left by a crash") {
		t.Fatalf("sent %q; want one answer, to the message left by the crash", got)
	}
	st, _ = sessions.Open(filepath.Join(dir, "state.db"))
	defer st.Close()
	if a, b := journalState(t, st.DB(), "fake", "c1", "1"), journalState(t, st.DB(), "fake", "c2", "2"); a != sessions.InboundDone || b != sessions.InboundAbandoned {
		t.Fatalf("states %q, %q; want done, abandoned", a, b)
	}
}

// breakJournal makes every insert into the journal fail, as a full disk
// or a damaged table would.
func breakJournal(t *testing.T, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec(`CREATE TRIGGER inbox_broken BEFORE INSERT ON inbox BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END`); err != nil {
		t.Fatal(err)
	}
}

// A message the journal cannot store is refused (the adapter does not
// acknowledge it) and the user is told.
func TestJournalFailureRefusesAndTells(t *testing.T) {
	ad := &fakeAdapter{name: "fake"}
	rn := runAt(t, t.TempDir(), nil, []adapters.Adapter{ad})
	breakJournal(t, rn.store.DB())
	rec := rn.r.Receive(context.Background(), fakeMsg("c1", "9", "hello"))
	if !adapters.Refused(rec) {
		t.Fatalf("outcome %+v; want refused with an error", rec.Outcome())
	}
	if o := rec.Outcome(); !strings.Contains(o.Err.Error(), "not saved") {
		t.Fatalf("error %v", o.Err)
	}
	rn.stop() // waits for the notice
	if got := ad.texts(); len(got) != 1 || got[0] != NotSavedText {
		t.Fatalf("sent %q; want only %q", got, NotSavedText)
	}
}

// telegramWebhook runs a gateway whose Telegram adapter takes updates on a
// webhook, and returns the webhook's URL.
func telegramWebhook(t *testing.T, srv *telegramtest.Server, dir string) (*running, string) {
	t.Helper()
	addr := make(chan string, 1)
	ad := telegram.New(telegram.Config{Token: srv.Token(), APIEndpoint: srv.Endpoint(),
		WebhookListen: "127.0.0.1:0", WebhookSecret: "hook-secret", WebhookURL: "https://bot.example/telegram",
		OnListen: func(a string) { addr <- a }})
	rn := runAt(t, dir, nil, []adapters.Adapter{ad}, func(c *Config) { c.BusyMode = "queue" })
	select {
	case a := <-addr:
		return rn, "http://" + a + "/telegram"
	case <-time.After(journalWait):
		t.Fatal("the webhook did not listen")
		return nil, ""
	}
}

// A Telegram webhook update replayed after a restart is not answered
// again; a new one is.
func TestTelegramWebhookReplayAfterRestart(t *testing.T) {
	srv := telegramtest.New(telegramtest.Options{})
	defer srv.Close()
	dir := t.TempDir()
	from := telegramtest.User{ID: 42, UserName: "alice"}
	first := srv.Update(10, telegramtest.DMMessage(from, "first"))

	rn, url := telegramWebhook(t, srv, dir)
	if code, err := telegramtest.PostWebhook(ctxFor(t), url, "hook-secret", first); err != nil || code != 200 {
		t.Fatalf("webhook: %d %v", code, err)
	}
	if _, err := srv.WaitCalls(ctxFor(t), "sendMessage", 1); err != nil {
		t.Fatal(err)
	}
	rn.stop()

	rn, url = telegramWebhook(t, srv, dir)
	defer rn.stop()
	if code, err := telegramtest.PostWebhook(ctxFor(t), url, "hook-secret", first); err != nil || code != 200 {
		t.Fatalf("replayed webhook: %d %v", code, err)
	}
	// same chat, queue mode: an answer to the replay would come before
	// the answer to the next update
	second := srv.Update(11, telegramtest.DMMessage(from, "second"))
	if code, err := telegramtest.PostWebhook(ctxFor(t), url, "hook-secret", second); err != nil || code != 200 {
		t.Fatalf("webhook: %d %v", code, err)
	}
	if err := srv.Wait(ctxFor(t), func() bool {
		calls := srv.Calls("sendMessage")
		return len(calls) > 0 && strings.Contains(calls[len(calls)-1].Text, "second")
	}); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range srv.Calls("sendMessage") {
		texts = append(texts, c.Text)
	}
	if len(texts) != 2 {
		t.Fatalf("answers %q; want one to each update", texts)
	}
}

// slackEvents runs a gateway whose Slack adapter takes the Events API,
// and returns the endpoint's URL.
func slackEvents(t *testing.T, srv *slacktest.Server, dir string) (*running, string) {
	t.Helper()
	addr := make(chan string, 1)
	ad := slack.New(slack.Config{BotToken: "xoxb-test-token", SigningSecret: "signing-secret", APIURL: srv.APIURL(),
		Mode: slack.ModeEvents, EventsListen: "127.0.0.1:0", OnListen: func(a string) { addr <- a }})
	rn := runAt(t, dir, nil, []adapters.Adapter{ad}, func(c *Config) { c.BusyMode = "queue" })
	select {
	case a := <-addr:
		return rn, "http://" + a + "/slack/events"
	case <-time.After(journalWait):
		t.Fatal("the events endpoint did not listen")
		return nil, ""
	}
}

func postSigned(t *testing.T, url string, body []byte) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxFor(t), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	slacktest.Sign(req.Header, "signing-secret", time.Now(), body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A signed Slack Events API request replayed after a restart is not
// answered again; a new one is.
func TestSlackEventsReplayAfterRestart(t *testing.T) {
	srv := slacktest.New(slacktest.Options{BotToken: "xoxb-test-token"})
	defer srv.Close()
	dir := t.TempDir()
	_, first := srv.Callback(srv.MessageEvent("D1", "im", "U3", "first", ""))

	rn, url := slackEvents(t, srv, dir)
	if code := postSigned(t, url, first); code != 200 {
		t.Fatalf("events API: %d", code)
	}
	if _, err := srv.WaitPosts(ctxFor(t), 1); err != nil {
		t.Fatal(err)
	}
	rn.stop()

	rn, url = slackEvents(t, srv, dir)
	defer rn.stop()
	if code := postSigned(t, url, first); code != 200 {
		t.Fatalf("replayed request: %d", code)
	}
	_, second := srv.Callback(srv.MessageEvent("D1", "im", "U3", "second", ""))
	if code := postSigned(t, url, second); code != 200 {
		t.Fatalf("events API: %d", code)
	}
	posts, err := srv.WaitPosts(ctxFor(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(posts) != 2 || !strings.Contains(posts[1].Text, "second") {
		var texts []string
		for _, p := range posts {
			texts = append(texts, p.Text)
		}
		t.Fatalf("answers %q; want one to each request", texts)
	}
}

// Adapters acknowledge only what the gateway stored: when the journal
// cannot store a message, the Telegram webhook and the Slack Events API
// answer 503, so the platform retries.
func TestNotAcknowledgedWhenNotStored(t *testing.T) {
	t.Run("telegram webhook", func(t *testing.T) {
		srv := telegramtest.New(telegramtest.Options{})
		defer srv.Close()
		rn, url := telegramWebhook(t, srv, t.TempDir())
		defer rn.stop()
		breakJournal(t, rn.store.DB())
		upd := srv.Update(10, telegramtest.DMMessage(telegramtest.User{ID: 42, UserName: "alice"}, "hello"))
		if code, err := telegramtest.PostWebhook(ctxFor(t), url, "hook-secret", upd); err != nil || code != http.StatusServiceUnavailable {
			t.Fatalf("webhook answered %d %v; want 503", code, err)
		}
	})
	t.Run("slack events API", func(t *testing.T) {
		srv := slacktest.New(slacktest.Options{BotToken: "xoxb-test-token"})
		defer srv.Close()
		rn, url := slackEvents(t, srv, t.TempDir())
		defer rn.stop()
		breakJournal(t, rn.store.DB())
		_, body := srv.Callback(srv.MessageEvent("D1", "im", "U3", "hello", ""))
		if code := postSigned(t, url, body); code != http.StatusServiceUnavailable {
			t.Fatalf("events API answered %d; want 503", code)
		}
	})
}

// The local platform numbers messages sent without an id itself: those
// numbers must not repeat after a restart, or the journal would take a
// new message for a replay.
func TestLocalMessagesWithoutIDAfterRestart(t *testing.T) {
	dir := t.TempDir()
	for round := range 2 {
		loc := local.New(local.Config{Listen: "127.0.0.1:0", Token: "tok"})
		rn := runAt(t, dir, nil, []adapters.Adapter{loc}, func(c *Config) {
			c.Auth = map[herald.Platform]PlatformAuth{herald.PlatformLocal: {TrustAll: true}}
		})
		srv := httptest.NewServer(loc.Handler(rn.r))
		h := &harness{t: t, srv: srv}
		r := h.post(msg{User: "u1", Text: fmt.Sprint("hello ", round)})
		if r.Status != adapters.StatusDone || len(r.Replies) != 1 {
			t.Fatalf("run %d: %+v", round+1, r)
		}
		srv.Close()
		rn.stop()
	}
}

// Slack Socket Mode: an envelope is acked only once the gateway stored
// its event; one it could not store is left unacked, so Slack re-sends it,
// and the re-sent envelope is answered once.
func TestSlackSocketAckAfterStore(t *testing.T) {
	srv := slacktest.New(slacktest.Options{BotToken: "xoxb-test-token", AppToken: "xapp-test-token"})
	defer srv.Close()
	ad := slack.New(slack.Config{BotToken: "xoxb-test-token", AppToken: "xapp-test-token", APIURL: srv.APIURL()})
	rn := runAt(t, t.TempDir(), nil, []adapters.Adapter{ad})
	defer rn.stop()
	ctx := ctxFor(t)
	if err := srv.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}
	breakJournal(t, rn.store.DB())
	lost := srv.DM("U3", "stored?")
	posts, err := srv.WaitPosts(ctx, 1)
	if err != nil || posts[0].Text != NotSavedText {
		t.Fatalf("posts %+v (%v); want the user told", posts, err)
	}
	if _, err := rn.store.DB().Exec(`DROP TRIGGER inbox_broken`); err != nil {
		t.Fatal(err)
	}
	// envelopes are handled one at a time: once the next one is acked,
	// the first one's ack was decided
	next := srv.DM("U4", "next")
	if err := srv.WaitAcked(ctx, next.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	for _, a := range srv.Acks() {
		if a.EnvelopeID == lost.EnvelopeID {
			t.Fatal("an envelope whose event was not stored was acked")
		}
	}
	srv.Redeliver(lost.EnvelopeID)
	if err := srv.WaitAcked(ctx, lost.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	posts, err = srv.WaitPosts(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range posts {
		if strings.Contains(p.Text, "stored?") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("posts %+v; want the re-sent message answered once", posts)
	}
}
