package gateway

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
)

// floodAdapter edits like editAdapter; editFail, when set, decides each
// edit attempt (1-based) and every attempt's time is kept.
type floodAdapter struct {
	fakeAdapter
	editFail func(n int, text string) error
	edits    []string // edits that took
	editAt   []time.Time
}

func (f *floodAdapter) Edit(ctx context.Context, to herald.Target, id, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.editAt = append(f.editAt, time.Now())
	if f.editFail != nil {
		if err := f.editFail(len(f.editAt), text); err != nil {
			return err
		}
	}
	f.edits = append(f.edits, text)
	return nil
}

func (f *floodAdapter) snapshot() (sent, edits []string, editAt []time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range f.sent {
		sent = append(sent, o.Text)
	}
	return sent, append([]string{}, f.edits...), append([]time.Time{}, f.editAt...)
}

// deletingAdapter can also delete messages.
type deletingAdapter struct {
	floodAdapter
	deleted []string
}

func (d *deletingAdapter) Delete(ctx context.Context, to herald.Target, id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deleted = append(d.deleted, id)
	return nil
}

// pacedAdapter declares a pace, as Telegram's adapter does.
type pacedAdapter struct {
	fakeAdapter
	pace adapters.Pace
}

func (p *pacedAdapter) Pace(to herald.Target) adapters.Pace { return p.pace }

// limitedFirst answers the first send with a 429 asking for d.
func limitedFirst(d time.Duration) func(int, adapters.Outgoing) error {
	return func(n int, out adapters.Outgoing) error {
		if n == 1 {
			return rateLimited(d)
		}
		return nil
	}
}

func rateLimited(d time.Duration) error {
	return &adapters.RetryAfterError{After: d, Err: errors.New("429 Too Many Requests")}
}

func manyWords(n int) []string {
	w := make([]string, n)
	for i := range w {
		w[i] = "w" + string(rune('a'+i%26))
	}
	return w
}

// A 429 on a streamed edit closes the chat for its retry-after: no edit
// is tried until it has passed, and the answer still ends up in the one
// message.
func TestStreamEditHonoursRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &floodAdapter{fakeAdapter: fakeAdapter{name: "fake"}}
		ad.editFail = func(n int, text string) error {
			if n == 2 {
				return rateLimited(10 * time.Second)
			}
			return nil
		}
		words := manyWords(80) // 16 s of streaming
		b := newBubble(t, ad, trickle{words: words})
		defer b.stop()
		if o := outcome(t, b.send("c1", "u1", "go")); o.Status != adapters.StatusDone {
			t.Fatalf("%+v", o)
		}
		sent, edits, at := ad.snapshot()
		if len(sent) != 1 {
			t.Fatalf("sent %d messages: %q", len(sent), sent)
		}
		if len(edits) == 0 || edits[len(edits)-1] != strings.Join(words, " ") {
			t.Fatalf("last edit %q", edits[len(edits)-1])
		}
		if len(at) < 3 {
			t.Fatalf("%d edit attempts", len(at))
		}
		if gap := at[2].Sub(at[1]); gap < 10*time.Second {
			t.Fatalf("edited again %s after a 429 asking for 10s", gap)
		}
	})
}

// A 429 on the final edit: the edit is made again after the wait; no
// second message carries the answer.
func TestFinalEditWaitsOutRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad, b, final := finalEditRateLimited(t, 10*time.Second)
		defer b.stop()
		sent, edits, at := ad.snapshot()
		if len(sent) != 1 || edits[len(edits)-1] != final {
			t.Fatalf("sent %q, edits %q", sent, edits)
		}
		if gap := at[len(at)-1].Sub(at[len(at)-2]); gap < 10*time.Second {
			t.Fatalf("final edit retried after %s", gap)
		}
	})
}

// A final edit the platform refuses for good: the preview is deleted and
// the answer sent anew, so it is in the chat once.
func TestFinalEditRefusedReplacesPreview(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		words := manyWords(10)
		final := strings.Join(words, " ")
		ad := &deletingAdapter{floodAdapter: floodAdapter{fakeAdapter: fakeAdapter{name: "fake"}}}
		ad.editFail = func(n int, text string) error {
			if text == final {
				return errors.New("Bad Request: message to edit not found")
			}
			return nil
		}
		b := newBubble(t, ad, trickle{words: words})
		defer b.stop()
		outcome(t, b.send("c1", "u1", "go"))
		sent, _, _ := ad.snapshot()
		ad.mu.Lock()
		deleted := append([]string{}, ad.deleted...)
		ad.mu.Unlock()
		if len(sent) != 2 || sent[1] != final || len(deleted) != 1 || deleted[0] != "s1" {
			t.Fatalf("sent %q, deleted %q", sent, deleted)
		}
	})
}

