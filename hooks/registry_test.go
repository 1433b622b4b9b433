package hooks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// answer returns a Handler answering v.
func answer(v any) Handler {
	return func(context.Context, Event) (any, error) { return v, nil }
}

// callNames runs Call and lists the subscribers that answered, in order.
func callNames(reg *Registry, name string, payload any) []string {
	var got []string
	reg.Call(context.Background(), name, payload, func(a *Answer) { got = append(got, a.Hook) })
	return got
}

// recorder is an observer that records the events it got.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) handler(ctx context.Context, ev Event) (any, error) {
	r.mu.Lock()
	r.got = append(r.got, ev.Name)
	r.mu.Unlock()
	return nil, nil
}

func (r *recorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func TestRegistryMatching(t *testing.T) {
	tests := []struct {
		name  string
		subs  []Subscription
		event string
		want  []string
	}{
		{
			name:  "exact before wildcard, within each attachment kind",
			event: "command:reset",
			subs: []Subscription{
				{Name: "dir-wild", Attach: AttachDir, Events: []string{"command:*"}},
				{Name: "go-wild", Attach: AttachGo, Events: []string{"command:*"}},
				{Name: "shell-exact", Attach: AttachShell, Events: []string{"command:reset"}},
				{Name: "dir-exact", Attach: AttachDir, Events: []string{"command:reset"}},
				{Name: "go-exact", Attach: AttachGo, Events: []string{"command:reset"}},
				{Name: "go-star", Attach: AttachGo, Events: []string{"*"}},
			},
			want: []string{"go-exact", "go-wild", "go-star", "dir-exact", "dir-wild", "shell-exact"},
		},
		{
			name:  "bare agent matches nothing",
			event: AgentStartEv,
			subs:  []Subscription{{Name: "bare", Events: []string{"agent"}}, {Name: "wild", Events: []string{"agent:*"}}},
			want:  []string{"wild"},
		},
		{
			name:  "command:* fires for any command",
			event: "command:new",
			subs:  []Subscription{{Name: "w", Events: []string{"command:*"}}, {Name: "other", Events: []string{"command:status"}}},
			want:  []string{"w"},
		},
		{
			name:  "registration order within a kind, Order first",
			event: AgentEndEv,
			subs: []Subscription{
				{Name: "z-second", Attach: AttachDir, Events: []string{AgentEndEv}, Order: "z"},
				{Name: "a-first", Attach: AttachDir, Events: []string{AgentEndEv}, Order: "a"},
				{Name: "p1", Events: []string{AgentEndEv}},
				{Name: "p2", Events: []string{AgentEndEv}},
			},
			want: []string{"p1", "p2", "a-first", "z-second"},
		},
		{
			name:  "a subscriber listed twice is called once",
			event: "command:x",
			subs:  []Subscription{{Name: "both", Events: []string{"command:x", "command:*"}}},
			want:  []string{"both"},
		},
		{
			name:  "no subscribers",
			event: PreLLMCallHook,
			subs:  []Subscription{{Name: "other", Events: []string{PostLLMCallHook}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := NewRegistry(nil)
			defer reg.Close(context.Background())
			for _, s := range tc.subs {
				s.Handler = answer(nil)
				reg.Subscribe(s)
			}
			if got := callNames(reg, tc.event, nil); !slices.Equal(got, tc.want) {
				t.Fatalf("call order %q, want %q", got, tc.want)
			}
			reg.Emit(tc.event, nil) // no subscribers: returns, no error
		})
	}
}

func TestRegistryEmitDelivery(t *testing.T) {
	t.Run("each subscriber sees events in order", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			reg := NewRegistry(nil)
			var a, b recorder
			reg.Subscribe(Subscription{Name: "a", Events: []string{"*"}, Handler: a.handler})
			reg.Subscribe(Subscription{Name: "b", Events: []string{"agent:*"}, Handler: b.handler})
			var want []string
			for i := 0; i < 200; i++ {
				ev := []string{AgentStartEv, AgentStepEv, AgentEndEv}[i%3]
				reg.Emit(ev, nil)
				want = append(want, ev)
			}
			synctest.Wait()
			if !slices.Equal(a.names(), want) || !slices.Equal(b.names(), want) {
				t.Fatalf("out of order:\n%q\n%q", a.names(), b.names())
			}
			reg.Close(context.Background())
		})
	})

	t.Run("a slow subscriber delays neither Emit nor another subscriber", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			reg := NewRegistry(nil)
			release := make(chan struct{})
			reg.Subscribe(Subscription{Name: "stuck", Events: []string{AgentStartEv}, Handler: func(ctx context.Context, ev Event) (any, error) {
				<-release
				return nil, nil
			}})
			var fast recorder
			reg.Subscribe(Subscription{Name: "fast", Events: []string{AgentStartEv}, Handler: fast.handler})
			start := time.Now()
			for i := 0; i < 10; i++ {
				reg.Emit(AgentStartEv, nil)
			}
			if el := time.Since(start); el != 0 {
				t.Fatalf("Emit took %s of fake time", el)
			}
			synctest.Wait() // everything that can run has run: fast got all
			if n := len(fast.names()); n != 10 {
				t.Fatalf("fast subscriber got %d of 10 while another was stuck", n)
			}
			close(release)
			reg.Close(context.Background())
		})
	})

	t.Run("overflow is counted and logged, never silent", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lr := newLogRecorder()
			reg := NewRegistry(lr.logger())
			release := make(chan struct{})
			reg.Subscribe(Subscription{Name: "tiny", Events: []string{AgentStepEv}, QueueSize: 2, Handler: func(ctx context.Context, ev Event) (any, error) {
				<-release
				return nil, nil
			}})
			reg.Emit(AgentStepEv, nil)
			synctest.Wait() // the first is being handled
			for i := 0; i < 5; i++ {
				reg.Emit(AgentStepEv, nil)
			}
			if got := reg.Dropped()["tiny"]; got != 3 {
				t.Fatalf("dropped %d, want 3", got)
			}
			if lr.count("hook queue full", "hook=tiny", "dropped_total=1") != 1 {
				t.Fatalf("log:\n%s", lr)
			}
			close(release)
			reg.Close(context.Background())
		})
	})

	t.Run("unsubscribe delivers what is queued, then OnClosed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			reg := NewRegistry(nil)
			var r recorder
			closed := make(chan struct{})
			unsub := reg.Subscribe(Subscription{Name: "r", Events: []string{"*"}, Handler: r.handler, OnClosed: func() { close(closed) }})
			reg.Emit(AgentStartEv, nil)
			reg.Emit(AgentEndEv, nil)
			unsub()
			unsub()
			reg.Emit(AgentStepEv, nil)
			<-closed
			if got := r.names(); !slices.Equal(got, []string{AgentStartEv, AgentEndEv}) {
				t.Fatalf("got %q", got)
			}
			if reg.Has(AgentStepEv) {
				t.Fatal("still subscribed")
			}
			reg.Close(context.Background())
		})
	})

	t.Run("Close drains, bounded by its context", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			reg := NewRegistry(nil)
			var r recorder
			reg.Subscribe(Subscription{Name: "r", Events: []string{"*"}, Handler: r.handler})
			block := make(chan struct{})
			reg.Subscribe(Subscription{Name: "never", Events: []string{"*"}, Handler: func(ctx context.Context, ev Event) (any, error) {
				<-block
				return nil, nil
			}})
			for i := 0; i < 5; i++ {
				reg.Emit(SessionStartEv, nil)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			err := reg.Close(ctx)
			if err == nil || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Close = %v, want a deadline error", err)
			}
			if n := len(r.names()); n != 5 {
				t.Fatalf("drained %d of 5", n)
			}
			close(block)
		})
	})
}

