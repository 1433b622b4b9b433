package whatsapp_test

import (
	"context"
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
	"github.com/heraldgw/herald/adapters/whatsapp"
	"github.com/heraldgw/herald/adapters/whatsapp/whatsapptest"
)

const verifyToken = "verify-me-0123456789"

// sink records what the adapter hands the gateway; it takes presses and
// answers each with "pressed <data>".
type sink struct {
	mu      sync.Mutex
	msgs    []herald.Message
	presses []adapters.Press
	changed chan struct{}
	refuse  bool
}

func newSink() *sink { return &sink{changed: make(chan struct{}, 100)} }

func (s *sink) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuse {
		return adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped, Err: errors.New("shutting down")})
	}
	s.msgs = append(s.msgs, m)
	s.changed <- struct{}{}
	return adapters.Resolved(adapters.Outcome{Status: adapters.StatusDone})
}

func (s *sink) Press(ctx context.Context, p adapters.Press) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.presses = append(s.presses, p)
	return "pressed " + p.Data
}

func (s *sink) messages() []herald.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]herald.Message(nil), s.msgs...)
}

// rig is an adapter running against a fake, its webhook on a test server.
type rig struct {
	fake *whatsapptest.Server
	ad   *whatsapp.Adapter
	sink *sink
	hook *whatsapptest.Webhook
	now  *clock
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func start(t *testing.T, mod func(*whatsapp.Config)) *rig {
	t.Helper()
	fake := whatsapptest.New(whatsapptest.Options{})
	t.Cleanup(fake.Close)
	r := &rig{fake: fake, sink: newSink(), now: &clock{t: time.Now()}}
	cfg := whatsapp.Config{
		AccessToken: fake.Token(), PhoneNumberID: fake.PhoneNumberID(), AppSecret: fake.AppSecret(),
		VerifyToken: verifyToken, APIBase: fake.APIBase(), Now: r.now.Now,
	}
	if mod != nil {
		mod(&cfg)
	}
	r.ad = whatsapp.New(cfg)
	srv := httptest.NewServer(r.ad.InboundRoutes()[whatsapp.WebhookPath])
	t.Cleanup(srv.Close)
	r.hook = fake.Webhook(srv.URL + whatsapp.WebhookPath)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.ad.Run(ctx, r.sink) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	// served once the verification handshake answers
	for {
		code, _, err := r.hook.Verify(ctx, verifyToken, "x")
		if err == nil && code == http.StatusOK {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Run ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return r
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestVerification(t *testing.T) {
	r := start(t, nil)
	code, body, err := r.hook.Verify(ctxT(t), verifyToken, "1158201444")
	if err != nil || code != http.StatusOK || body != "1158201444" {
		t.Fatalf("right token: %d %q %v", code, body, err)
	}
	for _, tok := range []string{"wrong", "", verifyToken + "x"} {
		if code, body, _ := r.hook.Verify(ctxT(t), tok, "1158201444"); code != http.StatusForbidden || strings.Contains(body, "1158201444") {
			t.Errorf("token %q: %d %q, want 403 without the challenge", tok, code, body)
		}
	}
}

func TestSignature(t *testing.T) {
	r := start(t, nil)
	body := r.fake.Payload([]whatsapptest.Message{whatsapptest.Text("15551230001", "Ann", "hi")})
	for name, h := range map[string]*whatsapptest.Webhook{
		"wrong secret": r.hook.Signed("not-the-app-secret"),
		"unsigned":     r.hook.WithoutSignature(),
	} {
		if code, err := h.Post(ctxT(t), body); err != nil || code != http.StatusUnauthorized {
			t.Errorf("%s: %d %v, want 401", name, code, err)
		}
	}
	if n := len(r.sink.messages()); n != 0 {
		t.Fatalf("%d messages reached the sink from unsigned payloads", n)
	}
	if code, err := r.hook.Post(ctxT(t), body); err != nil || code != http.StatusOK {
		t.Fatalf("signed: %d %v", code, err)
	}
	if m := r.sink.messages(); len(m) != 1 || m[0].Text != "hi" || m[0].Source.UserID != "15551230001" ||
		m[0].Source.ChatType != herald.ChatDM || m[0].Source.UserName != "Ann" || !strings.HasPrefix(m[0].ID, "wamid.") {
		t.Fatalf("sink got %+v", m)
	}
}

func TestRefusedIs503(t *testing.T) {
	r := start(t, nil)
	r.sink.refuse = true
	code, err := r.hook.Post(ctxT(t), r.fake.Payload([]whatsapptest.Message{whatsapptest.Text("15551230001", "Ann", "hi")}))
	if err != nil || code != http.StatusServiceUnavailable {
		t.Fatalf("%d %v, want 503 so that Meta delivers it again", code, err)
	}
}

func TestStatusesIgnored(t *testing.T) {
	r := start(t, nil)
	body := r.fake.Payload(nil, map[string]any{"id": "wamid.OUT1", "status": "delivered", "timestamp": "1700000000", "recipient_id": "15551230001"})
	if code, err := r.hook.Post(ctxT(t), body); err != nil || code != http.StatusOK {
		t.Fatalf("%d %v", code, err)
	}
	if n := len(r.sink.messages()); n != 0 {
		t.Fatalf("a status became %d messages", n)
	}
}

func TestSendAndWindow(t *testing.T) {
	r := start(t, nil)
	to := herald.Target{Platform: whatsapp.Platform, ChatID: "15551230001"}
	// nobody wrote yet: closed, and said so without a call
	_, err := r.ad.Send(ctxT(t), to, adapters.Outgoing{Text: "hello?"})
	var we *whatsapp.WindowError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "24-hour customer-service window") {
		t.Fatalf("send before any message: %v", err)
	}
	if _, err := r.hook.Send(ctxT(t), whatsapptest.Text("15551230001", "Ann", "hi")); err != nil {
		t.Fatal(err)
	}
	sent, err := r.ad.Send(ctxT(t), herald.Target{Platform: whatsapp.Platform, ChatID: "+1 555-123-0001"}, adapters.Outgoing{Text: "hello", ReplyTo: "wamid.IN1"})
	if err != nil || sent.MessageID == "" {
		t.Fatalf("send in the window: %+v %v", sent, err)
	}
	if got := r.fake.Sent(); len(got) != 1 || got[0].Text != "hello" || got[0].To != "15551230001" || got[0].ReplyTo != "wamid.IN1" {
		t.Fatalf("fake got %+v", got)
	}
	r.now.Add(whatsapp.Window + time.Minute)
	_, err = r.ad.Send(ctxT(t), to, adapters.Outgoing{Text: "a day later"})
	if !errors.As(err, &we) || we.Last.IsZero() {
		t.Fatalf("send a day later: %v", err)
	}
	if n := len(r.fake.Sent()); n != 1 {
		t.Fatalf("%d messages sent, want 1", n)
	}
}

// The window survives a restart through the store.
func TestWindowStored(t *testing.T) {
	st := &memKV{m: map[string]string{}}
	r := start(t, func(c *whatsapp.Config) { c.Store = st })
	if _, err := r.hook.Send(ctxT(t), whatsapptest.Text("15551230002", "Bob", "hi")); err != nil {
		t.Fatal(err)
	}
	ad := whatsapp.New(whatsapp.Config{AccessToken: r.fake.Token(), PhoneNumberID: r.fake.PhoneNumberID(), APIBase: r.fake.APIBase(), Store: st})
	if _, err := ad.Send(ctxT(t), herald.Target{ChatID: "15551230002"}, adapters.Outgoing{Text: "after a restart"}); err != nil {
		t.Fatalf("a new adapter on the same store: %v", err)
	}
}

type memKV struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *memKV) KV(_ context.Context, k string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	return v, ok, nil
}
func (s *memKV) SetKV(_ context.Context, k, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
	return nil
}

func TestErrorMapping(t *testing.T) {
	r := start(t, nil)
	if _, err := r.hook.Send(ctxT(t), whatsapptest.Text("15551230001", "Ann", "hi")); err != nil {
		t.Fatal(err)
	}
	to := herald.Target{ChatID: "15551230001"}
	for _, code := range []int{130429, 131056} {
		r.fake.RateLimit(1, 3*time.Second, code)
		_, err := r.ad.Send(ctxT(t), to, adapters.Outgoing{Text: "x"})
		var ra *adapters.RetryAfterError
		if !errors.As(err, &ra) || ra.After != 3*time.Second {
			t.Errorf("code %d: %v, want retry after 3s", code, err)
		}
	}
	bad := whatsapp.New(whatsapp.Config{AccessToken: "wrong-token-0123456789", PhoneNumberID: r.fake.PhoneNumberID(), APIBase: r.fake.APIBase(), AppSecret: "s", VerifyToken: "v"})
	err := bad.Run(ctxT(t), newSink())
	if !adapters.IsFatal(err) || !strings.Contains(err.Error(), "WHATSAPP_ACCESS_TOKEN") || strings.Contains(err.Error(), "wrong-token-0123456789") {
		t.Fatalf("a wrong token: %v", err)
	}
	missing := whatsapp.New(whatsapp.Config{AccessToken: "t", PhoneNumberID: "1", APIBase: r.fake.APIBase()})
	if err := missing.Run(ctxT(t), newSink()); !adapters.IsFatal(err) || !strings.Contains(err.Error(), "WHATSAPP_APP_SECRET") {
		t.Fatalf("no app secret: %v", err)
	}
}

func TestMediaInAndOut(t *testing.T) {
	r := start(t, nil)
	id := r.fake.AddMedia("audio/ogg; codecs=opus", []byte("OggS voice"))
	if _, err := r.hook.Send(ctxT(t), whatsapptest.Media("15551230001", "Ann", "voice", id, "audio/ogg; codecs=opus", "", "")); err != nil {
		t.Fatal(err)
	}
	m := r.sink.messages()
	if len(m) != 1 || len(m[0].Media) != 1 || m[0].Media[0].Type != herald.MediaVoice || m[0].Media[0].Ref != id {
		t.Fatalf("sink got %+v", m)
	}
	rc, err := r.ad.Fetch(ctxT(t), m[0].Media[0])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "OggS voice" {
		t.Fatalf("fetched %q", b)
	}
	path := filepath.Join(t.TempDir(), "chart.png")
	os.WriteFile(path, []byte("\x89PNG fake"), 0o600)
	sent, err := r.ad.SendFile(ctxT(t), herald.Target{ChatID: "15551230001"}, adapters.OutgoingFile{Path: path, Name: "chart.png", MIME: "image/png", Type: herald.MediaImage, Size: 9, Caption: "the chart"})
	if err != nil || sent.MessageID == "" {
		t.Fatalf("SendFile: %+v %v", sent, err)
	}
	up, out := r.fake.Uploads(), r.fake.Sent()
	if len(up) != 1 || string(up[0].Data) != "\x89PNG fake" || len(out) != 1 || out[0].Type != "image" || out[0].MediaID != up[0].ID || out[0].Text != "the chart" {
		t.Fatalf("uploads %+v, sent %+v", up, out)
	}
}

func TestButtonsAndPress(t *testing.T) {
	r := start(t, nil)
	if _, err := r.hook.Send(ctxT(t), whatsapptest.Text("15551230001", "Ann", "hi")); err != nil {
		t.Fatal(err)
	}
	to := herald.Target{ChatID: "15551230001"}
	four := []adapters.Button{{Label: "Approve once", Data: "ap:t:once"}, {Label: "Approve for session", Data: "ap:t:session"}, {Label: "Always", Data: "ap:t:always"}, {Label: "Deny", Data: "ap:t:deny"}}
	sent, err := r.ad.Send(ctxT(t), to, adapters.Outgoing{Text: "Run rm?\n\nReply /approve or /deny.", Buttons: four})
	if err != nil {
		t.Fatal(err)
	}
	two := []adapters.Button{{Label: "A label far longer than twenty", Data: "a"}, {Label: "B", Data: "b"}}
	if _, err := r.ad.Send(ctxT(t), to, adapters.Outgoing{Text: strings.Repeat("x", 2000), Buttons: two}); err != nil {
		t.Fatal(err)
	}
	got := r.fake.Sent()
	if got[0].Interactive != "list" || len(got[0].Choices) != 4 || got[0].Choices[1].Title != "Approve for session" || !strings.Contains(got[0].Text, "/approve") {
		t.Fatalf("four buttons: %+v", got[0])
	}
	if got[1].Interactive != "button" || len(got[1].Choices) != 2 || len([]rune(got[1].Choices[0].Title)) != 20 {
		t.Fatalf("two buttons: %+v", got[1])
	}
	if err := r.ad.CloseButtons(ctxT(t), to, sent.MessageID, "done"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.hook.Send(ctxT(t), whatsapptest.ButtonReply("15551230001", "Ann", sent.MessageID, "ap:t:session", "Approve for session", true)); err != nil {
		t.Fatal(err)
	}
	answers, err := r.fake.WaitSent(ctxT(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	r.sink.mu.Lock()
	p := r.sink.presses
	r.sink.mu.Unlock()
	if len(p) != 1 || p[0].Data != "ap:t:session" || p[0].MessageID != sent.MessageID || p[0].UserID != "15551230001" || p[0].Chat.ChatID != "15551230001" {
		t.Fatalf("presses %+v", p)
	}
	if a := answers[2]; a.Text != "pressed ap:t:session" || a.ReplyTo != sent.MessageID {
		t.Fatalf("answer %+v", a)
	}
	if n := len(r.sink.messages()); n != 1 {
		t.Fatalf("the press also became a message (%d)", n)
	}
}

// The typing indicator is a read receipt of the user's last message,
// renewed no more often than it lasts.
func TestTyping(t *testing.T) {
	r := start(t, nil)
	to := herald.Target{ChatID: "15551230001"}
	if err := r.ad.Typing(ctxT(t), to); err != nil || len(r.fake.Reads()) != 0 {
		t.Fatalf("typing before any message: %v, reads %v", err, r.fake.Reads())
	}
	id, err := r.hook.Send(ctxT(t), whatsapptest.Text("15551230001", "Ann", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := r.ad.Typing(ctxT(t), to); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.fake.Reads(); len(got) != 1 || got[0].MessageID != id || !got[0].Typing {
		t.Fatalf("reads %+v, want one with the indicator for %s", got, id)
	}
	r.now.Add(21 * time.Second)
	if err := r.ad.Typing(ctxT(t), to); err != nil || len(r.fake.Reads()) != 2 {
		t.Fatalf("renewed: %v, reads %+v", err, r.fake.Reads())
	}
}
