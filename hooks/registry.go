package hooks

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
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
	// Time is when the event was emitted.
	Time time.Time
	// Point names this firing of the hook point (unique in the process).
	Point uint64
	// track collects the attachments' answers (observe.go)
	track *pointTrack
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
	// command, "*" every event. A bare "agent" matches nothing. A
	// subscriber matched by two of its patterns is called once.
	Events  []string
	Handler Handler
	// Timeout bounds an interceptor answer (defaults: 30 s for Go, 60 s
	// otherwise).
	Timeout time.Duration
	// Matcher, if set, filters tool events by tool name.
	Matcher func(tool string) bool
	// Accept, if set, filters events by payload (after Matcher): a Claude
	// Code PostToolUse hook takes only calls that succeeded. It alone
	// decides on the events herald emits for Claude Code's dialect only
	// (SessionStarted.ClaudeOnly): a subscriber without one never gets
	// them, so Hermes-shaped subscribers see what Hermes emits.
	Accept func(payload any) bool
	// FailClosed makes a failing pre_tool_call subscriber block.
	FailClosed bool
	// Inline subscribers of an observer point are called in line by
	// Notify, which waits for them and hands back their answers (a shell
	// hook on post_tool_call finishes before the next tool runs; a Claude
	// Code Stop hook may send the agent back to work). Emit skips them.
	Inline bool
	// QueueSize bounds the observer events waiting for the subscriber
	// (default 1024); beyond it events are dropped and counted.
	QueueSize int
	// Concurrent marks out-of-process subscribers whose calls may run in
	// parallel with their siblings'.
	Concurrent bool
	// Order, if set, places the subscriber among those of its attachment
	// kind (directory hooks use their directory's name, so a reloaded hook
	// keeps its alphabetical place); unset sorts first, then by
	// registration.
	Order string
	// OnClosed, if set, is called once the subscription is removed (or the
	// registry closed) and everything queued for it has been delivered.
	OnClosed func()
	// Priority orders the subscribers of one event: higher first, and a
	// lower priority is called only once every higher one has answered
	// (and not at all once an answer at an event that can block has
	// blocked). Equal priorities keep the order above and run as they
	// always do (Go callbacks one after another, the others side by
	// side). Default 0.
	Priority int
	// Group, if set, puts subscriptions on one delivery queue: a Go
	// plugin's callbacks (one subscription per RegisterHook) then see all
	// its events in the order they happened, and flushing before one of
	// its interceptors delivers all of its queued observer events.
	Group string
}

// sub is a subscriber.
type sub struct {
	Subscription
	seq uint64
	// observes is false for subscribers that listen only to interceptor
	// points: they never have queued events, so Call need not flush.
	observes bool
	qs       *subQueue
	removed  atomic.Bool

	dropped atomic.Int64
	lastLog atomic.Int64
	// stuck counts Go interceptor calls abandoned at their deadline whose
	// callback has not returned; the first is logged.
	stuck  atomic.Int64
	leaked atomic.Bool
}

// subQueue is the observer queue of one subscriber, or of a group. It is a
// slice under a mutex rather than a channel: the delivery goroutine takes
// everything queued at once, and Emit wakes it only when it sleeps, so a
// burst of events costs one wake-up instead of one per event.
type subQueue struct {
	size int

	mu       sync.Mutex
	q        []queued
	spare    []queued
	busy     bool // the delivery goroutine is handling a batch
	sleeping bool // … or waits on wake
	closed   bool
	refs     int // subscriptions using it (under Registry.mu)
	wake     chan struct{}
	// pending counts items queued or being handled, so Call can see an
	// idle queue without the lock.
	pending atomic.Int64
}