// A retry-after beyond the retry cap queues the answer in the store; it
// is delivered when the wait has passed, once.
func TestLongRetryAfterQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake", fail: limitedFirst(150 * time.Second)}
		b := newBubble(t, ad, nil)
		defer b.stop()
		start := time.Now()
		outcome(t, b.send("c1", "u1", "hi"))
		deliveredAfter(t, ad, start, 150*time.Second, echo+"hi")
		if rows, _ := b.store.PendingOutbound(context.Background()); len(rows) != 0 {
			t.Fatalf("%d rows left queued", len(rows))
		}
	})
}

// A queued answer survives a restart: a new gateway on the same store
// delivers it when the wait has passed.
func TestLongRetryAfterAcrossRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state.db")
		first := &fakeAdapter{name: "fake", fail: func(n int, out adapters.Outgoing) error {
			return rateLimited(150 * time.Second)
		}}
		b := newBubbleOn(t, path, first, nil)
		start := time.Now()
		outcome(t, b.send("c1", "u1", "hi"))
		b.stop()
		if first.calls != 1 {
			t.Fatalf("%d sends before the restart", first.calls)
		}

		second := &fakeAdapter{name: "fake"}
		b = newBubbleOn(t, path, second, nil)
		defer b.stop()
		if n := b.runner.Delivery().Queued; n != 1 {
			t.Fatalf("%d messages counted as queued after the restart", n)
		}
		deliveredAfter(t, second, start, 150*time.Second, echo+"hi")
		if n := b.runner.Delivery().Queued; n != 0 {
			t.Fatalf("%d messages counted as queued after delivery", n)
		}
	})
}

// Messages to one chat follow the adapter's pace: one a second, twenty a
// minute; another chat is not held up by it.
func TestPerChatPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &pacedAdapter{fakeAdapter: fakeAdapter{name: "fake"}, pace: adapters.Pace{Every: time.Second, PerMinute: 20}}
		b := newBubble(t, ad, nil)
		defer b.stop()
		group := herald.Target{Platform: "fake", ChatID: "-100"}
		for i := range 25 {
			if err := b.runner.Deliver(context.Background(), group, "n"+string(rune('a'+i))); err != nil {
				t.Fatal(err)
			}
		}
		ad.mu.Lock()
		at := append([]time.Time{}, ad.times...)
		ad.mu.Unlock()
		for i := 1; i < len(at); i++ {
			if gap := at[i].Sub(at[i-1]); gap < time.Second {
				t.Fatalf("message %d went %s after the one before", i+1, gap)
			}
		}
		for i := 20; i < len(at); i++ {
			if span := at[i].Sub(at[i-20]); span < time.Minute {
				t.Fatalf("21 messages within %s", span)
			}
		}
		// another chat goes at once
		before := time.Now()
		if err := b.runner.Deliver(context.Background(), herald.Target{Platform: "fake", ChatID: "-200"}, "other"); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(before); waited > 0 {
			t.Fatalf("another chat waited %s", waited)
		}
	})
}

// While a rate limit holds a chat, delivery-failure notices are not sent
// into it, and never more than one a minute.
func TestFailureNoticePaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake", fail: func(n int, out adapters.Outgoing) error {
			if out.Text == DeliveryFailedNotice {
				return nil
			}
			return errors.New("Bad Request: chat not writable")
		}}
		b := newBubble(t, ad, nil)
		defer b.stop()
		to := herald.Target{Platform: "fake", ChatID: "c1"}
		for range 3 {
			if err := b.runner.Deliver(context.Background(), to, "x"); err == nil {
				t.Fatal("delivered")
			}
		}
		if got := ad.texts(); len(got) != 1 || got[0] != DeliveryFailedNotice {
			t.Fatalf("notices %q", got)
		}
	})
}

