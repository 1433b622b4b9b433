package slack_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/slack"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/agent/agenttest"
)

// taken is a message the receiptSink took, with the receipt the test
// resolves as the gateway would.
type taken struct {
	m herald.Message
	r *adapters.Receipt
}

// receiptSink hands each message on with an unresolved receipt.
type receiptSink chan taken

func (s receiptSink) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	r := adapters.NewReceipt()
	select {
	case s <- taken{m, r}:
	case <-ctx.Done():
	}
	return r
}

func (s receiptSink) next(t *testing.T) taken {
	t.Helper()
	select {
	case x := <-s:
		return x
	case <-time.After(wait):
		t.Fatal("no message reached the sink")
		return taken{}
	}
}

func TestStatusWhileWorking(t *testing.T) {
	sink := make(receiptSink, 4)
	srv, ad := startAdapter(t, sink)
	ctx := ctxT(t)

	// no message in work there: nothing to show
	if err := ad.Typing(ctx, herald.Target{Platform: herald.PlatformSlack, ChatID: "DU1"}); err != nil || srv.Calls("assistant.threads.setStatus") != 0 {
		t.Errorf("Typing with no message in work = %v, %d setStatus calls", err, srv.Calls("assistant.threads.setStatus"))
	}
	srv.DM("U1", "think hard")
	x := sink.next(t)
	for range 3 { // the gateway renews it every few seconds
		if err := ad.Typing(ctx, x.m.Source.Target()); err != nil {
			t.Fatal(err)
		}
	}
	want := slacktest.StatusCall{Channel: "DU1", ThreadTS: x.m.ID, Status: slack.StatusText}
	if got := srv.Statuses(); !slices.Equal(got, []slacktest.StatusCall{want}) {
		t.Errorf("statuses while working = %+v, want once %+v", got, want)
	}
	x.r.Resolve(adapters.Outcome{Status: adapters.StatusDone})
	got, err := srv.WaitStatuses(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got[1].Status != "" || got[1].ThreadTS != x.m.ID {
		t.Errorf("status after the turn = %+v, want cleared", got[1])
	}
	if n := len(srv.ReactionCalls()); n != 0 {
		t.Errorf("%d reactions calls with a status available, want 0", n)
	}
}

// An app that cannot set statuses (missing_scope) shows :eyes: on the
// message instead, removed at the end, and does not try statuses again.
func TestReactionWhenNoStatus(t *testing.T) {
	sink := make(receiptSink, 4)
	srv, ad := startAdapter(t, sink)
	ctx := ctxT(t)
	srv.FailNext("assistant.threads.setStatus", 1, slacktest.Failure{Error: "missing_scope"})

	for i, text := range []string{"first", "second"} {
		in := srv.Mention("C3", "U1", text)
		x := sink.next(t)
		for range 2 {
			if err := ad.Typing(ctx, x.m.Source.Target()); err != nil {
				t.Fatal(err)
			}
		}
		if got := srv.Reactions("C3", in.TS); !slices.Equal(got, []string{slack.WorkingReaction}) {
			t.Errorf("message %d: reactions while working = %v, want [eyes]", i, got)
		}
		x.r.Resolve(adapters.Outcome{Status: adapters.StatusDone})
		if _, err := srv.WaitReactionCalls(ctx, 2*(i+1)); err != nil {
			t.Fatal(err)
		}
		if got := srv.Reactions("C3", in.TS); len(got) != 0 {
			t.Errorf("message %d: reactions after the turn = %v, want none", i, got)
		}
	}
	if n := srv.Calls("assistant.threads.setStatus"); n != 1 {
		t.Errorf("setStatus called %d times, want 1 (missing_scope is remembered)", n)
	}
}

// With reactions: true, :eyes: shows while the turn runs and becomes
// :white_check_mark: when it answered, :x: when it failed; a message
// whose turn never started (interrupted while queued) gets none.
func TestProcessingReactions(t *testing.T) {
	sink := make(receiptSink, 4)
	srv, ad := startAdapter(t, sink, func(c *slack.Config) { c.Reactions = true })
	ctx := ctxT(t)

	for _, tc := range []struct {
		out  adapters.Outcome
		want []string
	}{
		{adapters.Outcome{Status: adapters.StatusDone}, []string{slack.DoneReaction}},
		{adapters.Outcome{Status: adapters.StatusDone, Err: errors.New("model down")}, []string{slack.FailedReaction}},
	} {
		in := srv.DM("U1", "go")
		x := sink.next(t)
		calls := len(srv.ReactionCalls())
		if err := ad.Typing(ctx, x.m.Source.Target()); err != nil {
			t.Fatal(err)
		}
		if got := srv.Reactions(in.Channel, in.TS); !slices.Equal(got, []string{slack.WorkingReaction}) {
			t.Errorf("reactions while working = %v, want [eyes]", got)
		}
		x.r.Resolve(tc.out)
		if _, err := srv.WaitReactionCalls(ctx, calls+3); err != nil {
			t.Fatal(err)
		}
		if got := srv.Reactions(in.Channel, in.TS); !slices.Equal(got, tc.want) {
			t.Errorf("outcome %+v: reactions = %v, want %v", tc.out, got, tc.want)
		}
	}
	in := srv.DM("U1", "never started")
	x := sink.next(t)
	calls := len(srv.ReactionCalls())
	x.r.Resolve(adapters.Outcome{Status: adapters.StatusInterrupted})
	// a message after it is handled: its feedback came after the first's
	srv.DM("U1", "next")
	y := sink.next(t)
	if err := ad.Typing(ctx, y.m.Source.Target()); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.WaitReactionCalls(ctx, calls+1); err != nil {
		t.Fatal(err)
	}
	if got := srv.Reactions(in.Channel, in.TS); len(got) != 0 {
		t.Errorf("a message whose turn never ran got reactions %v", got)
	}
}

// Through the gateway: the status shows while the model works and is
// cleared once the answer is posted.
func TestGatewayStatusWhileTurnRuns(t *testing.T) {
	srv := newFake(t)
	llm := agenttest.New(t)
	llm.Default = agenttest.Reply{Func: func(*agenttest.Request) agenttest.Reply {
		// answer only once the status shows
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if _, err := srv.WaitStatuses(ctx, 1); err != nil {
			return agenttest.Reply{Status: 500}
		}
		return agenttest.Reply{Content: "done thinking"}
	}}
	startGateway(t, srv, agent.NewOpenAI(llm.BaseURL(), "sk-test", nil))
	in := srv.DM("U1", "a hard question")
	if _, err := srv.WaitPosts(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	got, err := srv.WaitStatuses(ctxT(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Status != slack.StatusText || got[0].ThreadTS != in.TS || got[len(got)-1].Status != "" {
		t.Errorf("statuses = %+v, want set on %s then cleared", got, in.TS)
	}
}

// Through the gateway, for an app without statuses: :eyes: on the
// message while the model works, gone once the answer is posted.
func TestGatewayReactionWithoutStatus(t *testing.T) {
	srv := newFake(t)
	srv.FailNext("assistant.threads.setStatus", 1, slacktest.Failure{Error: "not_allowed"})
	llm := agenttest.New(t)
	llm.Default = agenttest.Reply{Func: func(*agenttest.Request) agenttest.Reply {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if _, err := srv.WaitReactionCalls(ctx, 1); err != nil {
			return agenttest.Reply{Status: 500}
		}
		return agenttest.Reply{Content: "done"}
	}}
	startGateway(t, srv, agent.NewOpenAI(llm.BaseURL(), "sk-test", nil))
	in := srv.Mention("C4", "U1", "look")
	if _, err := srv.WaitMessages(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	calls, err := srv.WaitReactionCalls(ctxT(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if calls[0].Method != "reactions.add" || calls[0].TS != in.TS || calls[0].Name != slack.WorkingReaction || calls[1].Method != "reactions.remove" {
		t.Errorf("reactions calls = %+v, want :eyes: added on %s then removed", calls, in.TS)
	}
	if got := srv.Reactions("C4", in.TS); len(got) != 0 {
		t.Errorf("reactions left on the message: %v", got)
	}
}