// queued is an event for a subscriber, a flush barrier, or (closing) the
// mark after a removed subscriber's last event.
type queued struct {
	to      *sub
	ev      Event
	barrier chan struct{}
	closing bool
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

	groups map[string]*subQueue

	// names caches, per event name, its subscribers in call order for the
	// current snapshot and whether it has fired. Copied on write: a new
	// name (or a stale entry) is rare, a lookup is the hot path.
	names atomic.Pointer[map[string]*nameEntry]

	// commands are the plugins' slash commands (commands.go)
	commands commandTable

	// results is the watcher of every firing's answers (observe.go)
	results atomic.Pointer[func(PointResult)]
}

type snapshot struct {
	subs []*sub
}

type nameEntry struct {
	snap    *snapshot
	subs    []*sub
	emitted *atomic.Bool // shared by the entries of one name across snapshots
}

// clockBase anchors monoNow, the drop-log rate limit's clock.
var clockBase = time.Now()

func monoNow() time.Duration { return time.Since(clockBase) }

// NewRegistry returns an empty registry logging to log.
func NewRegistry(log *slog.Logger) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Registry{log: log}
	r.snap.Store(&snapshot{})
	r.names.Store(&map[string]*nameEntry{})
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
	// a group's queue also carries its other members' events
	observes := s.Attach == AttachInternal || s.Group != ""
	for _, e := range s.Events {
		if !Known(e) {
			msg := fmt.Sprintf("hook %q subscribes to unknown event %q", s.Name, e)
			if sug := Suggest(e); sug != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sug)
			}
			r.log.Warn(msg+"; kept in case a later herald emits it", "hook", s.Name, "event", e)
		}
		if p, ok := Lookup(e); !ok || p.Kind == Observer {
			observes = true // observers, wildcards and names we do not know
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
	sb := &sub{Subscription: s, seq: r.seq, observes: observes}
	if g := r.groups[s.Group]; s.Group != "" && g != nil {
		sb.qs = g
		g.size = max(g.size, s.QueueSize)
	} else {
		sb.qs = &subQueue{size: s.QueueSize, wake: make(chan struct{}, 1)}
		if s.Group != "" {
			if r.groups == nil {
				r.groups = map[string]*subQueue{}
			}
			r.groups[s.Group] = sb.qs
		}
		r.wg.Add(1)
		go r.deliver(sb.qs)
	}
	sb.qs.refs++
	r.subs = append(r.subs, sb)
	r.publishLocked()
	r.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { r.remove(sb) }) }
}

func (r *Registry) remove(sb *sub) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, s := range r.subs {
		if s == sb {
			r.subs = append(r.subs[:i:i], r.subs[i+1:]...)
			break
		}
	}
	r.publishLocked()
	r.detachLocked(sb)
}

// detachLocked stops queueing for sb; its OnClosed runs after what is
// already queued, and the queue closes with its last subscriber.
func (r *Registry) detachLocked(sb *sub) {
	if sb.removed.Swap(true) {
		return
	}
	qs := sb.qs
	qs.push(queued{to: sb, closing: true}, true)
	qs.refs--
	if qs.refs == 0 {
		if r.groups[sb.Group] == qs {
			delete(r.groups, sb.Group)
		}
		qs.close()
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

// lookup returns the subscribers of an event name in call order, and
// marks the name as fired when mark is set.
func (r *Registry) lookup(name string, mark bool) []*sub {
	snap := r.snap.Load()
	if e := (*r.names.Load())[name]; e != nil && e.snap == snap {
		if mark && !e.emitted.Load() {
			e.emitted.Store(true)
		}
		return e.subs
	}
	return r.lookupSlow(name, snap, mark)
}

func (r *Registry) lookupSlow(name string, snap *snapshot, mark bool) []*sub {
	subs := resolve(snap.subs, name)
	r.mu.Lock()
	defer r.mu.Unlock()
	old := *r.names.Load()
	emitted := new(atomic.Bool)
	if e := old[name]; e != nil {
		emitted = e.emitted
	}
	if mark {
		emitted.Store(true)
	}
	m := make(map[string]*nameEntry, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[name] = &nameEntry{snap: snap, subs: subs, emitted: emitted}
	r.names.Store(&m)
	return subs
}

// resolve orders the subscribers of an event name: by priority (higher
// first), then attachment kind, then exact subscriptions before "base:*"
// wildcards and "*", then Order, then registration.
func resolve(all []*sub, name string) []*sub {
	base, _, hasBase := strings.Cut(name, ":")
	var out []*sub
	var passOf []int
	for pass := 0; pass < 3; pass++ {
		for _, s := range all {
			if slices.Contains(out, s) {
				continue // listed under two patterns: called once, at the first
			}
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
					passOf = append(passOf, pass)
					break
				}
			}
		}
	}
	less := func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Priority != b.Priority {
			return a.Priority > b.Priority
		}
		if a.Attach != b.Attach {
			return a.Attach < b.Attach
		}
		if passOf[i] != passOf[j] {
			return passOf[i] < passOf[j]
		}
		if a.Order != b.Order {
			return a.Order < b.Order
		}
		return a.seq < b.seq
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && less(j, j-1); j-- {
			out[j], out[j-1] = out[j-1], out[j]
			passOf[j], passOf[j-1] = passOf[j-1], passOf[j]
		}
	}
	return out
}

