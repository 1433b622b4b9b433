package adapters

// held.go: small pieces adapters share. For those served on another
// adapter's listener (the OpenAI-compatible API and the runs API on the
// local listener): the gateway's Sink, handed over when Run starts, which
// requests that come before it wait for, and the JSON answers of their
// endpoints. For all: the kv part of the state store.

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
)

// HeldSink holds the gateway's Sink for an adapter whose endpoints may
// be called before its Run starts. The zero value is ready to use.
type HeldSink struct {
	sink    atomic.Pointer[Sink]
	serving atomic.Bool
	once    sync.Once
	mu      sync.Mutex
	ready   chan struct{}
}

func (h *HeldSink) readyCh() chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ready == nil {
		h.ready = make(chan struct{})
	}
	return h.ready
}

// Hold takes the Sink Run was given: requests waiting in Wait go on.
func (h *HeldSink) Hold(s Sink) {
	h.sink.Store(&s)
	h.once.Do(func() { close(h.readyCh()) })
}

// SetServing marks whether Run is serving (see Health).
func (h *HeldSink) SetServing(on bool) { h.serving.Store(on) }

// Wait returns the Sink once Run handed it over, or ctx's error.
func (h *HeldSink) Wait(ctx context.Context) (Sink, error) {
	select {
	case <-h.readyCh():
		return *h.sink.Load(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Sink returns the Sink Run handed over; nil before that.
func (h *HeldSink) Sink() Sink {
	if s := h.sink.Load(); s != nil {
		return *s
	}
	return nil
}

// Health is "connected" while serving, "starting" before Run handed
// over the Sink, and "stopped" after Run returned.
func (h *HeldSink) Health() string {
	switch {
	case h.serving.Load():
		return "connected"
	case h.sink.Load() == nil:
		return "starting"
	}
	return "stopped"
}

// WriteJSON answers with status and v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// KV is the part of the state store (its kv table) an adapter keeps small
// records in across restarts: a since token, a window, a conversation's
// service URL. *sessions.Store implements it.
type KV interface {
	KV(ctx context.Context, key string) (string, bool, error)
	SetKV(ctx context.Context, key, value string) error
}
