package telegram_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/sessions"
)

// wait bounds every wait on an event; nothing sleeps.
const wait = 60 * time.Second

func newFake(t *testing.T) *telegramtest.Server {
	t.Helper()
	srv := telegramtest.New(telegramtest.Options{})
	t.Cleanup(srv.Close)
	return srv
}

func newAdapter(srv *telegramtest.Server, mod func(*telegram.Config)) *telegram.Adapter {
	cfg := telegram.Config{
		Token: srv.Token(), APIEndpoint: srv.Endpoint(), PollTimeout: time.Second,
		ReconnectMin: 5 * time.Millisecond, ReconnectMax: 50 * time.Millisecond,
	}
	if mod != nil {
		mod(&cfg)
	}
	return telegram.New(cfg)
}

func openStore(t *testing.T, dir string) *sessions.Store {
	t.Helper()
	st, err := sessions.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// sink records what the adapter hands over. It stands in for the gateway
// in the adapter's own tests; e2e_test.go uses the real gateway.
type sink struct {
	mu   sync.Mutex
	msgs []herald.Message
	ch   chan herald.Message
	// on, when set, decides the receipt (nil: accepted and done).
	on func(m herald.Message) *adapters.Receipt
}

func newSink() *sink { return &sink{ch: make(chan herald.Message, 100)} }

func (s *sink) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	s.mu.Lock()
	on := s.on
	s.mu.Unlock()
	if on != nil {
		if r := on(m); r != nil {
			return r
		}
	}
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	s.ch <- m
	return adapters.Resolved(adapters.Outcome{Status: adapters.StatusDone})
}

func (s *sink) next(t *testing.T) herald.Message {
	t.Helper()
	select {
	case m := <-s.ch:
		return m
	case <-time.After(wait):
		t.Fatal("no message reached the sink")
		return herald.Message{}
	}
}

