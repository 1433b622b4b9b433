package gateway

import (
	"context"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/agent"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/hooks"
)

func queueMode(c *Config) { c.BusyMode = "queue" }

func TestBusyInterrupt(t *testing.T) {
	g := newGate()
	h := newHarness(t, g)
	first := h.async(msg{User: "u1", Text: "first"})
	g.wait(t)
	second := h.async(msg{User: "u1", Text: "second"})
	if r := recv(t, first); r.Status != adapters.StatusInterrupted || len(r.Replies) != 0 {
		t.Fatalf("first: %+v", r)
	}
	if got := g.wait(t); got != "second" {
		t.Fatalf("model got %q", got)
	}
	g.release <- struct{}{}
	if r := recv(t, second); r.Status != adapters.StatusDone || r.text() != echo+"second" {
		t.Fatalf("second: %+v", r)
	}
	// the second turn saw the interrupted message as context
	g.mu.Lock()
	last := g.seen[len(g.seen)-1]
	g.mu.Unlock()
	var users []string
	for _, m := range last {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if strings.Join(users, ",") != "first,second" {
		t.Fatalf("context of the answer: %v", users)
	}
	h.rec.waitFor(t, []string{"agent:start", "agent:end", "agent:start", "agent:end"}, hooks.AgentStartEv, hooks.AgentEndEv)
	if end := h.rec.payloads(hooks.AgentEndEv)[0].(*hooks.AgentEnd); !end.Failed {
		t.Fatalf("interrupted turn's agent:end %+v", end)
	}
}

func TestBusyQueueAndCommands(t *testing.T) {
	g := newGate()
	h := newHarness(t, g, queueMode)
	first := h.async(msg{User: "u1", Text: "first"})
	g.wait(t)
	// plain text queues without interrupting
	if r := h.post(msg{User: "u1", Text: "second"}); r.Status != adapters.StatusQueued {
		t.Fatalf("queued text: %+v", r)
	}
	// commands bypass the busy chat
	if r := h.post(msg{User: "u1", Text: "/status"}); !strings.Contains(r.text(), "State: running a turn (1 queued)") {
		t.Fatalf("/status: %q", r.text())
	}
	if r := h.post(msg{User: "u1", Text: "/q third"}); r.Status != adapters.StatusQueued || r.text() != "Queued for the next turn. (2 queued)" {
		t.Fatalf("/queue: %+v", r)
	}
	if r := h.post(msg{User: "u1", Text: "/model"}); r.text() != "Agent is running — wait or /stop first, then switch models." {
		t.Fatalf("/model: %q", r.text())
	}
	// unknown commands and paths are text: queued
	if r := h.post(msg{User: "u1", Text: "/tmp/x"}); r.Status != adapters.StatusQueued {
		t.Fatalf("/tmp/x: %+v", r)
	}
	// a busy chat never blocks another chat
	other := h.async(msg{Chat: "c2", User: "u2", Text: "elsewhere"})
	if got := g.wait(t); got != "elsewhere" {
		t.Fatalf("model got %q", got)
	}
	g.releaseOnly("elsewhere")
	if r := recv(t, other); r.text() != echo+"elsewhere" {
		t.Fatalf("other chat: %+v", r)
	}
	// FIFO, one turn each, not merged
	g.release <- struct{}{}
	if r := recv(t, first); r.text() != echo+"first" {
		t.Fatalf("first: %+v", r)
	}
	for _, want := range []string{"second", "third", "/tmp/x"} {
		if got := g.wait(t); got != want {
			t.Fatalf("next turn %q, want %q", got, want)
		}
		g.release <- struct{}{}
	}
	waitTranscript(t, h, 8)
}

func waitTranscript(t *testing.T, h *harness, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tr := h.transcript(sourceC1())
		if len(tr) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("transcript has %d messages, want %d", len(tr), n)
		}
		time.Sleep(5 * time.Millisecond) // polling the store; no event to wait on
	}
}

func TestBusyStopAndNew(t *testing.T) {
	t.Run("stop cancels now and drops the queue", func(t *testing.T) {
		g := newGate()
		h := newHarness(t, g, queueMode)
		first := h.async(msg{User: "u1", Text: "first"})
		g.wait(t)
		h.post(msg{User: "u1", Text: "queued"})
		if r := h.post(msg{User: "u1", Text: "/stop"}); r.text() != "⏹ Stopped." {
			t.Fatalf("/stop: %q", r.text())
		}
		if r := recv(t, first); r.Status != adapters.StatusInterrupted {
			t.Fatalf("first after /stop: %+v", r)
		}
		if r := h.post(msg{User: "u1", Text: "/status"}); !strings.Contains(r.text(), "State: idle") {
			t.Fatalf("status after stop: %q", r.text())
		}
	})
	t.Run("new interrupts then resets", func(t *testing.T) {
		g := newGate()
		h := newHarness(t, g)
		first := h.async(msg{User: "u1", Text: "first"})
		g.wait(t)
		r := h.post(msg{User: "u1", Text: "/new"})
		if !strings.HasPrefix(r.text(), "✨ New session started.") {
			t.Fatalf("/new: %q", r.text())
		}
		if f := recv(t, first); f.Status != adapters.StatusInterrupted {
			t.Fatalf("first: %+v", f)
		}
		next := h.async(msg{User: "u1", Text: "after"})
		g.wait(t)
		g.release <- struct{}{}
		if n := recv(t, next); n.SessionID == "" || n.SessionID == f0(first) || n.text() != echo+"after" {
			t.Fatalf("after /new: %+v", n)
		}
		g.mu.Lock()
		hist := g.seen[len(g.seen)-1]
		g.mu.Unlock()
		for _, m := range hist {
			if m.Content == "first" {
				t.Fatal("the new session saw the old one's messages")
			}
		}
	})
}

func f0(<-chan resp) string { return "" }

// stubborn ends a call only when released, whatever its context says.
type stubborn struct {
	*gate
	quit <-chan struct{}
}

func (s stubborn) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	s.started <- req.Messages[len(req.Messages)-1].Content
	select {
	case <-s.release:
	case <-s.quit:
	}
	return agent.Echo{}.Complete(context.Background(), req)
}

// Several texts sent while a turn is being interrupted are answered as
// one message.
func TestBusyInterruptFoldsTexts(t *testing.T) {
	g := newGate()
	h := newHarness(t, stubborn{g, t.Context().Done()})
	first := h.async(msg{User: "u1", Text: "first"})
	g.wait(t)
	queued := func(n int) func() bool {
		return func() bool {
			c := h.runner.chat("agent:main:local:dm:c1")
			c.mu.Lock()
			defer c.mu.Unlock()
			return len(c.queue) == n
		}
	}
	// both are queued behind the turn they interrupted, in order
	second := h.async(msg{User: "u1", Text: "second"})
	waitFor(t, queued(1))
	third := h.async(msg{User: "u1", Text: "third"})
	waitFor(t, queued(2))
	g.release <- struct{}{}
	if r := recv(t, first); r.Status != adapters.StatusInterrupted {
		t.Fatalf("first %+v", r)
	}
	if got := g.wait(t); got != "second\nthird" {
		t.Fatalf("model got %q", got)
	}
	g.release <- struct{}{}
	if r := recv(t, second); r.Status != adapters.StatusInterrupted || len(r.Replies) != 0 {
		t.Fatalf("second %+v", r)
	}
	if r := recv(t, third); r.text() != echo+"second\nthird" {
		t.Fatalf("third %+v", r)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(time.Millisecond) // polling gateway state; no event to wait on
	}
}