// Has reports whether anything subscribes to the event name.
func (r *Registry) Has(name string) bool { return len(r.lookup(name, false)) > 0 }

// HasAttached reports whether a subscriber other than herald's internal
// watchers listens to the event (Hermes wires agent:step only then).
func (r *Registry) HasAttached(name string) bool {
	for _, s := range r.lookup(name, false) {
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
	subs := r.lookup(name, true)
	if len(subs) == 0 {
		return
	}
	ev := Event{Name: name, Payload: payload, Time: time.Now(), Point: pointSeq.Add(1)}
	t := r.track(&ev, countAttached(subs, func(s *sub) bool { return !s.Inline && matches(s, payload) }))
	for _, s := range subs {
		if s.Inline || !matches(s, payload) {
			continue
		}
		if !r.enqueue(s, queued{ev: ev}) && s.Attach != AttachInternal {
			t.answered(AttachmentResult{Name: s.Name, Attach: s.Attach, Dropped: true})
		}
	}
}

// Notify publishes an observer event: queued for its subscribers as by
// Emit, and handed to its in-line subscribers, whose answers go to fn in
// declared order before Notify returns (as Call's do).
func (r *Registry) Notify(ctx context.Context, name string, payload any, fn func(*Answer)) {
	r.notify(ctx, name, payload, true, fn)
}

// CallInline calls only the in-line subscribers of an observer event: the
// emitter publishes it to the others separately (subagent_stop reaches
// Hermes' observers once all children are done, in task order, and a
// Claude Code SubagentStop hook as each child stops).
func (r *Registry) CallInline(ctx context.Context, name string, payload any, fn func(*Answer)) {
	r.notify(ctx, name, payload, false, fn)
}

// HasInline reports whether an in-line subscriber listens to the event.
func (r *Registry) HasInline(name string) bool {
	for _, s := range r.lookup(name, false) {
		if s.Inline {
			return true
		}
	}
	return false
}

func (r *Registry) notify(ctx context.Context, name string, payload any, queue bool, fn func(*Answer)) {
	subs := r.lookup(name, true)
	if len(subs) == 0 {
		return
	}
	ev := Event{Name: name, Payload: payload, Time: time.Now(), Point: pointSeq.Add(1)}
	takesQueued := func(s *sub) bool { return queue && !s.Inline && matches(s, payload) }
	inline := func(s *sub) bool { return s.Inline && matches(s, payload) }
	// the in-line answers count as one, reported when all are in
	t := r.track(&ev, countAttached(subs, takesQueued)+min(countAttached(subs, inline), 1))
	for _, s := range subs {
		if takesQueued(s) && !r.enqueue(s, queued{ev: ev}) && s.Attach != AttachInternal {
			t.answered(AttachmentResult{Name: s.Name, Attach: s.Attach, Dropped: true})
		}
	}
	if countAttached(subs, inline) == 0 {
		return
	}
	r.callAll(ctx, subs, ev, inline, t.collect(func(a *Answer) bool { fn(a); return false }))
	t.flushCollected()
}

func (r *Registry) enqueue(s *sub, q queued) bool {
	if s.removed.Load() {
		return false
	}
	q.to = s
	if s.qs.push(q, q.barrier != nil) {
		return true
	}
	if q.barrier != nil {
		return false
	}
	n := s.dropped.Add(1)
	now := int64(monoNow())
	if last := s.lastLog.Load(); (last == 0 || now-last > int64(10*time.Second)) && s.lastLog.CompareAndSwap(last, now) {
		r.log.Warn("hook queue full; event dropped", "hook", s.Name, "event", q.ev.Name, "dropped_total", n)
	}
	return false
}

// push queues q (force: whatever the room). It wakes the delivery
// goroutine only if it sleeps.
func (s *subQueue) push(q queued, force bool) bool {
	s.mu.Lock()
	if s.closed || (!force && len(s.q) >= s.size) {
		s.mu.Unlock()
		return false
	}
	s.q = append(s.q, q)
	s.pending.Add(1)
	wake := s.sleeping
	s.sleeping = false
	s.mu.Unlock()
	if wake {
		s.wake <- struct{}{} // room for one; only the waker that cleared sleeping sends
	}
	return true
}

func (s *subQueue) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	wake := s.sleeping
	s.sleeping = false
	s.mu.Unlock()
	if wake {
		s.wake <- struct{}{}
	}
}

