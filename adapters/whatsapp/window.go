package whatsapp

// window.go remembers when each user last wrote, for the 24-hour
// customer-service window: in memory, and in the store (key
// "whatsapp.window/<wa_id>", an RFC 3339 time) when there is one, written
// at most once a minute per user.

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

const (
	windowKeyPrefix = "whatsapp.window/"
	// windowWriteEvery is how stale the stored time may get: a minute
	// off a 24-hour window.
	windowWriteEvery = time.Minute
)

type windows struct {
	store Store
	now   func() time.Time
	log   *slog.Logger

	mu sync.Mutex
	// last is each user's last inbound time; stored when it was written
	// to the store.
	last   map[string]time.Time
	stored map[string]time.Time
}

func newWindows(store Store, now func() time.Time, log *slog.Logger) *windows {
	return &windows{store: store, now: now, log: log, last: map[string]time.Time{}, stored: map[string]time.Time{}}
}

// seen records a message from user at t.
func (w *windows) seen(ctx context.Context, user string, t time.Time) {
	if t.IsZero() || t.After(w.now()) {
		t = w.now()
	}
	w.mu.Lock()
	if t.Before(w.last[user]) {
		w.mu.Unlock()
		return
	}
	w.last[user] = t
	write := w.store != nil && t.Sub(w.stored[user]) >= windowWriteEvery
	if write {
		w.stored[user] = t
	}
	w.mu.Unlock()
	if write {
		if err := w.store.SetKV(ctx, windowKeyPrefix+user, t.UTC().Format(time.RFC3339Nano)); err != nil {
			w.log.Warn("whatsapp: the customer-service window could not be stored; it is kept in memory", "err", err)
		}
	}
}

// open reports whether user's window is open now, and when they last
// wrote (zero when unknown).
func (w *windows) open(ctx context.Context, user string) (bool, time.Time) {
	w.mu.Lock()
	last, ok := w.last[user]
	w.mu.Unlock()
	if !ok && w.store != nil {
		if v, found, err := w.store.KV(ctx, windowKeyPrefix+user); err != nil {
			w.log.Warn("whatsapp: the customer-service window could not be read", "err", err)
		} else if found {
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				last = t
				w.mu.Lock()
				if t.After(w.last[user]) {
					w.last[user], w.stored[user] = t, t
				}
				w.mu.Unlock()
			}
		}
	}
	return !last.IsZero() && w.now().Sub(last) < Window, last
}

// prune forgets, in memory, windows closed for good (they are read back
// from the store when asked for).
func (w *windows) prune(context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for u, t := range w.last {
		if w.now().Sub(t) >= Window {
			delete(w.last, u)
			delete(w.stored, u)
		}
	}
}
