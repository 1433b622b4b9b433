package webhook_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/webhook"
	"github.com/heraldgw/herald/sessions"
)

const secret = "route-secret-0123456789"

// recorder is a Deliverer that records what it is given; fail, when
// set, is returned instead.
type recorder struct {
	mu   sync.Mutex
	got  []string
	fail error
}

func (r *recorder) Deliver(ctx context.Context, to herald.Target, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.got = append(r.got, to.String()+" "+text)
	return nil
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// sink takes every message, as the gateway does.
type sink chan herald.Message

func (s sink) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	s <- m
	return adapters.NewReceipt()
}

func openStore(t *testing.T) *sessions.Store {
	t.Helper()
	st, err := sessions.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// start runs an adapter with routes until the test ends and returns its
// handlers by path.
func start(t *testing.T, st *sessions.Store, d herald.Deliverer, s adapters.Sink, routes ...webhook.Route) (*webhook.Adapter, map[string]http.Handler) {
	t.Helper()
	ready := make(chan struct{})
	ad := webhook.New(webhook.Config{Routes: routes, Store: st, Deliverer: d, OnReady: func() { close(ready) }})
	if errs := ad.Skipped(); len(errs) > 0 {
		t.Fatalf("skipped: %v", errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, s) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
	return ad, ad.InboundRoutes()
}

// post sends body to a route's handler, signed for GitHub with headers
// hdr added, and returns the recorded answer.
func post(h http.Handler, route string, body []byte, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, webhook.PathPrefix+route, bytes.NewReader(body))
	req.Header.Set(webhook.HeaderGitHub, webhook.Sign(body, secret))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Past its rate limit a route answers 429 until a minute after the
// oldest request it let through.
func TestRateLimit(t *testing.T) {
	st := openStore(t)
	synctest.Test(t, func(t *testing.T) {
		_, hs := start(t, st, &recorder{}, make(sink, 8), webhook.Route{Name: "ci", Secret: secret, Events: []string{"push"}, RateLimit: 3})
		h := hs["/webhooks/ci"]
		body := []byte(`{}`)
		ping := map[string]string{"X-GitHub-Event": "ping"}
		for i := range 3 {
			if rec := post(h, "ci", body, ping); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "ignored") {
				t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
			}
			time.Sleep(10 * time.Second)
		}
		rec := post(h, "ci", body, ping)
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "30" {
			t.Fatalf("4th request: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
		}
		// a wrong signature does not count, nor get through
		if rec := post(h, "ci", body, map[string]string{webhook.HeaderGitHub: "sha256=00"}); rec.Code != http.StatusUnauthorized {
			t.Fatalf("unsigned: %d", rec.Code)
		}
		time.Sleep(29 * time.Second)
		if rec := post(h, "ci", body, ping); rec.Code != http.StatusTooManyRequests {
			t.Fatalf("59 s after the first: %d", rec.Code)
		}
		time.Sleep(time.Second)
		if rec := post(h, "ci", body, ping); rec.Code != http.StatusOK {
			t.Fatalf("60 s after the first: %d", rec.Code)
		}
		if rec := post(h, "ci", body, ping); rec.Code != http.StatusTooManyRequests {
			t.Fatalf("then again: %d", rec.Code)
		}
	})
}

func TestSkippedRoutes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		route  webhook.Route
		public bool
		want   string
	}{
		{"no secret", webhook.Route{Name: "a"}, false, `"a" skipped: no secret`},
		{"bad name", webhook.Route{Name: "a/b", Secret: secret}, false, "the name must be"},
		{"broken template", webhook.Route{Name: "a", Secret: secret, Prompt: "{{.x"}, false, "platforms.webhook.routes.a.prompt"},
		{"bad target", webhook.Route{Name: "a", Secret: secret, Deliver: ":x"}, false, "platforms.webhook.routes.a.deliver"},
		{"to itself", webhook.Route{Name: "a", Secret: secret, Deliver: "webhook:a"}, false, "webhook platform itself"},
		{"deliver_only to the log", webhook.Route{Name: "a", Secret: secret, Deliver: "log", DeliverOnly: true}, false, "deliver_only needs a target"},
		{"unsigned on a public listener", webhook.Route{Name: "a", InsecureNoAuth: true}, true, "not a loopback address"},
		{"Hermes' INSECURE_NO_AUTH on a public listener", webhook.Route{Name: "a", Secret: "INSECURE_NO_AUTH"}, true, "not a loopback address"},
		{"unsigned on loopback", webhook.Route{Name: "a", InsecureNoAuth: true}, false, ""},
		{"Hermes' INSECURE_NO_AUTH on loopback", webhook.Route{Name: "a", Secret: "INSECURE_NO_AUTH"}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ad := webhook.New(webhook.Config{Routes: []webhook.Route{tc.route}, PublicListener: tc.public})
			errs := ad.Skipped()
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("skipped: %v", errs)
			case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)):
				t.Errorf("skipped: %v, want %q", errs, tc.want)
			case tc.want != "" && len(ad.InboundRoutes()) != 0:
				t.Errorf("a skipped route is routed: %v", ad.InboundRoutes())
			}
		})
	}
}