// take waits for queued events and returns them all; ok is false once the
// subscription is closed and drained.
func (s *subQueue) take(done []queued) (batch []queued, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if done != nil {
		s.pending.Add(-int64(len(done)))
		clear(done)
		s.spare = done[:0]
	}
	for len(s.q) == 0 {
		s.busy = false
		if s.closed {
			return nil, false
		}
		s.sleeping = true
		s.mu.Unlock()
		<-s.wake
		s.mu.Lock()
	}
	batch, s.q = s.q, s.spare
	s.spare = nil
	s.busy = true
	return batch, true
}

// idle reports whether nothing is queued for or being handled by s.
func (s *subQueue) idle() bool { return s.pending.Load() == 0 }

// Dropped returns how many events were dropped for full queues, per
// subscriber name.
func (r *Registry) Dropped() map[string]int64 {
	return r.countBySub(func(s *sub) int64 { return s.dropped.Load() })
}

// countBySub sums a per-subscriber counter by subscriber name, leaving
// out zeros.
func (r *Registry) countBySub(count func(*sub) int64) map[string]int64 {
	out := map[string]int64{}
	for _, s := range r.snap.Load().subs {
		if n := count(s); n > 0 {
			out[s.Name] += n
		}
	}
	return out
}

func (r *Registry) deliver(qs *subQueue) {
	defer r.wg.Done()
	var batch []queued
	for {
		var ok bool
		if batch, ok = qs.take(batch); !ok {
			return
		}
		for _, q := range batch {
			switch {
			case q.barrier != nil:
				close(q.barrier)
			case q.closing:
				r.closed(q.to)
			default:
				r.observe(q.to, q.ev)
			}
		}
	}
}

func (r *Registry) closed(s *sub) {
	if s.OnClosed == nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("hook close callback panicked", "hook", s.Name, "panic", fmt.Sprint(p))
		}
	}()
	s.OnClosed()
}

func (r *Registry) observe(s *sub, ev Event) {
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	start := time.Now()
	var err error
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("hook panicked", "hook", s.Name, "event", ev.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
		if s.Attach != AttachInternal {
			ev.track.answered(AttachmentResult{Name: s.Name, Attach: s.Attach, Elapsed: time.Since(start), Err: err})
		}
	}()
	if _, err = s.Handler(ctx, ev); err != nil {
		r.log.Warn("hook failed", "hook", s.Name, "event", ev.Name, "err", err)
	}
}

