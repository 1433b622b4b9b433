package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// slowModel echoes, taking SlowFor on prompts that start with "slow".
type slowModel struct{ slowFor time.Duration }

func (m slowModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if strings.HasPrefix(req.Messages[len(req.Messages)-1].Content, "slow") {
		select {
		case <-time.After(m.slowFor):
		case <-ctx.Done():
			return openai.ChatCompletionResponse{}, ctx.Err()
		}
	}
	return agent.Echo{}.Complete(ctx, req)
}

func benchRunner(tb testing.TB, model agent.Model, ad adapters.Adapter, busyMode string, opts ...harnessOpt) (*Runner, func()) {
	st, err := sessions.Open(filepath.Join(tb.TempDir(), "state.db"))
	if err != nil {
		tb.Fatal(err)
	}
	reg := hooks.NewRegistry(nil)
	cfg := Config{Adapters: []adapters.Adapter{ad}, Store: st, Hooks: reg, BusyMode: busyMode,
		Agent: &agent.Agent{Model: model, Tools: agent.NewTools(), Hooks: reg, ModelName: "bench"},
		Auth:  map[herald.Platform]PlatformAuth{ad.Platform(): {TrustAll: true}}}
	for _, o := range opts {
		o(&cfg)
	}
	r := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return r, func() {
		cancel()
		<-done
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		reg.Close(cctx)
		ccancel()
		st.Close()
	}
}

// BenchmarkChats: 1,000 chats send messages at a steady 2,000 a second
// (three each, round robin); in the "one-5s-chat" case one more chat's
// turn takes 5 s throughout. It reports the other chats' latency (receive
// → reply delivered) percentiles: the slow chat must not move them.
func BenchmarkChats(b *testing.B) {
	const chats, rounds = 1000, 3
	const pace = 500 * time.Microsecond
	for _, slow := range []bool{false, true} {
		name := "no-slow-chat"
		if slow {
			name = "one-5s-chat"
		}
		b.Run(name, func(b *testing.B) {
			ad := &fakeAdapter{name: "bench"}
			r, stop := benchRunner(b, slowModel{slowFor: 5 * time.Second}, ad, "interrupt")
			defer stop()
			var all []time.Duration
			var mu sync.Mutex
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var slowRec *adapters.Receipt
				if slow {
					slowRec = r.Receive(context.Background(), herald.Message{ID: fmt.Sprint("slow", i), Text: "slow turn",
						Source: herald.Source{Platform: "bench", ChatID: "slow", ChatType: herald.ChatDM, UserID: "s"}})
				}
				var wg sync.WaitGroup
				tick := time.NewTicker(pace)
				for k := range rounds {
					for c := range chats {
						<-tick.C
						start := time.Now()
						rec := r.Receive(context.Background(), herald.Message{ID: fmt.Sprint(i, "-", k), Text: "hello",
							Source: herald.Source{Platform: "bench", ChatID: fmt.Sprint("c", c), ChatType: herald.ChatDM, UserID: "u"}})
						wg.Add(1)
						go func() {
							defer wg.Done()
							<-rec.Done()
							d := time.Since(start)
							mu.Lock()
							all = append(all, d)
							mu.Unlock()
						}()
					}
				}
				tick.Stop()
				wg.Wait()
				if slowRec != nil {
					if slowRec.Outcome().Status != adapters.StatusPending {
						b.Fatal("the slow turn ended before the others were measured")
					}
					<-slowRec.Done()
				}
			}
			b.StopTimer()
			sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
			p := func(q float64) float64 { return float64(all[int(q*float64(len(all)-1))].Microseconds()) / 1000 }
			b.ReportMetric(p(0.50), "p50-ms")
			b.ReportMetric(p(0.99), "p99-ms")
			b.ReportMetric(float64(len(all))/float64(b.N), "msgs/op")
		})
	}
}

// A 10,000-message burst into one chat in queue mode: every message gets
// its own turn, in order, and nothing is lost.
func TestQueueBurst(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	ad := &fakeAdapter{name: "burst"}
	// the per-chat cap raised to hold the whole burst
	r, stop := benchRunner(t, agent.Echo{}, ad, "queue", func(c *Config) { c.MaxQueue = n })
	defer stop()
	start := time.Now()
	recs := make([]*adapters.Receipt, n)
	for i := range n {
		recs[i] = r.Receive(context.Background(), herald.Message{ID: fmt.Sprint(i), Text: fmt.Sprint("m", i),
			Source: herald.Source{Platform: "burst", ChatID: "one", ChatType: herald.ChatDM, UserID: "u"}})
	}
	for _, rec := range recs {
		<-rec.Done()
	}
	// queued receipts resolve at once; wait for the last reply
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ad.mu.Lock()
		got := len(ad.sent)
		ad.mu.Unlock()
		if got == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d replies", got, n)
		}
		time.Sleep(10 * time.Millisecond) // polling the fake platform
	}
	took := time.Since(start)
	want := make([]string, n)
	for i := range n {
		want[i] = echo + fmt.Sprint("m", i)
	}
	if got := ad.texts(); !slices.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("reply %d is %q, want %q", i, got[i], want[i])
			}
		}
	}
	s, err := r.store.OpenSession(context.Background(), "agent:main:burst:dm:one")
	if err != nil || s == nil || s.MessageCount != 2*n {
		t.Fatalf("stored %+v %v", s, err)
	}
	ms, _ := r.store.Messages(context.Background(), s.ID, 0)
	for i := 0; i < n; i++ {
		if ms[2*i].Content != fmt.Sprint("m", i) {
			t.Fatalf("stored message %d is %q", 2*i, ms[2*i].Content)
		}
	}
	t.Logf("%d queued turns in %s (%.0f turns/s)", n, took, float64(n)/took.Seconds())
}
