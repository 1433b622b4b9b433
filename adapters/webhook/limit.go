package webhook

// limit.go is a route's rate limit: at most n requests in any minute (a
// sliding window, so a burst at the end of one minute and the start of
// the next is not let through twice).

import (
	"sync"
	"time"
)

// window counts a route's recent requests.
type window struct {
	mu    sync.Mutex
	per   int
	times []time.Time // oldest first, at most per
}

// allow records a request at now and reports whether it is within the
// limit; a request refused is not counted.
func (w *window) allow(now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	cut := now.Add(-time.Minute)
	i := 0
	for i < len(w.times) && !w.times[i].After(cut) {
		i++
	}
	w.times = w.times[i:]
	if len(w.times) >= w.per {
		return false
	}
	w.times = append(w.times, now)
	return true
}

// retryAfter is how long until the window has room again.
func (w *window) retryAfter(now time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.times) == 0 {
		return 0
	}
	return max(w.times[0].Add(time.Minute).Sub(now), time.Second)
}
