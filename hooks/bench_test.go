package hooks

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// An interceptor call with three Go subscribers that have no opinion (the
// common case: plugins that observe through pre_tool_call).
func BenchmarkCallThreeGo(b *testing.B) {
	reg := NewRegistry(nil)
	defer reg.Close(context.Background())
	for _, n := range []string{"a", "b", "c"} {
		reg.Subscribe(Subscription{Name: n, Events: []string{PreToolCallHook}, Handler: func(ctx context.Context, ev Event) (any, error) {
			return nil, nil
		}})
	}
	ctx := context.Background()
	p := &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": "ls"}}
	b.ReportAllocs()
	for b.Loop() {
		if d := reg.PreToolCall(ctx, p); d.Action != "" {
			b.Fatal(d)
		}
	}
}

// An observer Emit to one subscriber that keeps up.
func BenchmarkEmitOne(b *testing.B) { benchEmit(b, "a") }

// An observer Emit to three subscribers that keep up.
func BenchmarkEmitThree(b *testing.B) { benchEmit(b, "a", "b", "c") }

func benchEmit(b *testing.B, names ...string) {
	reg := NewRegistry(nil)
	for _, n := range names {
		reg.Subscribe(Subscription{Name: n, Events: []string{PostToolCallHook}, QueueSize: 1 << 16, Handler: func(ctx context.Context, ev Event) (any, error) {
			return nil, nil
		}})
	}
	p := &ToolResult{ToolName: "terminal"}
	b.ReportAllocs()
	for b.Loop() {
		reg.Emit(PostToolCallHook, p)
	}
	b.StopTimer()
	reg.Close(context.Background())
	var dropped int64
	for _, n := range reg.Dropped() {
		dropped += n
	}
	b.ReportMetric(float64(dropped)/float64(b.N), "drops/op")
}

// An observer Emit whose one subscriber is stuck: the queue is full and
// every event is dropped (counted) — Emit must not block.
func BenchmarkEmitStuckSubscriber(b *testing.B) {
	reg := NewRegistry(nil)
	release := make(chan struct{})
	reg.Subscribe(Subscription{Name: "stuck", Events: []string{PostToolCallHook}, QueueSize: 1, Handler: func(ctx context.Context, ev Event) (any, error) {
		<-release
		return nil, nil
	}})
	p := &ToolResult{ToolName: "terminal"}
	b.ReportAllocs()
	for b.Loop() {
		reg.Emit(PostToolCallHook, p)
	}
	b.StopTimer()
	close(release)
	reg.Close(context.Background())
}

// An Emit nobody listens to (most points, most of the time).
func BenchmarkEmitNoSubscriber(b *testing.B) {
	reg := NewRegistry(nil)
	defer reg.Close(context.Background())
	p := &ToolResult{ToolName: "terminal"}
	b.ReportAllocs()
	for b.Loop() {
		reg.Emit(PostToolCallHook, p)
	}
}

const benchHandler = `
N = 0
def handle(event_type, context):
    global N
    N += 1
    return {"decision": "allow"}
`

// A handler.py round trip through its long-lived worker: one command:*
// call, answered.
func BenchmarkPythonWorkerRoundTrip(b *testing.B) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("no python3")
	}
	root := b.TempDir()
	writeHook(b, root, "bench", map[string]string{"HOOK.yaml": "events: [command:*]\n", "handler.py": benchHandler})
	reg := NewRegistry(nil)
	d := NewDirHooks(reg, DirOptions{Root: root, Poll: -1})
	d.Load()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Stop(ctx)
		reg.Close(ctx)
	}()
	roundTrips(b, reg)
}

// The same handler started afresh for every event (what a worker saves).
func BenchmarkPythonPerEvent(b *testing.B) {
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("no python3")
	}
	root := b.TempDir()
	writeHook(b, root, "bench", map[string]string{
		"HOOK.yaml": "events: [command:*]\ncommand: [" + py + ", -c, \"import json,sys; json.load(sys.stdin); print(json.dumps({'decision': 'allow'}))\"]\n",
	})
	reg := NewRegistry(nil)
	d := NewDirHooks(reg, DirOptions{Root: root, Poll: -1})
	d.Load()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Stop(ctx)
		reg.Close(ctx)
	}()
	roundTrips(b, reg)
}

func roundTrips(b *testing.B, reg *Registry) {
	ctx := context.Background()
	p := &Command{Platform: "local", UserID: "u", Command: "status", RawCommand: "status"}
	// warm up: the worker is ready and the handler imported
	for i := 0; i < 3; i++ {
		reg.Command(ctx, p)
	}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		var failed bool
		reg.Call(ctx, "command:status", p, func(a *Answer) { failed = failed || a.Failed() })
		lat = append(lat, time.Since(start))
		if failed {
			b.Fatal("hook failed")
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// The same call when the three callbacks come from three Go plugins (each
// plugin's queue is checked, and flushed if it holds events).
func BenchmarkCallThreePlugins(b *testing.B) {
	reg := NewRegistry(nil)
	defer reg.Close(context.Background())
	for _, n := range []string{"a", "b", "c"} {
		reg.LoadPlugins(Plugin{Name: n, Register: func(c *PluginContext) error {
			c.RegisterHook(PreToolCallHook, Func(func(ctx context.Context, p *PreToolCall) *ToolDecision { return nil }))
			return nil
		}})
	}
	ctx := context.Background()
	p := &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": "ls"}}
	b.ReportAllocs()
	for b.Loop() {
		if d := reg.PreToolCall(ctx, p); d.Action != "" {
			b.Fatal(d)
		}
	}
}
