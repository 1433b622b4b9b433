package hooks

// observe.go: what each attachment answered at one firing of a hook
// point, for a watcher (the local API's hook_result event). Every firing
// gets a Point id (Event.Point). When a results watcher is set, a firing
// with attachments (anything but herald's internal watchers) is tracked:
// interceptor and in-line answers as the caller collects them, queued
// observers as each finishes; once the last has answered, the watcher
// gets the PointResult, on the goroutine of whichever finished last. A
// firing whose attachments were all filtered out (matcher, Accept)
// reports nothing.

import (
	"encoding/json"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
)

// AttachmentResult is one attachment's answer at a firing.
type AttachmentResult struct {
	Name    string
	Attach  Attach
	Elapsed time.Duration
	Value   any
	Err     error
	// Dropped is set when the attachment's queue was full: it never saw
	// the event.
	Dropped bool
}

// PointResult is every answer at one firing of a hook point.
type PointResult struct {
	Point       uint64
	Event       string
	Payload     any
	Started     time.Time
	Elapsed     time.Duration
	Attachments []AttachmentResult
}

// ObserveResults sets fn as the results watcher (nil: none); it returns
// a function that removes it. There is one watcher (the local API's
// event stream): a second call replaces the first. fn must not block:
// it runs on the goroutine of the hook that answered last, or of the
// caller of an interceptor point.
func (r *Registry) ObserveResults(fn func(PointResult)) (stop func()) {
	r.results.Store(&fn)
	return func() { r.results.Store(nil) }
}

// pointSeq numbers firings across registries (ids only need be unique).
var pointSeq atomic.Uint64

// pointTrack collects the answers of one firing.
type pointTrack struct {
	report func(PointResult)

	// called are the answers the caller collects (collect), reported
	// together as one of pending by flushCollected
	called []AttachmentResult

	mu      sync.Mutex
	pending int
	res     PointResult
}

// countAttached counts the attachments (not herald's internal watchers)
// that take the event.
func countAttached(subs []*sub, takes func(*sub) bool) int {
	n := 0
	for _, s := range subs {
		if s.Attach != AttachInternal && takes(s) {
			n++
		}
	}
	return n
}

// collect wraps a caller's answer callback to keep each answer too.
func (t *pointTrack) collect(fn func(*Answer) bool) func(*Answer) bool {
	if t == nil {
		return fn
	}
	return func(a *Answer) bool {
		t.called = append(t.called, fromAnswer(a))
		return fn(a)
	}
}

// flushCollected reports the collected answers as one answer of pending.
func (t *pointTrack) flushCollected() {
	if t == nil {
		return
	}
	t.answered(t.called...)
}

// track starts tracking ev if a watcher is set and n attachments (>0)
// are to answer; it returns nil otherwise.
func (r *Registry) track(ev *Event, n int) *pointTrack {
	fn := r.results.Load()
	if fn == nil || *fn == nil || n == 0 {
		return nil
	}
	t := &pointTrack{report: *fn, pending: n, res: PointResult{Point: ev.Point, Event: ev.Name, Payload: ev.Payload, Started: ev.Time}}
	ev.track = t
	return t
}

// answered records an answer; the last one reports the firing.
func (t *pointTrack) answered(a ...AttachmentResult) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.res.Attachments = append(t.res.Attachments, a...)
	t.pending--
	done := t.pending == 0
	if done {
		t.res.Elapsed = time.Since(t.res.Started)
	}
	t.mu.Unlock()
	if done {
		t.report(t.res)
	}
}

// fromAnswer is an interceptor's or in-line answer as a result.
func fromAnswer(a *Answer) AttachmentResult {
	return AttachmentResult{Name: a.Hook, Attach: a.Attach, Elapsed: a.Elapsed, Value: a.Value, Err: a.Err}
}

// Outcome sorts an answer: none, allow, block, rewrite, context, skip or
// error, with a short detail (the reason, the context added, the error).
func Outcome(v any, err error) (outcome, detail string) {
	if err != nil {
		return "error", err.Error()
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		// a typed nil from a Go callback is "no decision"
		return "none", ""
	}
	switch x := v.(type) {
	case nil:
		return "none", ""
	case *ToolDecision:
		switch x.Action {
		case "block":
			return "block", x.Message
		case "modify":
			b, _ := json.Marshal(x.Args)
			return "rewrite", string(b)
		case "allow", "approve":
			return "allow", x.Message
		}
		return Outcome(x.Feedback, nil)
	case *LLMContext:
		if x.Feedback != nil && (x.Feedback.Block || x.Feedback.Halt) {
			return Outcome(x.Feedback, nil)
		}
		if x.Context != "" {
			return "context", x.Context
		}
		return Outcome(x.Feedback, nil)
	case *Feedback:
		switch {
		case x == nil:
			return "none", ""
		case x.Block:
			return "block", x.Reason
		case x.Halt:
			return "block", x.StopReason
		case x.Context != "":
			return "context", x.Context
		case x.Notice != "":
			return "context", x.Notice
		}
		return "none", ""
	case *Replace:
		return "rewrite", x.Text
	case *DispatchDecision:
		switch x.Action {
		case "skip":
			return "skip", x.Reason
		case "rewrite":
			return "rewrite", x.Text
		case "allow":
			return "allow", x.Reason
		}
	case *CommandDecision:
		switch x.Decision {
		case "deny":
			return "block", x.Message
		case "rewrite":
			return "rewrite", x.CommandName
		case "handled":
			return "skip", x.Message
		case "allow":
			return "allow", x.Message
		}
	}
	return "none", ""
}