// deliveredAfter checks, inside a bubble, that ad sends nothing until
// wait after start and then sends text, once.
func deliveredAfter(t *testing.T, ad *fakeAdapter, start time.Time, wait time.Duration, text string) {
	t.Helper()
	time.Sleep(wait - time.Second - time.Since(start))
	synctest.Wait()
	if got := ad.texts(); len(got) != 0 {
		t.Fatalf("sent %q before the wait passed", got)
	}
	time.Sleep(2 * time.Second)
	synctest.Wait()
	if got := ad.texts(); len(got) != 1 || got[0] != text {
		t.Fatalf("sent %q after the wait, want %q once", got, text)
	}
}

// A final streamed edit held back beyond the retry cap waits in the store
// as an edit of the preview: after the wait the preview becomes the
// answer, and no second message carries it.
func TestFinalEditQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad, b, final := finalEditRateLimited(t, 150*time.Second)
		defer b.stop()
		if rows, _ := b.store.PendingOutbound(context.Background()); len(rows) != 1 || rows[0].EditID != "s1" || rows[0].Text != final {
			t.Fatalf("queued %+v", rows)
		}
		time.Sleep(151 * time.Second)
		synctest.Wait()
		sent, edits, _ := ad.snapshot()
		if len(sent) != 1 || edits[len(edits)-1] != final {
			t.Fatalf("sent %q, edits %q", sent, edits)
		}
		if rows, _ := b.store.PendingOutbound(context.Background()); len(rows) != 0 {
			t.Fatalf("%d rows left queued", len(rows))
		}
	})
}

// A streamed preview whose send timed out after it was written may be in
// the chat: no second preview is sent; the answer comes once, normally.
func TestStreamPreviewMaybeSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		words := manyWords(20)
		ad := &floodAdapter{fakeAdapter: fakeAdapter{name: "fake", fail: func(n int, out adapters.Outgoing) error {
			if n == 1 {
				return &adapters.MaybeSentError{Err: context.DeadlineExceeded}
			}
			return nil
		}}}
		b := newBubble(t, ad, trickle{words: words})
		defer b.stop()
		outcome(t, b.send("c1", "u1", "go"))
		sent, edits, _ := ad.snapshot()
		if len(sent) != 1 || sent[0] != strings.Join(words, " ") || len(edits) != 0 {
			t.Fatalf("sent %q, edits %q", sent, edits)
		}
		if n := b.runner.MaybeSent(); n != 1 {
			t.Fatalf("MaybeSent = %d", n)
		}
	})
}

// A reply to a chat whose earlier answer is queued joins the queue behind
// it, without waiting: the two arrive in order.
func TestQueuedChatKeepsOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake", fail: limitedFirst(150 * time.Second)}
		b := newBubble(t, ad, nil)
		defer b.stop()
		outcome(t, b.send("c1", "u1", "one"))
		time.Sleep(60 * time.Second)
		asked := time.Now()
		outcome(t, b.send("c1", "u1", "two"))
		if waited := time.Since(asked); waited > time.Second {
			t.Fatalf("the second reply waited %s", waited)
		}
		time.Sleep(100 * time.Second)
		synctest.Wait()
		if got := ad.texts(); strings.Join(got, "|") != echo+"one|"+echo+"two" {
			t.Fatalf("sent %q", got)
		}
	})
}

// finalEditRateLimited runs a streamed turn whose final edit is answered
// once with a 429 asking to wait; it returns the adapter, the gateway and
// the final answer.
func finalEditRateLimited(t *testing.T, wait time.Duration) (*floodAdapter, *bubble, string) {
	t.Helper()
	words := manyWords(10)
	final := strings.Join(words, " ")
	ad := &floodAdapter{fakeAdapter: fakeAdapter{name: "fake"}}
	failed := false
	ad.editFail = func(n int, text string) error {
		if text == final && !failed {
			failed = true
			return rateLimited(wait)
		}
		return nil
	}
	b := newBubble(t, ad, trickle{words: words})
	outcome(t, b.send("c1", "u1", "go"))
	return ad, b, final
}

// telegramPaced is a platform that keeps Telegram's pace, as the Telegram
// adapter declares it.
type telegramPaced struct {
	fakeAdapter
	tg *telegram.Adapter
}

func (p *telegramPaced) Pace(to herald.Target) adapters.Pace { return p.tg.Pace(to) }

