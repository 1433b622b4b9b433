package hooks

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Attach is how a subscriber is attached. Interceptors are consulted in
// this order: Go plugins, then directory hooks, then shell hooks.
type Attach int

const (
	AttachGo Attach = iota
	AttachDir
	AttachShell
	// AttachInternal is for herald's own watchers (the /v1/events stream);
	// they observe only.
	AttachInternal
)

func (a Attach) String() string {
	switch a {
	case AttachGo:
		return "plugin"
	case AttachDir:
		return "directory"
	case AttachShell:
		return "shell"
	}
	return "internal"
}

// Event is what a subscriber receives.
type Event struct {
	Name    string
	Payload any
	Time    time.Time
}

// Handler handles one event. For observer points its result is ignored;
// for interceptors it is one of the result types of results.go, or nil.
type Handler func(ctx context.Context, ev Event) (any, error)

// Subscription describes a subscriber.
type Subscription struct {
	// Name identifies the subscriber in logs: a plugin name, a hook
	// directory, a shell command.
	Name   string
	Attach Attach
	// Events are catalogue names or patterns: "command:*" matches every
	// command, "*" every event. A bare "agent" matches nothing.
	Events  []string
	Handler Handler
	// Timeout bounds an interceptor answer (defaults: 30 s for Go, 60 s
	// otherwise).
	Timeout time.Duration
	// Matcher, if set, filters tool events by tool name.
	Matcher func(tool string) bool
	// FailClosed makes a failing pre_tool_call subscriber block.
	FailClosed bool
	// QueueSize bounds the subscriber's observer queue (default 1024).
	QueueSize int
	// Concurrent marks out-of-process subscribers whose calls may run in
	// parallel with their siblings'.
	Concurrent bool
}

type sub struct {
	Subscription
	seq     uint64
	queue   chan queued
	pending atomic.Int64
	dropped atomic.Int64
	lastLog atomic.Int64
	done    chan struct{}
	closed  atomic.Bool
}

type queued struct {
	ev      Event
	barrier chan struct{}
}

// Registry is the one hook bus. Every attachment kind subscribes to it and
// every emitter publishes to it.
type Registry struct {
	log *slog.Logger

	mu   sync.Mutex
	subs []*sub
	seq  uint64
	snap atomic.Pointer[snapshot]
	wg   sync.WaitGroup

	emitted sync.Map // name → struct{}: which points have fired (tests, `herald hooks list`)
}

type snapshot struct {
	subs     []*sub
	resolved sync.Map // event name → []*sub in call order
}

// NewRegistry returns an empty registry logging to log.
func NewRegistry(log *slog.Logger) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Registry{log: log}
	r.snap.Store(&snapshot{})
	return r
}

// Logger returns the registry's logger.
func (r *Registry) Logger() *slog.Logger { return r.log }

// Subscribe adds a subscriber and returns a function that removes it
// (after delivering what is already queued for it). Unknown event names
// are kept, with a warning, for forward compatibility.
func (r *Registry) Subscribe(s Subscription) (unsubscribe func()) {
	if s.Handler == nil {
		panic("hooks: Subscribe with nil Handler")
	}
	for _, e := range s.Events {
		if !Known(e) {
			msg := fmt.Sprintf("hook %q subscribes to unknown event %q", s.Name, e)
			if sug := Suggest(e); sug != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sug)
			}
			r.log.Warn(msg+"; kept in case a later herald emits it", "hook", s.Name, "event", e)
		}
	}
	if s.QueueSize <= 0 {
		s.QueueSize = 1024
	}
	if s.Timeout <= 0 {
		if s.Attach == AttachGo {
			s.Timeout = 30 * time.Second
		} else {
			s.Timeout = 60 * time.Second
		}
	}
	r.mu.Lock()
	r.seq++
	sb := &sub{Subscription: s, seq: r.seq, queue: make(chan queued, s.QueueSize), done: make(chan struct{})}
	r.subs = append(r.subs, sb)
	r.publishLocked()
	r.mu.Unlock()
	r.wg.Add(1)
	go r.deliver(sb)
	var once sync.Once
	return func() { once.Do(func() { r.remove(sb) }) }
}

func (r *Registry) remove(sb *sub) {
	r.mu.Lock()
	for i, s := range r.subs {
		if s == sb {
			r.subs = append(r.subs[:i:i], r.subs[i+1:]...)
			break
		}
	}
	r.publishLocked()
	r.mu.Unlock()
	if sb.closed.CompareAndSwap(false, true) {
		close(sb.queue)
	}
}