func TestRegistryFailures(t *testing.T) {
	t.Run("observer panic and error are logged with the hook's name; others still run", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lr := newLogRecorder()
			reg := NewRegistry(lr.logger())
			reg.Subscribe(Subscription{Name: "panics", Events: []string{"*"}, Handler: func(context.Context, Event) (any, error) { panic("kaboom") }})
			reg.Subscribe(Subscription{Name: "errs", Events: []string{"*"}, Handler: func(context.Context, Event) (any, error) { return nil, errors.New("bad day") }})
			var ok recorder
			reg.Subscribe(Subscription{Name: "ok", Events: []string{"*"}, Handler: ok.handler})
			reg.Emit(AgentEndEv, nil)
			reg.Emit(AgentEndEv, nil)
			synctest.Wait()
			if len(ok.names()) != 2 {
				t.Fatal("healthy subscriber missed events")
			}
			if lr.count("hook panicked", "hook=panics", "kaboom") != 2 || lr.count("hook failed", "hook=errs", "bad day") != 2 {
				t.Fatalf("log:\n%s", lr)
			}
			reg.Close(context.Background())
		})
	})

	t.Run("interceptor panic is recovered; the next answer still counts", func(t *testing.T) {
		lr := newLogRecorder()
		reg := NewRegistry(lr.logger())
		defer reg.Close(context.Background())
		reg.Subscribe(Subscription{Name: "boom", Events: []string{PreLLMCallHook}, Handler: func(context.Context, Event) (any, error) { panic("x") }})
		reg.Subscribe(Subscription{Name: "ctx", Events: []string{PreLLMCallHook}, Handler: answer("remember")})
		if got := reg.PreLLMCall(context.Background(), &PreLLMCall{}); got != "remember" {
			t.Fatalf("got %q", got)
		}
		if lr.count("hook panicked", "hook=boom") != 1 {
			t.Fatalf("log:\n%s", lr)
		}
	})

	for _, tc := range []struct {
		name    string
		handler Handler
		attach  Attach
		closed  bool
		block   bool
		msg     string
	}{
		{name: "Go pre_tool_call panic blocks", attach: AttachGo, block: true, msg: "raised",
			handler: func(context.Context, Event) (any, error) { panic("oops") }},
		{name: "Go pre_tool_call overrun blocks", attach: AttachGo, block: true, msg: "timed out",
			handler: func(ctx context.Context, ev Event) (any, error) { time.Sleep(31 * time.Second); return nil, nil }},
		{name: "Go pre_tool_call error fails open", attach: AttachGo,
			handler: func(context.Context, Event) (any, error) { return nil, errors.New("e") }},
		{name: "directory pre_tool_call overrun fails open", attach: AttachDir,
			handler: func(ctx context.Context, ev Event) (any, error) { <-ctx.Done(); return nil, ctx.Err() }},
		{name: "fail_closed subscriber error blocks", attach: AttachShell, closed: true, block: true, msg: "failed closed",
			handler: func(context.Context, Event) (any, error) { return nil, errors.New("spawn failed") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lr := newLogRecorder()
				reg := NewRegistry(lr.logger())
				reg.Subscribe(Subscription{Name: "h", Attach: tc.attach, Events: []string{PreToolCallHook}, Handler: tc.handler, FailClosed: tc.closed})
				d := reg.PreToolCall(context.Background(), &PreToolCall{ToolName: "terminal"})
				if (d.Action == "block") != tc.block || !strings.Contains(d.Message, tc.msg) {
					t.Fatalf("decision %+v, want block=%v with %q", d, tc.block, tc.msg)
				}
				if lr.count("hook=h") == 0 {
					t.Fatalf("failure not logged with the hook's name:\n%s", lr)
				}
				reg.Close(context.Background())
				time.Sleep(time.Minute) // an abandoned callback ends before the bubble
			})
		})
	}

	t.Run("other Go interceptors overrunning fail open with a warning", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lr := newLogRecorder()
			reg := NewRegistry(lr.logger())
			reg.Subscribe(Subscription{Name: "slow", Events: []string{"command:*"}, Timeout: time.Second, Handler: func(ctx context.Context, ev Event) (any, error) {
				time.Sleep(2 * time.Second)
				return &CommandDecision{Decision: "deny"}, nil
			}})
			if got := reg.Command(context.Background(), &Command{Command: "status"}); got.Decision != "" {
				t.Fatalf("overrun answer was used: %+v", got)
			}
			if lr.count("overran its timeout", "hook=slow") != 1 {
				t.Fatalf("log:\n%s", lr)
			}
			reg.Close(context.Background())
			time.Sleep(time.Minute) // the abandoned callback ends before the bubble
		})
	})

	t.Run("interceptor context carries the deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lr := newLogRecorder()
			reg := NewRegistry(lr.logger())
			var left time.Duration
			reg.Subscribe(Subscription{Name: "d", Events: []string{PreLLMCallHook}, Handler: func(ctx context.Context, ev Event) (any, error) {
				dl, ok := ctx.Deadline()
				if !ok {
					return nil, errors.New("no deadline")
				}
				left = time.Until(dl)
				select {
				case <-ctx.Done():
				case <-time.After(time.Hour):
				}
				return nil, ctx.Err()
			}})
			start := time.Now()
			reg.PreLLMCall(context.Background(), &PreLLMCall{})
			if left != 30*time.Second || time.Since(start) != 30*time.Second {
				t.Fatalf("deadline in %s, returned after %s; want the Go default 30 s", left, time.Since(start))
			}
			if lr.count("still running after its deadline") != 0 || len(reg.Stuck()) != 0 {
				t.Fatalf("a callback that honoured its context was abandoned; log:\n%s", lr)
			}
			reg.Close(context.Background())
		})
	})
}