// run starts Run and returns a stop function that cancels it and returns
// its error.
func run(t *testing.T, ad *telegram.Adapter, sk adapters.Sink) (stop func() error, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	go func() { ch <- ad.Run(ctx, sk) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-ch:
			case <-time.After(wait):
				err = errors.New("Run did not return after its context ended")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop, ch
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func TestDMReachesSinkAndReplyGoesOut(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	sk := newSink()
	stop, _ := run(t, ad, sk)

	in := srv.DM(42, "alice", "hello bot")
	m := sk.next(t)
	want := herald.Source{Platform: herald.PlatformTelegram, ChatID: "42", ChatType: herald.ChatDM, ChatName: "alice", UserID: "42", UserName: "alice"}
	if m.Source != want {
		t.Errorf("source = %+v, want %+v", m.Source, want)
	}
	if m.Text != "hello bot" || m.ID != fmt.Sprint(in.MessageID) || m.Mentioned {
		t.Errorf("message = %+v", m)
	}
	sent, err := ad.Send(ctxT(t), m.Source.Target(), adapters.Outgoing{Text: "**hi** <alice>", ReplyTo: m.ID})
	if err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls("sendMessage")
	if len(calls) != 1 {
		t.Fatalf("calls = %+v", calls)
	}
	c := calls[0]
	if c.ChatID != "42" || c.Text != "<b>hi</b> &lt;alice&gt;" || c.ParseMode != "HTML" || c.ReplyTo != m.ID || c.MessageID != sent.MessageID {
		t.Errorf("sent %+v (message id %q)", c, sent.MessageID)
	}
	if h := ad.Health(); h != "connected" {
		t.Errorf("health = %q", h)
	}
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if h := ad.Health(); h != "stopped" {
		t.Errorf("health after stop = %q", h)
	}
}

// A restart with updates waiting neither replays one the sink took nor
// loses one it did not get: the offset is stored after each hand-over.
func TestRestartNeitherReplaysNorLoses(t *testing.T) {
	dir := t.TempDir()
	srv := newFake(t)
	for i := 1; i <= 3; i++ {
		srv.DM(42, "alice", fmt.Sprintf("m%d", i))
	}

	// First run: stop right after the second update is handed over, while
	// the third is already fetched in the same batch.
	st := openStore(t, dir)
	sk := newSink()
	ad := newAdapter(srv, func(c *telegram.Config) { c.Store = st })
	ctx, cancel := context.WithCancel(context.Background())
	sk.on = func(m herald.Message) *adapters.Receipt {
		if m.Text == "m2" {
			cancel()
		}
		return nil
	}
	if err := ad.Run(ctx, sk); err != nil {
		t.Fatal(err)
	}
	if got := texts(sk); got != "m1 m2" {
		t.Fatalf("first run got %q", got)
	}
	off, _ := st.Offset(context.Background(), "telegram")
	if off != "3" {
		t.Fatalf("stored offset = %q, want 3", off)
	}
	st.Close()

	// While down, more updates arrive.
	srv.DM(42, "alice", "m4")
	srv.DM(43, "bob", "m5")

	st = openStore(t, dir)
	defer st.Close()
	sk2 := newSink()
	ad2 := newAdapter(srv, func(c *telegram.Config) { c.Store = st })
	stop, _ := run(t, ad2, sk2)
	for range 3 {
		sk2.next(t)
	}
	// Polling goes on from offset 6: nothing more may arrive.
	if err := srv.Wait(ctxT(t), func() bool { return srv.Confirmed() >= 6 }); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := texts(sk2); got != "m3 m4 m5" {
		t.Errorf("second run got %q, want m3 m4 m5", got)
	}
	if off, _ := st.Offset(context.Background(), "telegram"); off != "6" {
		t.Errorf("stored offset = %q, want 6", off)
	}
}

// An update the gateway refuses (it is shutting down) is not confirmed:
// polling pauses and fetches it again.
func TestRefusedUpdateIsFetchedAgain(t *testing.T) {
	srv := newFake(t)
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	sk := newSink()
	var mu sync.Mutex
	refusals := 0
	sk.on = func(m herald.Message) *adapters.Receipt {
		mu.Lock()
		defer mu.Unlock()
		if refusals < 2 {
			refusals++
			return adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped, Err: errors.New("gateway is shutting down")})
		}
		return nil
	}
	ad := newAdapter(srv, func(c *telegram.Config) { c.Store = st })
	run(t, ad, sk)
	srv.DM(42, "alice", "once")
	if m := sk.next(t); m.Text != "once" {
		t.Fatalf("got %q", m.Text)
	}
	// the offset is stored before the next poll confirms the update
	if err := srv.Wait(ctxT(t), func() bool { return srv.Confirmed() >= 2 }); err != nil {
		t.Fatal(err)
	}
	if n := srv.Attempts("getUpdates"); n < 3 {
		t.Errorf("getUpdates attempts = %d, want the update fetched three times", n)
	}
	if off, _ := st.Offset(context.Background(), "telegram"); off != "2" {
		t.Errorf("offset = %q", off)
	}
}

func texts(s *sink) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.msgs {
		out = append(out, m.Text)
	}
	return strings.Join(out, " ")
}

