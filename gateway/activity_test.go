package gateway

import (
	"testing"

	"github.com/heraldgw/herald/adapters"
)

// Activity counts the turn a chat runs and the messages queued behind it.
func TestActivity(t *testing.T) {
	g := newGate()
	h := newHarness(t, g, queueMode)
	if a := h.runner.Activity(); a.RunningTurns != 0 || a.QueuedMessages != 0 {
		t.Fatalf("idle: %+v", a)
	}
	first := h.async(msg{User: "u1", Text: "first"})
	g.wait(t)
	if r := h.post(msg{User: "u1", Text: "second"}); r.Status != adapters.StatusQueued {
		t.Fatalf("second: %+v", r)
	}
	if a := h.runner.Activity(); a.RunningTurns != 1 || a.QueuedMessages != 1 || a.Chats != 1 {
		t.Fatalf("one turn running, one message queued: %+v", a)
	}
	g.release <- struct{}{}
	recv(t, first)
	if got := g.wait(t); got != "second" {
		t.Fatalf("next turn %q", got)
	}
	if a := h.runner.Activity(); a.RunningTurns != 1 || a.QueuedMessages != 0 {
		t.Fatalf("the queued message runs: %+v", a)
	}
	g.release <- struct{}{}
}