// Before a subscriber's interceptor runs, its queued observer events are
// delivered: a plugin's on_session_start runs before its pre_llm_call.
func TestRegistryFlushBeforeInterceptor(t *testing.T) {
	reg := NewRegistry(nil)
	defer reg.Close(context.Background())
	var mu sync.Mutex
	var seen []string
	slowStart := func(ctx context.Context, ev Event) (any, error) {
		time.Sleep(20 * time.Millisecond) // a plugin that takes its time to initialise
		mu.Lock()
		seen = append(seen, ev.Name)
		mu.Unlock()
		return nil, nil
	}
	reg.Subscribe(Subscription{Name: "plugin", Events: []string{OnSessionStartHook, PreLLMCallHook}, Handler: func(ctx context.Context, ev Event) (any, error) {
		if ev.Name == OnSessionStartHook {
			return slowStart(ctx, ev)
		}
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, ev.Name)
		return fmt.Sprintf("after %d", len(seen)-1), nil
	}})
	reg.Emit(OnSessionStartHook, &SessionStarted{SessionID: "s"})
	got := reg.PreLLMCall(context.Background(), &PreLLMCall{SessionID: "s"})
	if got != "after 1" || !slices.Equal(seen, []string{OnSessionStartHook, PreLLMCallHook}) {
		t.Fatalf("context %q, order %q", got, seen)
	}
}

