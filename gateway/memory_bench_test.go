package gateway

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/sessions"
)

// discardAdapter is a platform that forgets what it is sent (a recording
// fake would itself grow with every chat).
type discardAdapter struct{ sent atomic.Int64 }

func (d *discardAdapter) Platform() herald.Platform { return "mem" }
func (d *discardAdapter) Limits() adapters.Limits   { return adapters.Limits{} }
func (d *discardAdapter) Run(ctx context.Context, sink adapters.Sink) error {
	<-ctx.Done()
	return nil
}
func (d *discardAdapter) Send(ctx context.Context, to herald.Target, out adapters.Outgoing) (adapters.Sent, error) {
	return adapters.Sent{MessageID: fmt.Sprint(d.sent.Add(1))}, nil
}

// quiesce waits until no intake, turn or journal goroutine runs.
func quiesce(r *Runner) {
	for {
		r.work.mu.Lock()
		busy := r.work.n
		r.work.mu.Unlock()
		r.bg.mu.Lock()
		busy += r.bg.n
		r.bg.mu.Unlock()
		if busy == 0 {
			return
		}
		time.Sleep(time.Millisecond) // nothing to wait on: the trackers only signal after close
	}
}

func heapNow() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkChatMemory: 200,000 distinct chats (half of them strangers an
// allowlist refuses, half users who get an answer), one message each,
// then a sweep a day later. Per-chat state is freed: the heap after the
// sweep stays within 2x of the heap before the first of those messages
// (after a warm-up of 2,000 chats at the same concurrency, also swept,
// which pays for what is made once). Run it with -benchtime=1x (each iteration is the whole
// scenario); -short runs 20,000 chats. HERALD_HEAPPROF=file writes a heap
// profile after the sweep.
func BenchmarkChatMemory(b *testing.B) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	const senders = 32
	for range b.N {
		var skew atomic.Int64
		now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
		ad := &discardAdapter{}
		r, stop := benchRunner(b, agent.Echo{}, ad, "", func(c *Config) {
			c.Now = now
			c.Reset = sessions.ResetPolicy{Mode: sessions.ResetNone}
			c.SweepInterval = 1000 * time.Hour // the benchmark sweeps itself
			c.Auth = map[herald.Platform]PlatformAuth{"mem": {AllowedUsers: []string{"user"}, UnauthorizedDM: DMIgnore}}
		})
		cold := heapNow()
		send := func(chat, user string) {
			<-r.Receive(context.Background(), herald.Message{ID: "1", Text: "hello",
				Source: herald.Source{Platform: "mem", ChatID: chat, ChatType: herald.ChatDM, UserID: user}}).Done()
		}
		// chats first..first+count, from senders at once; odd ones are
		// strangers
		burst := func(prefix string, count int) {
			var wg sync.WaitGroup
			for s := range senders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := s; i < count; i += senders {
						user := "user"
						if i%2 == 1 {
							user = fmt.Sprint("stranger", i)
						}
						send(fmt.Sprint(prefix, i), user)
					}
				}()
			}
			wg.Wait()
			quiesce(r)
		}
		// a warm-up at the same concurrency, swept like the rest, so that
		// what is made once is in the baseline: JSON encoders, prepared
		// statements, and the goroutine descriptors the runtime keeps for
		// reuse at that concurrency
		burst("warm-up", 2000)
		skew.Store(int64(idleEvict + time.Hour))
		r.sweep(context.Background())
		r.tidy(context.Background())
		before := heapNow()
		if p := os.Getenv("HERALD_HEAPPROF"); p != "" {
			f, _ := os.Create(p + ".before")
			pprof.WriteHeapProfile(f)
			f.Close()
		}
		start := time.Now()
		burst("chat", n)
		took := time.Since(start)
		r.mu.Lock()
		held := len(r.chats)
		r.mu.Unlock()
		skew.Store(int64(2 * (idleEvict + time.Hour)))
		r.sweep(context.Background())
		r.tidy(context.Background())
		after := heapNow()
		if p := os.Getenv("HERALD_HEAPPROF"); p != "" {
			f, _ := os.Create(p)
			pprof.WriteHeapProfile(f)
			f.Close()
		}
		r.mu.Lock()
		left := len(r.chats)
		r.mu.Unlock()
		b.ReportMetric(float64(cold)/1e6, "MB-heap-cold")
		b.ReportMetric(float64(before)/1e6, "MB-heap-before")
		b.ReportMetric(float64(after)/1e6, "MB-heap-after-sweep")
		b.ReportMetric(float64(held), "chats-before-sweep")
		b.ReportMetric(float64(left), "chats-after-sweep")
		b.Logf("%d chats in %s (%d answers): heap %.2f MB at start, %.2f MB before the first of the %d messages, %.2f MB after the sweep; %d chats held before the sweep, %d after",
			n, took.Round(time.Millisecond), ad.sent.Load(), float64(cold)/1e6, float64(before)/1e6, n, float64(after)/1e6, held, left)
		if after > 2*before {
			b.Errorf("heap after the sweep %.1f MB is over twice the heap before the first message (%.1f MB)", float64(after)/1e6, float64(before)/1e6)
		}
		if left != 0 {
			b.Errorf("%d chats left after the sweep", left)
		}
		stop()
	}
}
