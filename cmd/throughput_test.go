package cmd_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// The throughput benchmarks push messages from many chats through the
// gateway with the echo model: in-process (Runner.Receive with
// local-platform messages, replies through the local adapter) and over
// HTTP (POST /v1/messages on 127.0.0.1). Each chat sends its next message
// when the previous one is answered. They report msgs/s and p50/p99
// latency; scripts/bench prints them beside a bare net/http baseline
// measured in the same run.

const benchChats = 1000

type benchGateway struct {
	runner *gateway.Runner
	local  *local.Adapter
	store  *sessions.Store
	stop   func()
}

func newBenchGateway(tb testing.TB) *benchGateway {
	tb.Helper()
	st, err := sessions.Open(filepath.Join(tb.TempDir(), "state.db"))
	if err != nil {
		tb.Fatal(err)
	}
	reg := hooks.NewRegistry(nil)
	ag := &agent.Agent{Model: agent.Echo{}, Tools: agent.NewTools(), Hooks: reg, ModelName: "echo"}
	loc := local.New(local.Config{Listen: "127.0.0.1:0", Token: "bench-token"})
	r := gateway.New(gateway.Config{
		Adapters: []adapters.Adapter{loc}, Store: st, Hooks: reg, Agent: ag, Redactor: herald.NewRedactor(),
		Keys: sessions.KeyOptions{GroupPerUser: true},
		Auth: map[herald.Platform]gateway.PlatformAuth{herald.PlatformLocal: {TrustAll: true}},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	return &benchGateway{runner: r, local: loc, store: st, stop: func() {
		cancel()
		<-done
		reg.Close(context.Background())
		st.Close()
	}}
}

type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

func (l *latencies) report(b *testing.B, elapsed time.Duration) {
	sort.Slice(l.d, func(i, j int) bool { return l.d[i] < l.d[j] })
	n := len(l.d)
	if n == 0 {
		return
	}
	b.ReportMetric(float64(n)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(l.d[n/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(l.d[n*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op")
}

// spread runs total messages over benchChats chats, each chat sending its
// next message when the previous one is answered.
func spread(b *testing.B, total int, send func(chat, i int) error) {
	var next atomic.Int64
	var lat latencies
	var wg sync.WaitGroup
	var firstErr atomic.Value
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < benchChats; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				t0 := time.Now()
				if err := send(c, i); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				lat.add(time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := firstErr.Load().(error); err != nil {
		b.Fatal(err)
	}
	lat.report(b, elapsed)
}

func BenchmarkThroughputInProcess(b *testing.B) {
	g := newBenchGateway(b)
	defer g.stop()
	total := max(b.N, benchChats)
	spread(b, total, func(chat, i int) error {
		rec := g.runner.Receive(context.Background(), herald.Message{
			ID: fmt.Sprint(i), Text: "hello",
			Source: herald.Source{Platform: herald.PlatformLocal, ChatID: fmt.Sprint("c", chat), ChatType: herald.ChatDM, UserID: "u"},
		})
		<-rec.Done()
		if o := rec.Outcome(); o.Status != adapters.StatusDone {
			return fmt.Errorf("message %d: %+v", i, o)
		}
		return nil
	})
}

func httpClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: benchChats, MaxIdleConnsPerHost: benchChats, IdleConnTimeout: time.Minute}}
}

func serve(b *testing.B, h http.Handler) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }
}

func BenchmarkThroughputHTTP(b *testing.B) {
	g := newBenchGateway(b)
	defer g.stop()
	url, stop := serve(b, g.local.Handler(g.runner))
	defer stop()
	client := httpClient()
	total := max(b.N, benchChats)
	spread(b, total, func(chat, i int) error {
		req, _ := http.NewRequest("POST", url+"/v1/messages", strings.NewReader(fmt.Sprintf(`{"chat_id":"c%d","user_id":"u","text":"hello"}`, chat)))
		req.Header.Set("Authorization", "Bearer bench-token")
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(body), `"status":"done"`) {
			return fmt.Errorf("status %d: %s", res.StatusCode, body)
		}
		return nil
	})
}

// BenchmarkBaselineHTTP is the same client against a bare net/http handler
// that decodes nothing and stores nothing: the ceiling of this machine's
// loopback HTTP with this client, measured in the same run.
func BenchmarkBaselineHTTP(b *testing.B) {
	url, stop := serve(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"done","replies":[{"text":"hello"}]}`)
	}))
	defer stop()
	client := httpClient()
	total := max(b.N, benchChats)
	spread(b, total, func(chat, i int) error {
		req, _ := http.NewRequest("POST", url+"/v1/messages", strings.NewReader(`{"chat_id":"c","user_id":"u","text":"hello"}`))
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return nil
	})
}

// TestThroughputSmoke runs the in-process path briefly so the default
// suite proves every message of many chats is answered and stored.
func TestThroughputSmoke(t *testing.T) {
	g := newBenchGateway(t)
	defer g.stop()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for c := 0; c < 100; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				rec := g.runner.Receive(context.Background(), herald.Message{ID: fmt.Sprint(c, "-", i), Text: "hello",
					Source: herald.Source{Platform: herald.PlatformLocal, ChatID: fmt.Sprint("c", c), ChatType: herald.ChatDM, UserID: "u"}})
				<-rec.Done()
				if o := rec.Outcome(); o.Status != adapters.StatusDone {
					errs <- fmt.Errorf("%+v", o)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	list, err := g.store.List(context.Background(), sessions.ListOptions{})
	if err != nil || len(list) != 100 {
		t.Fatalf("sessions = %d, %v", len(list), err)
	}
	for _, s := range list {
		if s.MessageCount != 10 {
			t.Fatalf("session %s stored %d messages, want 10", s.ID, s.MessageCount)
		}
	}
}