// flush waits (at most until ctx ends) for a subscriber's queued observer
// events to be handled, so its interceptor sees them first.
func (r *Registry) flush(ctx context.Context, s *sub) {
	if !s.observes || s.qs.idle() {
		return
	}
	b := make(chan struct{})
	if !s.qs.push(queued{barrier: b}, true) {
		return
	}
	select {
	case <-b:
	case <-ctx.Done():
	}
}

func matches(s *sub, payload any) bool {
	if s.Accept != nil {
		if !s.Accept(payload) {
			return false
		}
	} else if p, ok := payload.(*SessionStarted); ok && p.ClaudeOnly {
		return false
	}
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
// call order (the *Answer is valid only during fn). Go callbacks run one
// after another, each on its own goroutine under its deadline, so one
// that ignores its context cannot hold the caller past it; out-of-process
// subscribers run concurrently and their answers are handed over in
// declared order. A panic, error or overrun is recovered and logged, and
// reported in the Answer so the combiner can decide (fail open, or fail
// closed for pre_tool_call).
func (r *Registry) Call(ctx context.Context, name string, payload any, fn func(*Answer)) {
	r.callUntil(ctx, name, payload, func(a *Answer) bool { fn(a); return false })
}

// callUntil is Call for the combiners: fn reports, per answer, whether it
// ended the chain (a block at an event that can block); the priorities
// below are then not called.
func (r *Registry) callUntil(ctx context.Context, name string, payload any, fn func(*Answer) (stop bool)) {
	subs := r.lookup(name, true)
	if len(subs) == 0 {
		return
	}
	ev := Event{Name: name, Payload: payload, Time: time.Now(), Point: pointSeq.Add(1)}
	pick := func(s *sub) bool { return s.Attach != AttachInternal && matches(s, payload) }
	// the answers count as one, reported once the chain is done
	t := r.track(&ev, min(countAttached(subs, pick), 1))
	for _, s := range subs {
		if s.Attach == AttachInternal {
			r.enqueue(s, queued{ev: ev})
		}
	}
	r.callAll(ctx, subs, ev, pick, t.collect(fn))
	t.flushCollected()
}

// callAll calls the subscribers pick takes, one priority after another,
// and hands their answers to fn in order; once fn says an answer ended
// the chain, the lower priorities are not called.
func (r *Registry) callAll(ctx context.Context, subs []*sub, ev Event, pick func(*sub) bool, fn func(*Answer) (stop bool)) {
	for i := 0; i < len(subs); {
		j := i + 1
		for j < len(subs) && subs[j].Priority == subs[i].Priority {
			j++
		}
		if r.callLevel(ctx, subs[i:j], ev, pick, fn) {
			return
		}
		i = j
	}
}

// callLevel calls the subscribers of one priority: Go callbacks one after
// another, out-of-process subscribers side by side; every answer goes to
// fn, and it reports whether one of them ended the chain.
func (r *Registry) callLevel(ctx context.Context, subs []*sub, ev Event, pick func(*sub) bool, fn func(*Answer) (stop bool)) (stopped bool) {
	var par []*sub
	var a Answer
	for _, s := range subs {
		if !pick(s) {
			continue
		}
		if s.Concurrent {
			par = append(par, s)
			continue
		}
		a = Answer{}
		r.callGo(ctx, s, ev, &a)
		stopped = fn(&a) || stopped
	}
	switch len(par) {
	case 0:
	case 1:
		a := r.callOne(ctx, par[0], ev)
		stopped = fn(&a) || stopped
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
			stopped = fn(&answers[i]) || stopped
		}
	}
	return stopped
}

// goCall is one Go callback's outcome, written by its goroutine before
// done is closed.
type goCall struct {
	value any
	err   error
	panic any
	stack string
	done  chan struct{}
}

// abandonGrace is how long a Go callback has, once its context is done,
// to notice and return before it is abandoned.
const abandonGrace = 100 * time.Millisecond