func TestRegistryUnknownNames(t *testing.T) {
	lr := newLogRecorder()
	reg := NewRegistry(lr.logger())
	var r recorder
	reg.Subscribe(Subscription{Name: "typo-plugin", Events: []string{"pre_tool_cal", "future_hook"}, Handler: r.handler})
	if lr.count(`unknown event "pre_tool_cal"`, `did you mean "pre_tool_call"?`, "hook=typo-plugin") != 1 {
		t.Fatalf("log:\n%s", lr)
	}
	if lr.count(`unknown event "future_hook"`, "kept") != 1 {
		t.Fatalf("log:\n%s", lr)
	}
	// kept: a later herald emitting it reaches the subscriber
	reg.Emit("future_hook", nil)
	reg.Close(context.Background())
	if got := r.names(); !slices.Equal(got, []string{"future_hook"}) {
		t.Fatalf("got %q", got)
	}
}

func TestRegistryEmittedAndHas(t *testing.T) {
	reg := NewRegistry(nil)
	defer reg.Close(context.Background())
	if reg.Emitted(AgentStartEv) || reg.Has(AgentStartEv) {
		t.Fatal("fresh registry")
	}
	reg.Subscribe(Subscription{Name: "events", Attach: AttachInternal, Events: []string{"*"}, Handler: answer(nil)})
	if !reg.Has(AgentStartEv) || reg.HasAttached(AgentStartEv) {
		t.Fatal("an internal watcher is not an attached hook")
	}
	reg.Emit(AgentStartEv, nil)
	reg.Call(context.Background(), PreToolCallHook, nil, func(*Answer) {})
	if !reg.Emitted(AgentStartEv) || !reg.Emitted(PreToolCallHook) || reg.Emitted(AgentEndEv) {
		t.Fatal("Emitted wrong")
	}
}

