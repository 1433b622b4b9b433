package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
)

const echo = agent.EchoPrefix

// Step 2: pre_gateway_dispatch.
func TestPreGatewayDispatch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answers   []any // one Go hook per answer, in order
		text      string
		status    string
		replies   []string
		ingested  bool
		pairsOnly bool // the user is unknown: without a skip they would get a code
	}{
		{name: "skip sends nothing and pairs nobody", answers: []any{&hooks.DispatchDecision{Action: "skip", Reason: "test"}}, text: "hi", status: adapters.StatusSkipped, pairsOnly: true},
		{name: "skip with ingest records the message", answers: []any{map[string]any{"action": "skip", "ingest": true}}, text: "customer says hi", status: adapters.StatusSkipped, ingested: true},
		{name: "rewrite replaces the text", answers: []any{&hooks.DispatchDecision{Action: "rewrite", Text: "rewritten", TextSet: true}}, text: "hi", status: adapters.StatusDone, replies: []string{echo + "rewritten"}},
		{name: "rewrite to /new is a command", answers: []any{map[string]any{"action": "rewrite", "text": "/new"}}, text: "hi", status: adapters.StatusDone, replies: []string{"✨ New session started."}},
		{name: "allow wins over a later skip", answers: []any{map[string]any{"action": "allow"}, map[string]any{"action": "skip"}}, text: "hi", status: adapters.StatusDone, replies: []string{echo + "hi"}},
		{name: "unknown actions are passed over", answers: []any{map[string]any{"action": "frobnicate"}, map[string]any{"action": "skip"}}, text: "hi", status: adapters.StatusSkipped},
		{name: "a failing hook means normal dispatch", answers: []any{errors.New("boom")}, text: "hi", status: adapters.StatusDone, replies: []string{echo + "hi"}},
		{name: "a panicking hook means normal dispatch", answers: []any{"panic"}, text: "hi", status: adapters.StatusDone, replies: []string{echo + "hi"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []harnessOpt
			user := "u1"
			if tc.pairsOnly {
				opts = append(opts, allowOnly("owner"), func(c *Config) { c.UnauthorizedDM = DMPair })
				user = "stranger"
			}
			h := newHarness(t, nil, opts...)
			for i, a := range tc.answers {
				a := a
				register(h.reg, hooks.PreGatewayDispatchHook, func(ctx context.Context, ev hooks.Event) (any, error) {
					if err, ok := a.(error); ok {
						return nil, err
					}
					if a == "panic" {
						panic("hook panicked")
					}
					return a, nil
				})
				_ = i
			}
			r := h.post(msg{User: user, Text: tc.text})
			if r.Status != tc.status {
				t.Fatalf("status %q, want %q (replies %v)", r.Status, tc.status, r.texts())
			}
			if len(r.Replies) != len(tc.replies) {
				t.Fatalf("replies %q, want %q", r.texts(), tc.replies)
			}
			for i, want := range tc.replies {
				if !strings.HasPrefix(r.Replies[i].Text, want) {
					t.Fatalf("reply %d %q, want prefix %q", i, r.Replies[i].Text, want)
				}
			}
			if tc.pairsOnly {
				_, pending, _ := h.store.Pairings(context.Background(), h.runner.cfg.Now())
				if len(pending) != 0 {
					t.Fatalf("a skipped message made a pairing code: %v", pending)
				}
			}
			tr := h.transcript(herald.Source{ChatID: "c1"})
			if tc.ingested {
				if len(tr) != 1 || tr[0].Role != "user" || tr[0].Content != tc.text {
					t.Fatalf("transcript %+v", tr)
				}
			} else if tc.status == adapters.StatusSkipped && len(tr) != 0 {
				t.Fatalf("skip stored %+v", tr)
			}
		})
	}
}

// The out-of-process payload: the message as JSON under "event".
func TestDispatchPayloadJSON(t *testing.T) {
	ctxJSON, err := hooks.Context(&hooks.Dispatch{Message: herald.Message{ID: "m1", Text: "hi",
		Source: herald.Source{Platform: "local", ChatID: "c1", ChatType: "dm", UserID: "u1", UserName: "ann", ThreadID: "t"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"event":{`, `"text":"hi"`, `"message_id":"m1"`, `"internal":false`, `"platform":"local"`, `"chat_id":"c1"`, `"chat_type":"dm"`, `"user_id":"u1"`, `"user_name":"ann"`, `"thread_id":"t"`} {
		if !strings.Contains(string(ctxJSON), k) {
			t.Errorf("payload %s lacks %s", ctxJSON, k)
		}
	}
}

// Step 1: internal messages skip pre_gateway_dispatch and auth.
func TestInternalBypassesHooksAndAuth(t *testing.T) {
	h := newHarness(t, nil, allowOnly("owner"))
	called := make(chan struct{}, 1)
	register(h.reg, hooks.PreGatewayDispatchHook, func(ctx context.Context, ev hooks.Event) (any, error) {
		called <- struct{}{}
		return map[string]any{"action": "skip"}, nil
	})
	rec := h.runner.Receive(context.Background(), herald.Message{Text: "cron says hi", Internal: true,
		Source: herald.Source{Platform: herald.PlatformLocal, ChatID: "c9", ChatType: herald.ChatDM}})
	<-rec.Done()
	if o := rec.Outcome(); o.Status != adapters.StatusDone || o.Err != nil {
		t.Fatalf("internal outcome %+v", o)
	}
	select {
	case <-called:
		t.Fatal("pre_gateway_dispatch ran for an internal message")
	default:
	}
	_, pending, _ := h.store.Pairings(context.Background(), h.runner.cfg.Now())
	if len(pending) != 0 {
		t.Fatal("internal message made a pairing code")
	}
}

// Step 3: a message without a user id is dropped.
func TestMissingUserDropped(t *testing.T) {
	h := newHarness(t, nil)
	r := h.post(msg{User: "", Text: "hi"})
	if r.Status != adapters.StatusSkipped || len(r.Replies) != 0 {
		t.Fatalf("%+v", r)
	}
}

func TestDedup(t *testing.T) {
	h := newHarness(t, nil)
	a := h.post(msg{User: "u1", Text: "hi", ID: "same"})
	b := h.post(msg{User: "u1", Text: "hi", ID: "same"})
	if a.Status != adapters.StatusDone || b.Status != adapters.StatusSkipped || len(b.Replies) != 0 {
		t.Fatalf("first %+v second %+v", a, b)
	}
	c := h.post(msg{Chat: "other", User: "u1", Text: "hi", ID: "same"})
	if c.Status != adapters.StatusDone {
		t.Fatalf("same id in another chat: %+v", c)
	}
}

func TestRequireMentionInGroups(t *testing.T) {
	h := newHarness(t, nil, func(c *Config) {
		c.Auth[herald.PlatformLocal] = PlatformAuth{TrustAll: true, RequireMention: true}
	})
	if r := h.post(msg{User: "u1", Type: "group", Text: "ambient", Mentioned: ptr(false)}); r.Status != adapters.StatusSkipped {
		t.Fatalf("ambient group message: %+v", r)
	}
	if r := h.post(msg{User: "u1", Type: "group", Text: "hey bot", Mentioned: ptr(true)}); r.Status != adapters.StatusDone || r.text() != echo+"hey bot" {
		t.Fatalf("mention: %+v", r)
	}
}
