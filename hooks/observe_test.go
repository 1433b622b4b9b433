package hooks

import (
	"context"
	"errors"
	"testing"
)

// Each firing with attachments reports every attachment's answer once
// the last has answered; internal watchers are not attachments.
func TestObserveResults(t *testing.T) {
	r := NewRegistry(nil)
	defer r.Close(context.Background())
	got := make(chan PointResult, 4)
	r.ObserveResults(func(p PointResult) { got <- p })
	r.Subscribe(Subscription{Name: "guard", Attach: AttachGo, Events: []string{PreToolCallHook},
		Handler: func(ctx context.Context, ev Event) (any, error) { return Block("not today"), nil }})
	r.Subscribe(Subscription{Name: "late", Attach: AttachShell, Concurrent: true, Priority: -1, Events: []string{PreToolCallHook},
		Handler: func(ctx context.Context, ev Event) (any, error) { return nil, nil }})
	r.Subscribe(Subscription{Name: "watch", Attach: AttachGo, Events: []string{AgentStartEv},
		Handler: func(ctx context.Context, ev Event) (any, error) { return nil, errors.New("broken") }})
	points := make(chan uint64, 8)
	r.Subscribe(Subscription{Name: "events", Attach: AttachInternal, Events: []string{"*"},
		Handler: func(ctx context.Context, ev Event) (any, error) { points <- ev.Point; return nil, nil }})

	if d := r.PreToolCall(context.Background(), &PreToolCall{ToolName: "terminal"}); d.Action != "block" {
		t.Fatalf("decision %+v", d)
	}
	p := <-got
	if p.Event != PreToolCallHook || len(p.Attachments) != 1 || p.Attachments[0].Name != "guard" {
		t.Fatalf("pre_tool_call result: %+v", p)
	}
	if o, d := Outcome(p.Attachments[0].Value, p.Attachments[0].Err); o != "block" || d != "not today" {
		t.Fatalf("outcome %q %q", o, d)
	}
	r.Emit(AgentStartEv, &AgentStart{SessionID: "s"})
	p2 := <-got
	if p2.Event != AgentStartEv || len(p2.Attachments) != 1 || p2.Attachments[0].Name != "watch" || p2.Point == p.Point {
		t.Fatalf("agent:start result: %+v", p2)
	}
	if o, d := Outcome(nil, p2.Attachments[0].Err); o != "error" || d != "broken" {
		t.Fatalf("outcome %q %q", o, d)
	}
	if a, b := <-points, <-points; a != p.Point || b != p2.Point {
		t.Fatalf("internal watcher saw points %d, %d; want %d, %d", a, b, p.Point, p2.Point)
	}
	// a panicking observer answers with its panic
	r.Subscribe(Subscription{Name: "boom", Attach: AttachGo, Events: []string{AgentEndEv},
		Handler: func(ctx context.Context, ev Event) (any, error) { panic("kaboom") }})
	r.Emit(AgentEndEv, &AgentEnd{})
	<-points
	if p3 := <-got; len(p3.Attachments) != 1 || p3.Attachments[0].Err == nil || p3.Attachments[0].Err.Error() != "panic: kaboom" {
		t.Fatalf("agent:end result: %+v", p3)
	}
	// no attachments: no result
	r.Emit(SessionEndEv, nil)
	<-points
	select {
	case x := <-got:
		t.Fatalf("result for a point without attachments: %+v", x)
	default:
	}
}

// A Go callback that answers a typed nil (a *DispatchDecision nil: "no
// decision") is no decision, not a crash of the dispatch it watched.
func TestOutcomeOfTypedNil(t *testing.T) {
	for _, v := range []any{(*DispatchDecision)(nil), (*ToolDecision)(nil), (*LLMContext)(nil), (*Replace)(nil), (*CommandDecision)(nil)} {
		if o, d := Outcome(v, nil); o != "none" || d != "" {
			t.Errorf("Outcome(%T nil) = %q %q", v, o, d)
		}
	}
}
