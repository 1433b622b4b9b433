package gateway

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// lateModel answers "first" only once the turn has been cancelled (the
// answer arrives just after an interrupt); everything else at once.
type lateModel struct{ started chan struct{} }

func (l lateModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if req.Messages[len(req.Messages)-1].Content == "first" {
		l.started <- struct{}{}
		<-ctx.Done()
	}
	return agent.Echo{}.Complete(context.Background(), req)
}

// storedSaid is what the open session of a fake DM chat remembers the
// assistant saying.
func storedSaid(t *testing.T, st *sessions.Store, chat string) []string {
	t.Helper()
	s, err := st.OpenSession(context.Background(), "agent:main:fake:dm:"+chat)
	if err != nil || s == nil {
		t.Fatalf("open session of %s: %v %v", chat, s, err)
	}
	ms, err := st.Messages(context.Background(), s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		if m.Role == openai.ChatMessageRoleAssistant {
			out = append(out, m.Content)
		}
	}
	return out
}

// An answer that arrives after its turn was interrupted was never shown,
// so it is not stored either: the next turn does not remember saying it.
func TestInterruptedAnswerNotStored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake"}
		model := lateModel{started: make(chan struct{}, 1)}
		b := newBubble(t, ad, model)
		defer b.stop()
		first := b.send("c1", "u1", "first")
		<-model.started
		second := b.send("c1", "u1", "second")
		if o := outcome(t, first); o.Status != adapters.StatusInterrupted {
			t.Fatalf("first: %+v", o)
		}
		if o := outcome(t, second); o.Status != adapters.StatusDone {
			t.Fatalf("second: %+v", o)
		}
		sent := ad.texts()
		said := storedSaid(t, b.store, "c1")
		if !slices.Equal(said, sent) {
			t.Fatalf("stored as said %q, delivered %q", said, sent)
		}
	})
}

// An answer complete before the interrupting message came is delivered
// (and stored): the newer message is answered next, with it in view.
func TestAnswerCompleteBeforeInterruptDelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, nil)
		defer b.stop()
		entered := make(chan struct{}, 1)
		// the answer to "first" is finished; transforming it takes until
		// the turn is interrupted
		register(b.reg, hooks.TransformLLMOutputHook, func(ctx context.Context, ev hooks.Event) (any, error) {
			if ev.Payload.(*hooks.LLMOutput).ResponseText == echo+"first" {
				entered <- struct{}{}
				<-ctx.Done()
			}
			return nil, nil
		})
		first := b.send("c1", "u1", "first")
		<-entered
		second := b.send("c1", "u1", "second")
		if o := outcome(t, first); o.Status != adapters.StatusDone || o.Err != nil {
			t.Fatalf("first: %+v", o)
		}
		outcome(t, second)
		want := []string{echo + "first", echo + "second"}
		if sent := ad.texts(); !slices.Equal(sent, want) {
			t.Fatalf("delivered %q, want %q", sent, want)
		}
		if said := storedSaid(t, b.store, "c1"); !slices.Equal(said, want) {
			t.Fatalf("stored %q, want %q", said, want)
		}
	})
}

// ingestNotes is a pre_gateway_dispatch hook that records "note: …"
// messages without a turn.
func ingestNotes(reg *hooks.Registry) {
	register(reg, hooks.PreGatewayDispatchHook, func(ctx context.Context, ev hooks.Event) (any, error) {
		if strings.HasPrefix(ev.Payload.(*hooks.Dispatch).Message.Text, "note:") {
			return map[string]any{"action": "skip", "ingest": true}, nil
		}
		return nil, nil
	})
}

// turnPastReset answers "one" in chat c1 of a bubble whose sessions reset
// after an idle hour (swept every sweep), then starts a turn for "long"
// that is still running two hours later; releasing g ends it.
func turnPastReset(t *testing.T, sweep time.Duration) (b *bubble, g *gate, ad *fakeAdapter, one adapters.Outcome, long *adapters.Receipt) {
	g, ad = newGate(), &fakeAdapter{name: "fake"}
	b = newBubble(t, ad, g, func(c *Config) {
		c.Reset = sessions.ResetPolicy{Mode: sessions.ResetIdle, IdleMinutes: 60}
		c.SweepInterval = sweep
	})
	ingestNotes(b.reg)
	g.release <- struct{}{}
	one = outcome(t, b.send("c1", "u1", "one"))
	long = b.send("c1", "u1", "long")
	<-g.started // "one"
	<-g.started // "long"
	time.Sleep(2 * time.Hour)
	return b, g, ad, one, long
}

// A message ingested while a turn runs past the reset boundary joins the
// turn's session; it does not end the session under the turn.
func TestIngestDuringTurnDoesNotReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, g, _, one, long := turnPastReset(t, 24*time.Hour)
		defer b.stop()
		if o := outcome(t, b.send("c1", "u1", "note: the customer called")); o.Status != adapters.StatusSkipped {
			t.Fatalf("note: %+v", o)
		}
		g.release <- struct{}{}
		o := outcome(t, long)
		if o.Status != adapters.StatusDone || o.Err != nil || o.SessionID != one.SessionID {
			t.Fatalf("the turn across the boundary: %+v (session was %s)", o, one.SessionID)
		}
		synctest.Wait()
		if n := len(b.rec.payloads(hooks.OnSessionFinalizeHook)); n != 0 {
			t.Fatalf("%d sessions finalized under a running turn", n)
		}
		s, err := b.store.Session(context.Background(), one.SessionID)
		if err != nil || s.EndedAt != nil {
			t.Fatalf("session %+v %v", s, err)
		}
		ms, _ := b.store.Messages(context.Background(), one.SessionID, 0)
		var texts []string
		for _, m := range ms {
			texts = append(texts, m.Content)
		}
		want := []string{"one", echo + "one", "note: the customer called", "long", echo + "long"}
		if !slices.Equal(texts, want) {
			t.Fatalf("transcript %q, want %q", texts, want)
		}
	})
}