func (r *Registry) publishLocked() {
	r.snap.Store(&snapshot{subs: append([]*sub(nil), r.subs...)})
}

// Subscribers lists the current subscriptions (for `herald hooks list`).
func (r *Registry) Subscribers() []Subscription {
	snap := r.snap.Load()
	out := make([]Subscription, 0, len(snap.subs))
	for _, s := range snap.subs {
		out = append(out, s.Subscription)
	}
	return out
}

// resolve returns the subscribers of an event name in call order: by
// attachment kind, then exact subscriptions before "base:*" wildcards and
// "*", then registration order.
func (snap *snapshot) resolve(name string) []*sub {
	if v, ok := snap.resolved.Load(name); ok {
		return v.([]*sub)
	}
	base, _, hasBase := strings.Cut(name, ":")
	var out []*sub
	for pass := 0; pass < 3; pass++ {
		for _, s := range snap.subs {
			for _, e := range s.Events {
				var hit bool
				switch pass {
				case 0:
					hit = e == name
				case 1:
					hit = hasBase && e == base+":*" && e != name
				case 2:
					hit = e == "*"
				}
				if hit {
					out = append(out, s)
					break
				}
			}
		}
	}
	// stable sort by attachment kind keeps exact-before-wildcard within a kind
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Attach < out[j-1].Attach; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	snap.resolved.Store(name, out)
	return out
}

// Has reports whether anything subscribes to the event name.
func (r *Registry) Has(name string) bool { return len(r.snap.Load().resolve(name)) > 0 }

// HasAttached reports whether a subscriber other than herald's internal
// watchers listens to the event (Hermes wires agent:step only then).
func (r *Registry) HasAttached(name string) bool {
	for _, s := range r.snap.Load().resolve(name) {
		if s.Attach != AttachInternal {
			return true
		}
	}
	return false
}

// Emit publishes an observer event. It never blocks: each subscriber gets
// it through its own bounded queue; a full queue drops the event, counts it
// and logs.
func (r *Registry) Emit(name string, payload any) {
	r.markEmitted(name)
	subs := r.snap.Load().resolve(name)
	if len(subs) == 0 {
		return
	}
	ev := Event{Name: name, Payload: payload, Time: time.Now()}
	for _, s := range subs {
		if !matches(s, payload) {
			continue
		}
		r.enqueue(s, queued{ev: ev})
	}
}

func (r *Registry) enqueue(s *sub, q queued) bool {
	if s.closed.Load() {
		return false
	}
	s.pending.Add(1)
	ok := func() (ok bool) {
		defer func() {
			if recover() != nil { // queue closed by a concurrent unsubscribe
				ok = false
			}
		}()
		select {
		case s.queue <- q:
			return true
		default:
			return false
		}
	}()
	if !ok {
		s.pending.Add(-1)
		if q.barrier != nil {
			return false
		}
		n := s.dropped.Add(1)
		now := time.Now().UnixNano()
		if last := s.lastLog.Load(); now-last > int64(10*time.Second) && s.lastLog.CompareAndSwap(last, now) {
			r.log.Warn("hook queue full; event dropped", "hook", s.Name, "event", q.ev.Name, "dropped_total", n)
		}
	}
	return ok
}

// Dropped returns how many events were dropped for full queues, per
// subscriber name.
func (r *Registry) Dropped() map[string]int64 {
	out := map[string]int64{}
	for _, s := range r.snap.Load().subs {
		if n := s.dropped.Load(); n > 0 {
			out[s.Name] += n
		}
	}
	return out
}

func (r *Registry) deliver(s *sub) {
	defer r.wg.Done()
	defer close(s.done)
	for q := range s.queue {
		if q.barrier != nil {
			close(q.barrier)
			s.pending.Add(-1)
			continue
		}
		r.observe(s, q.ev)
		s.pending.Add(-1)
	}
}

func (r *Registry) observe(s *sub, ev Event) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("hook panicked", "hook", s.Name, "event", ev.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	if _, err := s.Handler(ctx, ev); err != nil {
		r.log.Warn("hook failed", "hook", s.Name, "event", ev.Name, "err", err)
	}
}