func TestSendErrors(t *testing.T) {
	to := herald.Target{Platform: herald.PlatformTelegram, ChatID: "42"}
	for _, tc := range []struct {
		name  string
		setup func(*telegramtest.Server)
		out   adapters.Outgoing
		check func(t *testing.T, err error)
	}{
		{"429 is a retry-after", func(s *telegramtest.Server) { s.RateLimit("sendMessage", 1, 7) }, adapters.Outgoing{Text: "x"},
			func(t *testing.T, err error) {
				var ra *adapters.RetryAfterError
				if !errors.As(err, &ra) || ra.After != 7*time.Second {
					t.Errorf("err = %v, want RetryAfterError 7s", err)
				}
			}},
		{"401 is fatal and names the token", func(s *telegramtest.Server) { s.Unauthorized("sendMessage", 1) }, adapters.Outgoing{Text: "x"},
			func(t *testing.T, err error) {
				if !adapters.IsFatal(err) || !strings.Contains(err.Error(), "TELEGRAM_BOT_TOKEN") {
					t.Errorf("err = %v", err)
				}
			}},
		{"dropped connection is temporary", func(s *telegramtest.Server) { s.Drop("sendMessage", 1) }, adapters.Outgoing{Text: "x"},
			func(t *testing.T, err error) {
				var tmp *adapters.TemporaryError
				if !errors.As(err, &tmp) {
					t.Errorf("err = %T %v", err, err)
				}
			}},
		{"5xx is temporary", func(s *telegramtest.Server) {
			s.Fail("sendMessage", 1, telegramtest.Failure{Code: 502, Description: "Bad Gateway"})
		}, adapters.Outgoing{Text: "x"},
			func(t *testing.T, err error) {
				var tmp *adapters.TemporaryError
				if !errors.As(err, &tmp) {
					t.Errorf("err = %T %v", err, err)
				}
			}},
		{"entity error is a markup refusal", func(s *telegramtest.Server) {
			s.Fail("sendMessage", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 3"})
		}, adapters.Outgoing{Text: "x"},
			func(t *testing.T, err error) {
				var tmp *adapters.TemporaryError
				if !errors.Is(err, telegram.ErrMarkup) || adapters.IsFatal(err) || errors.As(err, &tmp) {
					t.Errorf("err = %v", err)
				}
			}},
		{"too long is refused", nil, adapters.Outgoing{Text: strings.Repeat("😀", 2049), Plain: true},
			func(t *testing.T, err error) {
				if err == nil || adapters.IsFatal(err) || !strings.Contains(err.Error(), "too long") {
					t.Errorf("err = %v", err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			if tc.setup != nil {
				tc.setup(srv)
			}
			ad := newAdapter(srv, nil)
			_, err := ad.Send(ctxT(t), to, tc.out)
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), srv.Token()) || strings.Contains(err.Error(), "/bot") {
				t.Errorf("error carries the token or URL: %v", err)
			}
			tc.check(t, err)
		})
	}
}

func TestPlainSendsNoMarkup(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	if _, err := ad.Send(ctxT(t), herald.Target{ChatID: "42"}, adapters.Outgoing{Text: "**a** <b", Plain: true}); err != nil {
		t.Fatal(err)
	}
	c := srv.Calls("sendMessage")[0]
	if c.ParseMode != "" || c.Text != "**a** <b" {
		t.Errorf("sent %+v", c)
	}
}

func TestBadTokenIsFatal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token string
		setup func(*telegramtest.Server)
	}{
		{"wrong token", "999:WRONG-token-value", nil},
		{"getMe 401", "", func(s *telegramtest.Server) { s.Unauthorized("getMe", 1) }},
		{"getMe 404", "", func(s *telegramtest.Server) {
			s.Fail("getMe", 1, telegramtest.Failure{Code: 404, Description: "Not Found"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			if tc.setup != nil {
				tc.setup(srv)
			}
			ad := newAdapter(srv, func(c *telegram.Config) {
				if tc.token != "" {
					c.Token = tc.token
				}
			})
			err := ad.Run(ctxT(t), newSink())
			if !adapters.IsFatal(err) || !strings.Contains(err.Error(), "TELEGRAM_BOT_TOKEN") {
				t.Fatalf("err = %v, want fatal naming TELEGRAM_BOT_TOKEN", err)
			}
			for _, s := range []string{srv.Token(), tc.token, "/bot"} {
				if s != "" && strings.Contains(err.Error()+ad.Health(), s) {
					t.Errorf("error or health carries %q: %v / %s", s, err, ad.Health())
				}
			}
			if !strings.HasPrefix(ad.Health(), "failed: ") {
				t.Errorf("health = %q", ad.Health())
			}
		})
	}
}

func TestForumTopicRoundTrip(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	sk := newSink()
	run(t, ad, sk)
	srv.Topic(-1001, 77, telegramtest.User{ID: 42, UserName: "alice"}, "status?")
	m := sk.next(t)
	if m.Source.ThreadID != "77" || m.Source.ChatType != herald.ChatGroup || !m.Mentioned || m.ReplyTo != "" {
		t.Fatalf("message = %+v", m)
	}
	if _, err := ad.Send(ctxT(t), m.Source.Target(), adapters.Outgoing{Text: "fine"}); err != nil {
		t.Fatal(err)
	}
	if err := ad.Typing(ctxT(t), m.Source.Target()); err != nil {
		t.Fatal(err)
	}
	sent := srv.Calls("sendMessage")[0]
	typing := srv.Calls("sendChatAction")[0]
	if sent.ChatID != "-1001" || sent.ThreadID != "77" || typing.ThreadID != "77" {
		t.Errorf("sent %+v, typing %+v", sent, typing)
	}
}

func TestGroupMentions(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	sk := newSink()
	run(t, ad, sk)
	alice := telegramtest.User{ID: 42, UserName: "alice"}
	// a message of the bot's, to reply to
	botMsg, err := ad.Send(ctxT(t), herald.Target{ChatID: "-5"}, adapters.Outgoing{Text: "I said this"})
	if err != nil {
		t.Fatal(err)
	}
	var botMsgID int
	fmt.Sscan(botMsg.MessageID, &botMsgID)
	group := map[string]any{"id": -5, "type": "group", "title": "g"}
	from := map[string]any{"id": 42, "is_bot": false, "first_name": "alice", "username": "alice"}
	for _, tc := range []struct {
		name   string
		inject func()
		want   bool
	}{
		{"mention entity", func() { srv.Mention(-5, alice, "hi") }, true},
		{"no mention", func() { srv.GroupMessage(-5, alice, "just chatting") }, false},
		{"username in text", func() { srv.GroupMessage(-5, alice, "hey @Herald_Test_Bot look") }, true},
		{"longer username is not us", func() { srv.GroupMessage(-5, alice, "hey @herald_test_bot2") }, false},
		{"text_mention", func() {
			srv.AddUpdate(map[string]any{"message": map[string]any{"from": from, "chat": group, "text": "Herald, hi",
				"entities": []any{map[string]any{"type": "text_mention", "offset": 0, "length": 6, "user": map[string]any{"id": srv.BotID(), "is_bot": true, "first_name": "Herald"}}}}})
		}, true},
		{"reply to the bot", func() {
			srv.AddUpdate(map[string]any{"message": map[string]any{"from": from, "chat": group, "text": "and?",
				"reply_to_message": map[string]any{"message_id": botMsgID, "date": 1, "chat": group, "text": "I said this",
					"from": map[string]any{"id": srv.BotID(), "is_bot": true, "first_name": "Herald"}}}})
		}, true},
		{"mention after emoji", func() {
			// entity offsets count UTF-16 units: 😀 is two
			srv.AddUpdate(map[string]any{"message": map[string]any{"from": from, "chat": group, "text": "😀 @herald_test_bot x",
				"entities": []any{map[string]any{"type": "mention", "offset": 3, "length": 16}}}})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.inject()
			m := sk.next(t)
			if m.Mentioned != tc.want || m.Source.ChatType != herald.ChatGroup {
				t.Errorf("Mentioned = %v, want %v (%+v)", m.Mentioned, tc.want, m)
			}
		})
	}
}

func TestTypingAndEdit(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	ctx := ctxT(t)
	to := herald.Target{Platform: herald.PlatformTelegram, ChatID: "42"}
	if err := ad.Typing(ctx, to); err != nil {
		t.Fatal(err)
	}
	if c := srv.Calls("sendChatAction"); len(c) != 1 || c[0].Action != "typing" || c[0].ChatID != "42" {
		t.Fatalf("typing calls = %+v", c)
	}
	sent, err := ad.Send(ctx, to, adapters.Outgoing{Text: "draft"})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"draft", "draft two", "draft two", "**final**"} {
		if err := ad.Edit(ctx, to, sent.MessageID, text); err != nil {
			t.Fatalf("edit %q: %v", text, err)
		}
	}
	edits := srv.Calls("editMessageText")
	if n := srv.Attempts("editMessageText"); n != 2 || len(edits) != 2 {
		t.Fatalf("edit attempts = %d, calls = %+v; identical edits must be skipped", n, edits)
	}
	if edits[0].Text != "draft two" || edits[1].Text != "<b>final</b>" || edits[1].MessageID != sent.MessageID {
		t.Errorf("edits = %+v", edits)
	}
	// markup the server refuses falls back to plain text
	srv.Fail("editMessageText", 1, telegramtest.Failure{Code: 400, Description: "Bad Request: can't parse entities: Unsupported start tag"})
	if err := ad.Edit(ctx, to, sent.MessageID, "*plain* now"); err != nil {
		t.Fatal(err)
	}
	if last := srv.Calls("editMessageText")[2]; last.ParseMode != "" || last.Text != "*plain* now" {
		t.Errorf("fallback edit = %+v", last)
	}
	srv.RateLimit("sendChatAction", 1, 2)
	var ra *adapters.RetryAfterError
	if err := ad.Typing(ctx, to); !errors.As(err, &ra) {
		t.Errorf("typing under 429 = %v", err)
	}
}