func TestCatalogue(t *testing.T) {
	names := Names()
	if len(names) != 27 || !slices.IsSorted(names) {
		t.Fatalf("%d names: %q", len(names), names)
	}
	for _, p := range Catalogue() {
		if !Known(p.Name) {
			t.Errorf("%s not Known", p.Name)
		}
	}
	for _, tc := range []struct {
		pattern string
		known   bool
	}{{"command:new", true}, {"agent:*", true}, {"session:*", true}, {"*", true}, {"agent", false}, {"nope:*", false}, {"pre_tool_cal", false}} {
		if Known(tc.pattern) != tc.known {
			t.Errorf("Known(%q) = %v", tc.pattern, !tc.known)
		}
	}
	if p, ok := Lookup("command:status"); !ok || p.Kind != Interceptor {
		t.Error("command:status is the command:* interceptor")
	}
	if Suggest("on_sesion_start") != OnSessionStartHook {
		t.Error("did-you-mean")
	}
}

// A Go plugin registers one subscription per callback; they share one
// queue, so the plugin sees its events in order across callbacks, and its
// on_session_start is delivered before its pre_llm_call runs.
func TestPluginCallbacksShareOneQueue(t *testing.T) {
	reg := NewRegistry(nil)
	defer reg.Close(context.Background())
	var mu sync.Mutex
	var seen []string
	note := func(s string) {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
	}
	loaded := reg.LoadPlugins(Plugin{Name: "p", Register: func(c *PluginContext) error {
		c.RegisterHook(OnSessionStartHook, Observe(func(ctx context.Context, p *SessionStarted) {
			time.Sleep(20 * time.Millisecond) // slow to initialise
			note("start " + p.SessionID)
		}))
		c.RegisterHook(PostAPIRequestHook, Observe(func(ctx context.Context, p *APIResponse) { note("api " + p.SessionID) }))
		c.RegisterHook(PreLLMCallHook, Func(func(ctx context.Context, p *PreLLMCall) *LLMContext {
			note("llm " + p.SessionID)
			return nil
		}))
		return nil
	}})
	if len(loaded) != 1 || !slices.Equal(loaded[0].Events, []string{OnSessionStartHook, PostAPIRequestHook, PreLLMCallHook}) {
		t.Fatalf("loaded %+v", loaded)
	}
	reg.Emit(OnSessionStartHook, &SessionStarted{SessionID: "1"})
	reg.Emit(PostAPIRequestHook, &APIResponse{SessionID: "1"})
	reg.PreLLMCall(context.Background(), &PreLLMCall{SessionID: "1"})
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, []string{"start 1", "api 1", "llm 1"}) {
		t.Fatalf("order %q", seen)
	}
}