// flush waits (at most until ctx ends) for a subscriber's queued observer
// events to be handled, so its interceptor sees them first.
func (r *Registry) flush(ctx context.Context, s *sub) {
	if s.pending.Load() == 0 {
		return
	}
	b := make(chan struct{})
	if !r.enqueue(s, queued{barrier: b}) {
		return
	}
	select {
	case <-b:
	case <-ctx.Done():
	}
}

func matches(s *sub, payload any) bool {
	if s.Matcher == nil {
		return true
	}
	tn, ok := payload.(ToolNamer)
	if !ok {
		return true
	}
	return s.Matcher(tn.HookToolName())
}

// Answer is one subscriber's reply to an interceptor call.
type Answer struct {
	Hook       string
	Attach     Attach
	Value      any
	Err        error
	Panicked   bool
	TimedOut   bool
	FailClosed bool
	Elapsed    time.Duration
}

// Failed reports whether the subscriber did not answer properly.
func (a *Answer) Failed() bool { return a.Err != nil || a.Panicked || a.TimedOut }

// Call runs the interceptors of an event and hands each answer to fn in
// call order. Go callbacks run one after another on the caller's
// goroutine with a deadline context; out-of-process subscribers run
// concurrently and their answers are handed over in declared order. A
// panic, error or overrun is recovered and logged, and reported in the
// Answer so the combiner can decide (fail open, or fail closed for
// pre_tool_call).
func (r *Registry) Call(ctx context.Context, name string, payload any, fn func(*Answer)) {
	r.markEmitted(name)
	subs := r.snap.Load().resolve(name)
	if len(subs) == 0 {
		return
	}
	ev := Event{Name: name, Payload: payload, Time: time.Now()}
	var par []*sub
	for _, s := range subs {
		if s.Attach == AttachInternal {
			r.enqueue(s, queued{ev: ev})
			continue
		}
		if !matches(s, payload) {
			continue
		}
		if s.Concurrent {
			par = append(par, s)
			continue
		}
		a := r.callOne(ctx, s, ev)
		fn(&a)
	}
	switch len(par) {
	case 0:
	case 1:
		a := r.callOne(ctx, par[0], ev)
		fn(&a)
	default:
		answers := make([]Answer, len(par))
		var wg sync.WaitGroup
		for i, s := range par {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = r.callOne(ctx, s, ev)
			}()
		}
		wg.Wait()
		for i := range answers {
			fn(&answers[i])
		}
	}
}

func (r *Registry) callOne(ctx context.Context, s *sub, ev Event) (a Answer) {
	a = Answer{Hook: s.Name, Attach: s.Attach, FailClosed: s.FailClosed}
	dctx := newDeadline(ctx, s.Timeout)
	defer dctx.release()
	r.flush(dctx, s)
	start := time.Now()
	defer func() {
		a.Elapsed = time.Since(start)
		if p := recover(); p != nil {
			a.Panicked, a.Value = true, nil
			a.Err = fmt.Errorf("panic: %v", p)
			r.log.Error("hook panicked", "hook", s.Name, "event", ev.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			return
		}
		if a.Elapsed > s.Timeout && !a.TimedOut {
			a.TimedOut = true
			a.Err = fmt.Errorf("no answer within %s", s.Timeout)
		}
		if a.TimedOut {
			r.log.Warn("hook overran its timeout; its answer is ignored", "hook", s.Name, "event", ev.Name, "timeout", s.Timeout, "took", a.Elapsed)
			a.Value = nil
		} else if a.Err != nil {
			r.log.Warn("hook failed", "hook", s.Name, "event", ev.Name, "err", a.Err)
		}
	}()
	a.Value, a.Err = s.Handler(dctx, ev)
	return a
}

func (r *Registry) markEmitted(name string) {
	if _, ok := r.emitted.Load(name); !ok {
		r.emitted.Store(name, struct{}{})
	}
}

// Emitted reports whether an event of that name has been emitted or called
// since the registry was made.
func (r *Registry) Emitted(name string) bool {
	_, ok := r.emitted.Load(name)
	return ok
}

// Close stops delivery: every subscriber's queue is drained (waiting at
// most until ctx ends) and its worker stopped.
func (r *Registry) Close(ctx context.Context) error {
	r.mu.Lock()
	subs := r.subs
	r.subs = nil
	r.publishLocked()
	r.mu.Unlock()
	for _, s := range subs {
		if s.closed.CompareAndSwap(false, true) {
			close(s.queue)
		}
	}
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("hooks: observer queues not drained: %w", ctx.Err())
	}
}