// Sends to many Telegram chats at once keep to the bot's limit over all
// chats (about thirty a second): no second holds more than thirty, and the
// sixty messages are not spread thinner than that.
func TestBotWidePacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &telegramPaced{fakeAdapter: fakeAdapter{name: "fake"}, tg: telegram.New(telegram.Config{Token: "1:x"})}
		b := newBubble(t, ad, nil)
		defer b.stop()
		start := time.Now()
		var wg sync.WaitGroup
		for i := range 60 {
			wg.Go(func() {
				to := herald.Target{Platform: "fake", ChatID: fmt.Sprint(1000 + i)}
				if err := b.runner.Deliver(context.Background(), to, "hello"); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		ad.mu.Lock()
		at := slices.Clone(ad.times)
		ad.mu.Unlock()
		if len(at) != 60 {
			t.Fatalf("%d sends", len(at))
		}
		slices.SortFunc(at, time.Time.Compare)
		for i := 30; i < len(at); i++ {
			if span := at[i].Sub(at[i-30]); span < time.Second {
				t.Fatalf("31 messages within %s (messages %d to %d)", span, i-29, i+1)
			}
		}
		if took := at[59].Sub(start); took > time.Second {
			t.Fatalf("sixty messages took %s", took)
		}
	})
}

// hungEdits never answers an edit: each waits until its context ends.
type hungEdits struct {
	deletingAdapter
}

func (h *hungEdits) Edit(ctx context.Context, to herald.Target, id, text string) error {
	h.mu.Lock()
	h.editAt = append(h.editAt, time.Now())
	h.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}

// An edit the platform never answers fails its attempt after SendTimeout
// instead of holding the stream and the turn: the turn ends, and the
// answer is in the chat once (the preview that could not take it is
// deleted, the answer sent anew).
func TestHungEditTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		words := manyWords(10)
		final := strings.Join(words, " ")
		ad := &hungEdits{deletingAdapter{floodAdapter: floodAdapter{fakeAdapter: fakeAdapter{name: "fake"}}}}
		b := newBubble(t, ad, trickle{words: words})
		defer b.stop()
		took := b.turnTook(t, "go")
		sent, _, editAt := ad.snapshot()
		ad.mu.Lock()
		deleted := slices.Clone(ad.deleted)
		ad.mu.Unlock()
		if len(sent) != 2 || sent[1] != final || len(deleted) != 1 || deleted[0] != "s1" {
			t.Fatalf("sent %q, deleted %q", sent, deleted)
		}
		if len(editAt) < 2 {
			t.Fatalf("%d edit attempts", len(editAt))
		}
		// the streamed edit's attempt, then the final edit's, each
		// bounded by the 30 s default, with backoff between them
		if limit := time.Duration(maxSendAttempts+1)*30*time.Second + time.Minute; took > limit {
			t.Fatalf("the turn took %s", took)
		}
		t.Logf("%d edit attempts; the answer was delivered after %s", len(editAt), took)
	})
}

// /healthz reports the messages waiting in the outbound queue and the
// sends that may have gone through, without calling the gateway unwell
// for them.
func TestHealthzDelivery(t *testing.T) {
	ad := &fakeAdapter{name: "fake", fail: func(n int, out adapters.Outgoing) error {
		switch out.Text {
		case "held":
			return rateLimited(150 * time.Second)
		case "unsure":
			return &adapters.MaybeSentError{Err: context.DeadlineExceeded}
		}
		return nil
	}}
	h := newHarness(t, nil, func(c *Config) {
		c.Adapters = append(c.Adapters, ad)
	})
	if hz := h.healthz(); hz.Delivery.Queued != 0 || hz.Delivery.MaybeSent != 0 {
		t.Fatalf("healthz before: %+v", hz)
	}
	var queued *herald.QueuedError
	if err := h.runner.Deliver(context.Background(), herald.Target{Platform: "fake", ChatID: "c1"}, "held"); !errors.As(err, &queued) {
		t.Fatalf("deliver: %v, want queued", err)
	}
	if err := h.runner.Deliver(context.Background(), herald.Target{Platform: "fake", ChatID: "c2"}, "unsure"); !errors.Is(err, herald.ErrMaybeSent) {
		t.Fatalf("deliver: %v, want maybe sent", err)
	}
	hz := h.healthz()
	if hz.code != 200 || hz.Status != "ok" || hz.Delivery.Queued != 1 || hz.Delivery.MaybeSent != 1 {
		t.Fatalf("healthz: %+v", hz)
	}
}
