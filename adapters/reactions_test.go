package adapters_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// receiptSink hands out the receipts it is given, in order.
type receiptSink struct{ recs []*adapters.Receipt }

func (s *receiptSink) Receive(context.Context, herald.Message) *adapters.Receipt {
	r := s.recs[0]
	s.recs = s.recs[1:]
	return r
}

// reactLog records reactions; each one is also sent on ch.
type reactLog struct{ ch chan string }

func (l reactLog) react(_ context.Context, chat, id string, p adapters.Phase) {
	l.ch <- fmt.Sprintf("%s/%s:%s", chat, id, [...]string{"working", "done", "failed", "cleared"}[p])
}

// next returns the next n reactions.
func (l reactLog) next(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	for range n {
		select {
		case s := <-l.ch:
			got = append(got, s)
		case <-time.After(10 * time.Second):
			t.Fatalf("after %q: no more reactions", got)
		}
	}
	return got
}

func msg(id string) herald.Message {
	return herald.Message{ID: id, Source: herald.Source{Platform: "telegram", ChatID: "c", ThreadID: "t"}}
}

func TestReactionsFollowTheOldestMessageInWork(t *testing.T) {
	l := reactLog{ch: make(chan string, 16)}
	rx := adapters.NewReactions(l.react)
	recs := []*adapters.Receipt{adapters.NewReceipt(), adapters.NewReceipt(), adapters.NewReceipt(), adapters.NewReceipt()}
	sink := &receiptSink{recs: slices.Clone(recs)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	to := herald.Target{Platform: "telegram", ChatID: "c", ThreadID: "t"}
	for i := range recs {
		rx.Receive(ctx, sink, msg(fmt.Sprint(i+1)), "chan")
	}

	rx.Typing(ctx, to)
	rx.Typing(ctx, to)                                                   // typing renewed: no second reaction
	rx.Typing(ctx, herald.Target{Platform: "telegram", ChatID: "other"}) // no message in work there
	if got := l.next(t, 1); got[0] != "chan/1:working" {
		t.Errorf("first turn: %q", got)
	}
	recs[0].Resolve(adapters.Outcome{Status: adapters.StatusDone})
	if got := l.next(t, 1); got[0] != "chan/1:done" {
		t.Errorf("first answered: %q", got)
	}
	// folded into a newer message, never a turn of its own: nothing shown
	recs[1].Resolve(adapters.Outcome{Status: adapters.StatusQueued})
	rx.Typing(ctx, to)
	if got := l.next(t, 1); got[0] != "chan/3:working" {
		t.Errorf("third turn: %q", got)
	}
	recs[2].Resolve(adapters.Outcome{Status: adapters.StatusDone, Err: errors.New("model down")})
	if got := l.next(t, 1); got[0] != "chan/3:failed" {
		t.Errorf("third failed: %q", got)
	}
	rx.Typing(ctx, to)
	if got := l.next(t, 1); got[0] != "chan/4:working" {
		t.Errorf("fourth turn: %q", got)
	}
	cancel() // shutting down before the fourth was answered
	if got := l.next(t, 1); got[0] != "chan/4:cleared" {
		t.Errorf("fourth interrupted: %q", got)
	}
	rx.Wait()
	if len(l.ch) != 0 {
		t.Errorf("more reactions: %d", len(l.ch))
	}
}

func TestReactionsRefusedOrOff(t *testing.T) {
	l := reactLog{ch: make(chan string, 4)}
	rx := adapters.NewReactions(l.react)
	refused := adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped, Err: errors.New("shutting down")})
	ctx := context.Background()
	if got := rx.Receive(ctx, &receiptSink{recs: []*adapters.Receipt{refused}}, msg("1"), "c"); got != refused {
		t.Error("Receive did not return the sink's receipt")
	}
	rx.Typing(ctx, msg("1").Source.Target())
	rx.Wait()
	if len(l.ch) != 0 {
		t.Errorf("a refused message got reactions: %q", <-l.ch)
	}

	var off *adapters.Reactions // reactions off
	rec := adapters.NewReceipt()
	if got := off.Receive(ctx, &receiptSink{recs: []*adapters.Receipt{rec}}, msg("2"), "c"); got != rec {
		t.Error("Receive with reactions off did not return the sink's receipt")
	}
	off.Typing(ctx, msg("2").Source.Target())
	off.Wait()
}

// A NewFeedback tracker is told the message's thread, and calls again
// (PhaseStillWorking) on a Typing at least the renewal interval after the
// last working call, never more often.
func TestFeedbackRenewsWhileTheTurnRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []string
		show := func(_ context.Context, chat, thread, id string, p adapters.Phase) {
			got = append(got, fmt.Sprintf("%s/%s/%s:%s", chat, thread, id, [...]string{"working", "done", "failed", "cleared", "still"}[p]))
		}
		rx := adapters.NewFeedback(show, 90*time.Second)
		rec := adapters.NewReceipt()
		ctx := context.Background()
		rx.Receive(ctx, &receiptSink{recs: []*adapters.Receipt{rec}}, msg("1"), "chan")
		to := msg("1").Source.Target()
		rx.Typing(ctx, to)
		time.Sleep(60 * time.Second)
		rx.Typing(ctx, to) // too early
		time.Sleep(30 * time.Second)
		rx.Typing(ctx, to) // 90 s after the working call
		time.Sleep(60 * time.Second)
		rx.Typing(ctx, to) // 60 s after the renewal
		rec.Resolve(adapters.Outcome{Status: adapters.StatusDone})
		rx.Wait()
		want := []string{"chan/t/1:working", "chan/t/1:still", "chan/t/1:done"}
		if !slices.Equal(got, want) {
			t.Errorf("calls = %q, want %q", got, want)
		}
	})
}