func TestLoadPluginsFailures(t *testing.T) {
	lr := newLogRecorder()
	reg := NewRegistry(lr.logger())
	defer reg.Close(context.Background())
	loaded := reg.LoadPlugins(
		Plugin{Name: "panics", Register: func(c *PluginContext) error {
			c.RegisterHook(PreToolCallHook, answer(Block("x")))
			panic("bad plugin")
		}},
		Plugin{Name: "errs", Register: func(c *PluginContext) error { return errors.New("missing config") }},
		Plugin{Name: "none"},
		Plugin{Name: "ok", Register: func(c *PluginContext) error { c.RegisterHook(AgentEndEv, answer(nil)); return nil }},
	)
	if len(loaded) != 1 || loaded[0].Name != "ok" {
		t.Fatalf("loaded %+v", loaded)
	}
	if d := reg.PreToolCall(context.Background(), &PreToolCall{}); d.Action != "" {
		t.Fatal("a failed plugin's subscriptions were kept")
	}
	for _, name := range []string{"panics", "errs", "none"} {
		if lr.count("plugin failed to register", "plugin="+name) != 1 {
			t.Fatalf("log:\n%s", lr)
		}
	}
}

// A Go callback that ignores its context holds nobody past its deadline:
// the caller is released at the deadline (or when its own context ends,
// as /stop does), the call counts as failed — blocked for pre_tool_call,
// fail-open with a warning elsewhere — and the abandoned goroutine is
// logged once per hook, however many calls it swallows.
func TestGoInterceptorIgnoringContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lr := newLogRecorder()
		reg := NewRegistry(lr.logger())
		release := make(chan struct{})
		hang := func(context.Context, Event) (any, error) {
			<-release
			return &ToolDecision{Action: "modify", Args: map[string]any{"late": true}}, nil
		}
		reg.Subscribe(Subscription{Name: "hung", Events: []string{PreToolCallHook, PreLLMCallHook}, Handler: hang})
		reg.Subscribe(Subscription{Name: "ctx", Events: []string{PreLLMCallHook}, Handler: func(context.Context, Event) (any, error) {
			return &LLMContext{Context: "still here"}, nil
		}})

		for i := 0; i < 3; i++ {
			start := time.Now()
			d := reg.PreToolCall(context.Background(), &PreToolCall{ToolName: "terminal"})
			if took := time.Since(start); took != 30*time.Second+abandonGrace {
				t.Fatalf("call %d released after %s, want the documented 30 s (and the grace to notice)", i, took)
			}
			if d.Action != "block" || !strings.Contains(d.Message, "timed out") {
				t.Fatalf("call %d: decision %+v, want blocked", i, d)
			}
		}
		start := time.Now()
		if got := reg.PreLLMCall(context.Background(), &PreLLMCall{}); got != "still here" || time.Since(start) != 30*time.Second+abandonGrace {
			t.Fatalf("pre_llm_call: %q after %s, want the other answer after 30 s", got, time.Since(start))
		}
		if n := lr.count("WARN", "overran its timeout", "hook=hung", "event=pre_llm_call"); n != 1 {
			t.Fatalf("fail-open overrun warned %d times; log:\n%s", n, lr)
		}

		ctx, stop := context.WithCancel(context.Background())
		time.AfterFunc(5*time.Second, stop) // /stop, five seconds in
		start = time.Now()
		if d := reg.PreToolCall(ctx, &PreToolCall{ToolName: "terminal"}); d.Action != "block" || time.Since(start) != 5*time.Second+abandonGrace {
			t.Fatalf("after a cancel: %+v after %s", d, time.Since(start))
		}

		if n := lr.count("ERROR", "still running after its deadline", "hook=hung"); n != 1 {
			t.Fatalf("the abandoned goroutine was logged %d times, want once; log:\n%s", n, lr)
		}
		if got := reg.Stuck()["hung"]; got != 5 {
			t.Fatalf("stuck = %d, want 5", got)
		}
		close(release)
		synctest.Wait()
		if got := reg.Stuck()["hung"]; got != 0 {
			t.Fatalf("stuck after release = %d", got)
		}
		reg.Close(context.Background())
	})
}