// An unsigned route on a loopback listener takes requests with no
// signature at all.
func TestInsecureNoAuth(t *testing.T) {
	s := make(sink, 1)
	_, hs := start(t, openStore(t), &recorder{}, s, webhook.Route{Name: "dev", InsecureNoAuth: true, Prompt: "hi {who}"})
	req := httptest.NewRequest(http.MethodPost, "/webhooks/dev", strings.NewReader(`{"who":"there"}`))
	rec := httptest.NewRecorder()
	hs["/webhooks/dev"].ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if m := <-s; m.Text != "hi there" || m.Source.Platform != webhook.Platform || m.Source.ChatID != "dev" || m.Source.UserID != "webhook:dev" {
		t.Errorf("message = %+v", m)
	}
}

// A deliver_only delivery that fails answers 502 and forgets its id, so
// the sender's retry is delivered.
func TestDeliverOnlyFailure(t *testing.T) {
	d := &recorder{fail: errors.New("telegram is down")}
	_, hs := start(t, openStore(t), d, make(sink), webhook.Route{Name: "n", Secret: secret, DeliverOnly: true, Deliver: "telegram:-100123", Prompt: "{msg}"})
	body := []byte(`{"msg":"deploy done"}`)
	hdr := map[string]string{"X-Request-Id": "r-1"}
	if rec := post(hs["/webhooks/n"], "n", body, hdr); rec.Code != http.StatusBadGateway || strings.Contains(rec.Body.String(), "telegram is down") {
		t.Fatalf("failed delivery: %d %s", rec.Code, rec.Body)
	}
	d.mu.Lock()
	d.fail = nil
	d.mu.Unlock()
	if rec := post(hs["/webhooks/n"], "n", body, hdr); rec.Code != http.StatusOK {
		t.Fatalf("retry: %d %s", rec.Code, rec.Body)
	}
	if rec := post(hs["/webhooks/n"], "n", body, hdr); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "duplicate") {
		t.Fatalf("retry after success: %d %s", rec.Code, rec.Body)
	}
	if got := d.all(); len(got) != 1 || got[0] != "telegram:-100123 deploy done" {
		t.Errorf("delivered %q", got)
	}
}

// The answer of a run goes where the route said for that delivery:
// deliver_extra's chat and thread rendered from its payload (Hermes'
// form), also for the gateway's notices in that session.
func TestSendFollowsTheDelivery(t *testing.T) {
	d := &recorder{}
	s := make(sink, 2)
	ad, hs := start(t, openStore(t), d, s,
		webhook.Route{Name: "alerts", Secret: secret, Deliver: "telegram", DeliverExtra: map[string]string{"chat_id": "{room}", "message_thread_id": "{topic}"}},
		webhook.Route{Name: "quiet", Secret: secret, Deliver: "log"})
	for i, body := range []string{`{"room":"-100123","topic":"42"}`, `{"room":"-100999"}`} {
		if rec := post(hs["/webhooks/alerts"], "alerts", []byte(body), map[string]string{"X-Request-Id": "a-" + string(rune('0'+i))}); rec.Code != http.StatusAccepted {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
	first, second := <-s, <-s
	ctx := context.Background()
	for _, m := range []herald.Message{second, first} {
		if _, err := ad.Send(ctx, m.Source.Target(), adapters.Outgoing{Text: "answer " + m.ID}); err != nil {
			t.Fatal(err)
		}
	}
	// a notice outside any delivery goes to the route's own target
	if _, err := ad.Send(ctx, herald.Target{Platform: webhook.Platform, ChatID: "alerts"}, adapters.Outgoing{Text: "notice"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"telegram:-100999 answer a-1", "telegram:-100123:42 answer a-0", "telegram notice"}
	if got := d.all(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("delivered %q, want %q", got, want)
	}
	if rec := post(hs["/webhooks/quiet"], "quiet", []byte(`{}`), nil); rec.Code != http.StatusAccepted {
		t.Fatalf("%d", rec.Code)
	}
	m := <-s
	if _, err := ad.Send(ctx, m.Source.Target(), adapters.Outgoing{Text: "to the log"}); err != nil || len(d.all()) != 3 {
		t.Errorf("deliver: log delivered: %v %q", err, d.all())
	}
}

// The signature docs/webhooks.md computes with openssl is the one the
// route checks.
func TestOpenSSLSignature(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl")
	}
	body := `{"action":"opened","pull_request":{"title":"it's \"quoted\" & spaced"}}`
	cmd := exec.Command("/bin/sh", "-c", `printf '%s' "$body" | openssl dgst -sha256 -hmac "$secret" | sed 's/^.* //'`)
	cmd.Env = append(os.Environ(), "body="+body, "secret="+secret)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{webhook.HeaderGitHub: {"sha256=" + strings.TrimSpace(string(out))}}
	if !webhook.Verify(h, []byte(body), secret) {
		t.Errorf("openssl's signature %q refused; want %s", out, webhook.Sign([]byte(body), secret))
	}
}