// callGo runs one Go callback on its own goroutine and waits for it at
// most until its deadline (or ctx's end), plus abandonGrace. A callback
// still running then is abandoned: the call counts as timed out, and the
// goroutine, left to finish on its own, is logged once per hook.
func (r *Registry) callGo(ctx context.Context, s *sub, ev Event, a *Answer) {
	a.Hook, a.Attach, a.FailClosed = s.Name, s.Attach, s.FailClosed
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	start := time.Now()
	if s.observes && !s.qs.idle() {
		r.flush(ctx, s)
	}
	c := &goCall{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer func() {
			if p := recover(); p != nil {
				c.panic, c.stack = p, string(debug.Stack())
			}
		}()
		c.value, c.err = s.Handler(ctx, ev)
	}()
	select {
	case <-c.done:
	case <-ctx.Done():
		grace := time.NewTimer(abandonGrace)
		select {
		case <-c.done: // it honoured its context: an overrun, not a leak
			grace.Stop()
		case <-grace.C:
			a.Elapsed = time.Since(start)
			a.TimedOut = true
			a.Err = fmt.Errorf("no answer within %s (%w)", s.Timeout, ctx.Err())
			r.abandon(s, ev, c)
			r.settle(s, ev, a, nil, "")
			return
		}
	}
	a.Elapsed = time.Since(start)
	a.Value, a.Err = c.value, c.err
	r.settle(s, ev, a, c.panic, c.stack)
}

// abandon leaves a callback that ignored its deadline running; the first
// one of each hook is logged (an error: the hook leaks a goroutine for as
// long as it hangs), and stuck counts those still running.
func (r *Registry) abandon(s *sub, ev Event, c *goCall) {
	s.stuck.Add(1)
	go func() {
		<-c.done
		s.stuck.Add(-1)
	}()
	if !s.leaked.Swap(true) {
		r.log.Error("hook ignored its context and is still running after its deadline; herald no longer waits for it (said once per hook)", "hook", s.Name, "event", ev.Name, "timeout", s.Timeout)
	}
}

// Stuck returns, per subscriber name, how many of its Go callbacks were
// abandoned at their deadline and have not returned yet.
func (r *Registry) Stuck() map[string]int64 {
	return r.countBySub(func(s *sub) int64 { return s.stuck.Load() })
}

// settle classifies and logs a finished call (p: a recovered panic, with
// the stack where it happened).
func (r *Registry) settle(s *sub, ev Event, a *Answer, p any, stack string) {
	if p != nil {
		a.Panicked, a.Value = true, nil
		a.Err = fmt.Errorf("panic: %v", p)
		r.log.Error("hook panicked", "hook", s.Name, "event", ev.Name, "panic", fmt.Sprint(p), "stack", stack)
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
}

// callOne runs an out-of-process subscriber (on its own goroutine when
// there are several); its handler honours the context, as herald's own
// shell and directory hooks do.
func (r *Registry) callOne(ctx context.Context, s *sub, ev Event) (a Answer) {
	a = Answer{Hook: s.Name, Attach: s.Attach, FailClosed: s.FailClosed}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	r.flush(ctx, s)
	start := time.Now()
	defer func() {
		p := recover()
		stack := ""
		if p != nil {
			stack = string(debug.Stack())
		}
		a.Elapsed = time.Since(start)
		r.settle(s, ev, &a, p, stack)
	}()
	a.Value, a.Err = s.Handler(ctx, ev)
	return a
}

// Emitted reports whether an event of that name has been emitted or called
// since the registry was made.
func (r *Registry) Emitted(name string) bool {
	e := (*r.names.Load())[name]
	return e != nil && e.emitted.Load()
}

// Close stops delivery: every subscriber's queue is drained (waiting at
// most until ctx ends) and its worker stopped.
func (r *Registry) Close(ctx context.Context) error {
	r.mu.Lock()
	subs := r.subs
	r.subs = nil
	r.publishLocked()
	for _, s := range subs {
		r.detachLocked(s)
	}
	r.mu.Unlock()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("hooks: observer queues not drained: %w", ctx.Err())
	}
}
