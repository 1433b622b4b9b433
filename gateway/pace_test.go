package gateway

import (
	"math/rand/v2"
	"testing"
	"time"
)

// Slots asked for at any times, in any order (chats take their next slot
// ahead of time), never put more than n in a span, and each is the first
// time from the asked one that does not.
func TestWindowKeepsLimit(t *testing.T) {
	const n, span = 5, time.Second
	rnd := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var w window
	for range 200 {
		ask := base.Add(time.Duration(rnd.IntN(20_000)) * time.Millisecond)
		got := w.earliest(ask, n, span)
		if got.Before(ask) {
			t.Fatalf("slot %s before the asked %s", got, ask)
		}
		for c := ask; c.Before(got); c = c.Add(time.Millisecond) {
			if w.fits(c, n, span) {
				t.Fatalf("asked %s: gave %s, but %s fits", ask, got, c)
			}
		}
		w = w.insert(got)
		for i := n; i < len(w); i++ {
			if w[i].Sub(w[i-n]) < span {
				t.Fatalf("%d slots within %s", n+1, w[i].Sub(w[i-n]))
			}
			if w[i].Before(w[i-1]) {
				t.Fatal("window out of order")
			}
		}
	}
}