func TestWebhookSecret(t *testing.T) {
	srv := newFake(t)
	sk := newSink()
	url, stop := runWebhook(t, srv, sk, "https://bot.example/telegram")
	if wh := srv.Webhook(); wh.Get("url") != "https://bot.example/telegram" || wh.Get("secret_token") != "s3cret-webhook-token" {
		t.Errorf("setWebhook = %v", wh)
	}
	if n := srv.Attempts("deleteWebhook"); n != 0 {
		t.Errorf("webhook mode sent deleteWebhook %d times", n)
	}
	dm := telegramtest.DMMessage(telegramtest.User{ID: 42, UserName: "alice"}, "via webhook")
	for _, tc := range []struct {
		name, secret string
		want         int
	}{
		{"no header", "", 401},
		{"wrong secret", "s3cret-webhook-tokeN", 401},
		{"prefix of the secret", "s3cret", 401},
		{"right secret", "s3cret-webhook-token", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, err := telegramtest.PostWebhook(ctxT(t), url, tc.secret, srv.Update(10, dm))
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.want {
				t.Errorf("status = %d, want %d", code, tc.want)
			}
		})
	}
	if m := sk.next(t); m.Text != "via webhook" {
		t.Errorf("got %+v", m)
	}
	select {
	case m := <-sk.ch:
		t.Errorf("a refused request was delivered: %+v", m)
	default:
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// runWebhook runs an adapter in webhook mode (secret
// "s3cret-webhook-token", registering webhookURL when not "") and returns
// the URL to post updates to.
func runWebhook(t *testing.T, srv *telegramtest.Server, sk adapters.Sink, webhookURL string) (url string, stop func() error) {
	t.Helper()
	addr := make(chan string, 1)
	ad := newAdapter(srv, func(c *telegram.Config) {
		c.WebhookListen = "127.0.0.1:0"
		c.WebhookSecret = "s3cret-webhook-token"
		c.WebhookURL = webhookURL
		c.OnListen = func(a string) { addr <- a }
	})
	stop, _ = run(t, ad, sk)
	select {
	case a := <-addr:
		return "http://" + a + "/telegram", stop
	case <-time.After(wait):
		t.Fatal("webhook did not listen")
		return "", stop
	}
}

func TestWebhookWithoutSecretIsFatal(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, func(c *telegram.Config) { c.WebhookListen = "127.0.0.1:0" })
	if err := ad.Run(ctxT(t), newSink()); !adapters.IsFatal(err) || !strings.Contains(err.Error(), "TELEGRAM_WEBHOOK_SECRET") {
		t.Errorf("err = %v", err)
	}
}

