package gateway

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// scriptAdapter is a platform whose n-th Run (1-based) does what run says.
type scriptAdapter struct {
	run func(ctx context.Context, n int) error

	mu     sync.Mutex
	starts []time.Time
}

func (s *scriptAdapter) Platform() herald.Platform { return "script" }
func (s *scriptAdapter) Limits() adapters.Limits   { return adapters.Limits{} }
func (s *scriptAdapter) Send(context.Context, herald.Target, adapters.Outgoing) (adapters.Sent, error) {
	return adapters.Sent{}, nil
}

func (s *scriptAdapter) Run(ctx context.Context, sink adapters.Sink) error {
	s.mu.Lock()
	s.starts = append(s.starts, time.Now())
	n := len(s.starts)
	s.mu.Unlock()
	return s.run(ctx, n)
}

func (s *scriptAdapter) runs() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.starts...)
}

// syncBuffer is a log sink safe for the adapter goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// runScript runs a's adapter loop for d of fake time, then stops it and
// returns the runner (for its health) and the log.
func runScript(t *testing.T, a *scriptAdapter, d time.Duration) (*Runner, string) {
	t.Helper()
	var logs syncBuffer
	r := New(Config{Adapters: []adapters.Adapter{a}, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.runAdapter(ctx, a)
	}()
	time.Sleep(d)
	synctest.Wait()
	health := r.Health()["script"]
	cancel()
	<-done
	r.health.Store(a.Platform(), health) // as it was before the stop
	return r, logs.String()
}

func gaps(starts []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(starts); i++ {
		out = append(out, starts[i].Sub(starts[i-1]))
	}
	return out
}

// Failing at once, an adapter is retried after waits that double from
// reconnectMin (with jitter: between half the step and the step) and never
// exceed reconnectMax.
func TestRunAdapterBackoffCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &scriptAdapter{run: func(ctx context.Context, n int) error { return errors.New("connection refused") }}
		r, _ := runScript(t, a, 30*time.Minute)
		gs := gaps(a.runs())
		if len(gs) < 10 {
			t.Fatalf("only %d restarts in 30 minutes: %v", len(gs), gs)
		}
		step := reconnectMin
		for i, g := range gs {
			if g < step/2 || g > step {
				t.Fatalf("wait %d was %s, want between %s and %s (all: %v)", i+1, g, step/2, step, gs)
			}
			step = min(2*step, reconnectMax)
		}
		if step != reconnectMax {
			t.Fatalf("the backoff never reached its cap %s: %v", reconnectMax, gs)
		}
		if h := r.Health()["script"]; h != "reconnecting" {
			t.Fatalf("health %q", h)
		}
	})
}

// After a connection that stayed up for a while, the next failure is
// retried after about reconnectMin again, not after the last long wait.
func TestRunAdapterBackoffResetsAfterHealthyConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &scriptAdapter{run: func(ctx context.Context, n int) error {
			if n == 8 { // seven quick failures, then up for an hour
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(time.Hour):
				}
			}
			return errors.New("connection reset")
		}}
		runScript(t, a, 2*time.Hour)
		gs := gaps(a.runs())
		if len(gs) < 9 {
			t.Fatalf("restarts %v", gs)
		}
		if gs[6] < 32*time.Second {
			t.Fatalf("the quick failures did not back off: %v", gs)
		}
		// gs[7] is the hour the eighth run stayed up and the wait after it
		if after := gs[7] - time.Hour; after > reconnectMin {
			t.Fatalf("after an hour connected the next retry waited %s, want ≤ %s (all: %v)", after, reconnectMin, gs)
		}
	})
}

// A fatal error stops the adapter for good; other errors, a clean return
// and a panic restart it (the panic logged with its value).
func TestRunAdapterFatalAndPanic(t *testing.T) {
	t.Run("fatal stops for good", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			a := &scriptAdapter{run: func(ctx context.Context, n int) error {
				return &adapters.FatalError{Msg: "the bot token was revoked"}
			}}
			r, logs := runScript(t, a, 24*time.Hour)
			if n := len(a.runs()); n != 1 {
				t.Fatalf("a fatal adapter ran %d times", n)
			}
			if h := r.Health()["script"]; h != "failed: the bot token was revoked" {
				t.Fatalf("health %q", h)
			}
			if !strings.Contains(logs, "platform stopped for good") {
				t.Fatalf("log:\n%s", logs)
			}
		})
	})
	for name, fail := range map[string]func() error{
		"error":        func() error { return errors.New("EOF") },
		"clean return": func() error { return nil },
		"panic":        func() error { panic("nil map in the adapter") },
	} {
		t.Run(name+" restarts", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := &scriptAdapter{run: func(ctx context.Context, n int) error {
					if n < 3 {
						return fail()
					}
					<-ctx.Done()
					return nil
				}}
				r, logs := runScript(t, a, time.Hour)
				if n := len(a.runs()); n != 3 {
					t.Fatalf("ran %d times, want 3", n)
				}
				if h := r.Health()["script"]; h != "connecting" {
					t.Fatalf("health %q", h)
				}
				if name == "panic" && (strings.Count(logs, `msg="adapter panicked"`) != 2 || !strings.Contains(logs, "nil map in the adapter")) {
					t.Fatalf("log:\n%s", logs)
				}
			})
		})
	}
}
