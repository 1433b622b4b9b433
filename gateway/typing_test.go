package gateway

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald"
)

// typeAdapter also shows a typing indicator, recording when.
type typeAdapter struct {
	fakeAdapter
	typed []time.Duration
	t0    time.Time
}

func (a *typeAdapter) Typing(ctx context.Context, to herald.Target) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.typed = append(a.typed, time.Since(a.t0))
	return nil
}

// During a 10 s turn the indicator is shown at once and renewed every
// TypingInterval, and stops with the turn.
func TestTypingDuringSlowTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &typeAdapter{fakeAdapter: fakeAdapter{name: "fake"}, t0: time.Now()}
		b := newBubble(t, ad, slowModel{slowFor: 10 * time.Second})
		defer b.stop()
		if o := outcome(t, b.send("c", "u", "slow please")); o.Status != "done" {
			t.Fatalf("outcome %+v", o)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		ad.mu.Lock()
		defer ad.mu.Unlock()
		want := []time.Duration{0, 4 * time.Second, 8 * time.Second}
		if len(ad.typed) != len(want) {
			t.Fatalf("typing at %v, want %v", ad.typed, want)
		}
		for i := range want {
			if ad.typed[i] != want[i] {
				t.Fatalf("typing at %v, want %v", ad.typed, want)
			}
		}
	})
}