// Network loss while polling is retried inside Run; nothing is lost or
// delivered twice.
func TestPollReconnects(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	sk := newSink()
	run(t, ad, sk)
	srv.DM(42, "alice", "before")
	sk.next(t)
	srv.Drop("getUpdates", 3)
	// cut the poll that is held right now too
	srv.CloseConnections()
	srv.DM(42, "alice", "after")
	if m := sk.next(t); m.Text != "after" {
		t.Fatalf("got %q", m.Text)
	}
	if err := srv.Wait(ctxT(t), func() bool { return srv.Confirmed() >= 3 }); err != nil {
		t.Fatal(err)
	}
	if got := texts(sk); got != "before after" {
		t.Errorf("delivered %q", got)
	}
	if h := ad.Health(); h != "connected" {
		t.Errorf("health = %q", h)
	}
}

// Run returns promptly when stopped during a held long poll (the library
// itself cannot stop one early).
func TestStopDuringLongPoll(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, func(c *telegram.Config) { c.PollTimeout = 50 * time.Second })
	stop, _ := run(t, ad, newSink())
	if err := srv.Wait(ctxT(t), func() bool { return srv.Attempts("getUpdates") >= 1 }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stop took %s", d)
	}
}

// An update the library cannot read is skipped, not fetched forever.
func TestUnreadableUpdateIsSkipped(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	sk := newSink()
	run(t, ad, sk)
	srv.AddUpdate(map[string]any{"message": map[string]any{"chat": "not an object", "text": "x"}})
	srv.DM(42, "alice", "next")
	if m := sk.next(t); m.Text != "next" {
		t.Fatalf("got %q", m.Text)
	}
}