// An ingest that fails (a full disk) while a turn runs leaves the turn's
// session alone: the turn still commits and answers.
func TestFailedIngestDuringTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, g, ad, _, long := turnPastReset(t, 24*time.Hour)
		defer b.stop()
		capStore(t, b.store, true)
		outcome(t, b.send("c1", "u1", "note: "+bigText))
		if h := b.runner.Health()[StoreKey]; !strings.HasPrefix(h, "failed") {
			t.Fatalf("store health after a failed ingest: %q", h)
		}
		capStore(t, b.store, false)
		g.release <- struct{}{}
		if o := outcome(t, long); o.Status != adapters.StatusDone || o.Err != nil {
			t.Fatalf("the turn: %+v", o)
		}
		if sent := ad.texts(); sent[len(sent)-1] != echo+"long" {
			t.Fatalf("delivered %q", sent)
		}
	})
}

// Deliver records what it sent in the chat's sessions whatever the chat
// type: here a group with a session per participant.
func TestDeliverRecordsInGroupSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, nil, func(c *Config) { c.Keys = sessions.KeyOptions{GroupPerUser: true} })
		defer b.stop()
		var ids []string
		for _, u := range []string{"u1", "u2"} {
			o := outcome(t, b.runner.Receive(context.Background(), herald.Message{Text: "hi from " + u,
				Source: herald.Source{Platform: "fake", ChatID: "g1", ChatType: herald.ChatGroup, UserID: u}}))
			ids = append(ids, o.SessionID)
		}
		if err := b.runner.Deliver(context.Background(), herald.Target{Platform: "fake", ChatID: "g1"}, "the nightly report"); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			ms, _ := b.store.Messages(context.Background(), id, 0)
			if last := ms[len(ms)-1]; last.Role != "assistant" || last.Content != "the nightly report" {
				t.Fatalf("session %s ends with %+v", id, last)
			}
		}
		// and the chat's next turn has it in its history
		c := b.runner.chat("agent:main:fake:group:g1:u1")
		c.mu.Lock()
		last := c.history[len(c.history)-1].Content
		c.mu.Unlock()
		if last != "the nightly report" {
			t.Fatalf("history ends with %q", last)
		}
	})
}

// When the text was sent but cannot be recorded, Deliver says so.
func TestDeliverReportsUnrecorded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, nil)
		defer b.stop()
		outcome(t, b.send("c1", "u1", "hi"))
		capStore(t, b.store, true)
		err := b.runner.Deliver(context.Background(), herald.Target{Platform: "fake", ChatID: "c1"}, bigText)
		if !errors.Is(err, ErrNotRecorded) {
			t.Fatalf("Deliver: %v", err)
		}
		if sent := ad.texts(); sent[len(sent)-1] != bigText {
			t.Fatal("not sent")
		}
		if h := b.runner.Health()[StoreKey]; !strings.HasPrefix(h, "failed") {
			t.Fatalf("store health %q", h)
		}
	})
}

// The sweep leaves a chat alone while its turn runs, however long.
func TestSweepSparesRunningTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, g, _, one, long := turnPastReset(t, 5*time.Minute) // 24 sweeps so far
		defer b.stop()
		synctest.Wait()
		if n := len(b.rec.payloads(hooks.OnSessionFinalizeHook)); n != 0 {
			t.Fatalf("the sweep finalized %d sessions under a running turn", n)
		}
		g.release <- struct{}{}
		if o := outcome(t, long); o.SessionID != one.SessionID {
			t.Fatalf("the turn answered in %s, not %s", o.SessionID, one.SessionID)
		}
		// idle now, the next sweeps end it
		time.Sleep(2 * time.Hour)
		synctest.Wait()
		if n := len(b.rec.payloads(hooks.OnSessionFinalizeHook)); n != 1 {
			t.Fatalf("finalized %d times once idle", n)
		}
	})
}

// A user paired on one platform is not let in on another.
func TestPairingIsPerPlatform(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, nil, func(c *Config) {
			c.Auth = map[herald.Platform]PlatformAuth{"fake": {AllowedUsers: []string{"owner"}, UnauthorizedDM: DMIgnore}}
		})
		defer b.stop()
		ctx := context.Background()
		pair := func(platform string) {
			req, err := b.store.RequestPairing(ctx, platform, "u9", "", "c9", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.store.ApprovePairing(ctx, platform, req.Code, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		pair("local")
		if o := outcome(t, b.send("c9", "u9", "hello")); o.Status != adapters.StatusSkipped {
			t.Fatalf("paired on local, let in on fake: %+v", o)
		}
		pair("fake")
		if o := outcome(t, b.send("c9", "u9", "hello again")); o.Status != adapters.StatusDone {
			t.Fatalf("paired on fake, kept out: %+v", o)
		}
	})
}
