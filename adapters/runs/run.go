package runs

// run.go: one run — its state, what the gateway sent to its chat (the
// output and its deltas), the hook points that belong to it, and the
// goroutine that follows its message's handling to its end.

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Statuses of a run.
const (
	StatusRunning          = "running"
	StatusAwaitingApproval = "awaiting_approval"
	StatusCompleted        = "completed"
	StatusFailed           = "failed"
	StatusStopped          = "stopped"
)

// Approval is the command a run waits on and the reason it needs one.
type Approval struct {
	Command string `json:"command"`
	Reason  string `json:"reason"`
}

// endWaitUnstarted bounds the wait for agent:end when no agent:start was
// seen by the end of the message's handling (a command, say, runs no
// agent; or the hook points lag behind).
const endWaitUnstarted = time.Second

// control kinds: the adapter's own messages in a run's chat, whose
// replies are not the run's output
const (
	controlApproval = "approval"
	controlStop     = "stop"
)

type run struct {
	a       *Adapter
	id      string
	src     herald.Source
	key     string
	created time.Time

	// next hands the watcher the receipt of an approval's answer; kick
	// wakes it when a hook point it may wait for arrived
	next chan *adapters.Receipt
	kick chan struct{}

	mu       sync.Mutex
	status   string
	session  string
	output   string
	errText  string
	approval *Approval
	finished time.Time
	log      eventLog
	// changed is closed (and replaced) at every event logged
	changed chan struct{}

	msgs []*sentMsg
	// held is the newest message, not yet shown: it may be an approval
	// prompt
	held    *sentMsg
	control map[string]string // our message id → its control kind
	acked   map[string]bool   // approval answers whose acknowledgement was hidden

	// pending are events of what the run sent, waiting for the hook
	// points emitted before them (orderLocked)
	pending    []pendingEvent
	orderTimer *time.Timer

	agentStarted, agentEnded bool
	endFailed                bool
	endError                 string
	stopAsked                bool
}

type pendingEvent struct {
	at   time.Time
	name string
	v    any
}

type sentMsg struct {
	id, cause, text string
	shown           string
	hidden          bool
}

func (a *Adapter) newRun(src herald.Source, session string) *run {
	r := &run{a: a, id: newRunID(), src: src, key: a.cfg.SessionKey(src), created: a.cfg.Now(),
		next: make(chan *adapters.Receipt, 1), kick: make(chan struct{}, 1),
		status: StatusRunning, session: session, changed: make(chan struct{}),
		control: map[string]string{}, acked: map[string]bool{}}
	r.log.max = a.cfg.MaxLog
	return r
}

// emitLocked logs one event of the run and wakes its subscribers.
func (r *run) emitLocked(name string, v any) int64 {
	data, err := json.Marshal(v)
	if err != nil {
		data = []byte("{}")
	}
	seq := r.log.add(name, data)
	close(r.changed)
	r.changed = make(chan struct{})
	return seq
}

func (r *run) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *run) terminal() bool {
	switch r.status {
	case StatusCompleted, StatusFailed, StatusStopped:
		return true
	}
	return false
}

// setSession records the session the run's turn runs in: the one it
// continues, or the chat's next when that one has ended.
func (r *run) setSession(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.session = id
}

// sent takes a message the gateway sent to the run's chat.
func (r *run) sent(id, cause, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.terminal() {
		return
	}
	m := &sentMsg{id: id, cause: cause, text: text}
	switch r.control[cause] {
	case controlStop:
		m.hidden = true
	case controlApproval:
		// the first reply to /approve or /deny is its acknowledgement
		if !r.acked[cause] {
			r.acked[cause] = true
			m.hidden = true
		}
	}
	r.msgs = append(r.msgs, m)
	r.showHeldLocked()
	if !m.hidden {
		r.held = m
	}
}

// edited takes a new text of a message sent to the run's chat.
func (r *run) edited(id, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.terminal() {
		return
	}
	i := slices.IndexFunc(r.msgs, func(m *sentMsg) bool { return m.id == id })
	if i < 0 {
		return
	}
	m := r.msgs[i]
	m.text = text
	switch {
	case m.hidden:
	case m == r.held:
		r.showHeldLocked()
	default:
		r.deltaLocked(m)
	}
}

// showHeldLocked shows the held message: something followed it, so it is
// not an approval prompt.
func (r *run) showHeldLocked() {
	if r.held == nil {
		return
	}
	m := r.held
	r.held = nil
	r.deltaLocked(m)
}

// deltaLocked logs what a shown message's text added since last shown.
func (r *run) deltaLocked(m *sentMsg) {
	switch {
	case m.text == m.shown:
		return
	case strings.HasPrefix(m.text, m.shown):
		r.orderLocked("message.delta", map[string]string{"message_id": m.id, "delta": m.text[len(m.shown):]})
	default:
		// a hook rewrote the text: it is sent again whole
		r.orderLocked("message.delta", map[string]any{"message_id": m.id, "text": m.text, "replace": true})
	}
	m.shown = m.text
}

// orderWait bounds how long a text delta waits for the hook points
// emitted before it, which reach the adapter off the turn's hot path.
const orderWait = 250 * time.Millisecond

// orderLocked logs an event of what the run sent once every hook point
// emitted before it is in the log: when a later hook point arrives, or
// after orderWait.
func (r *run) orderLocked(name string, v any) {
	if r.a.cfg.Events == nil {
		r.emitLocked(name, v)
		return
	}
	r.pending = append(r.pending, pendingEvent{at: time.Now(), name: name, v: v})
	if r.orderTimer == nil {
		r.orderTimer = time.AfterFunc(orderWait, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.orderTimer = nil
			r.releaseLocked(time.Time{})
		})
	}
}

// releaseLocked logs the events waiting in order that happened before
// t (all of them for the zero t).
func (r *run) releaseLocked(t time.Time) {
	n := 0
	for _, p := range r.pending {
		if !t.IsZero() && p.at.After(t) {
			break
		}
		r.emitLocked(p.name, p.v)
		n++
	}
	r.pending = r.pending[n:]
	if len(r.pending) == 0 && r.orderTimer != nil {
		r.orderTimer.Stop()
		r.orderTimer = nil
	}
}

// outputLocked is the text of the shown messages, a blank line apart.
func (r *run) outputLocked() string {
	var parts []string
	for _, m := range r.msgs {
		if !m.hidden && strings.TrimSpace(m.text) != "" {
			parts = append(parts, m.text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// hookPoint logs a hook point of the run, and the run's own events it
// makes.
func (r *run) hookPoint(hp HookPoint, k *hookKeys) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.terminal() {
		return
	}
	name := hp.Name
	// what the run sent before this point was emitted comes before it
	r.releaseLocked(hp.Time)
	r.emitLocked(name, struct {
		EventType string          `json:"event_type"`
		Context   json.RawMessage `json:"context"`
	}{name, hp.Context})
	switch name {
	case "pre_tool_call":
		r.emitLocked("tool.started", map[string]string{"tool_name": k.ToolName, "tool_call_id": k.ToolCallID})
	case "post_tool_call":
		r.emitLocked("tool.completed", map[string]any{"tool_name": k.ToolName, "tool_call_id": k.ToolCallID, "duration_ms": k.DurationMS})
	case "pre_approval_request":
		r.approval = &Approval{Command: k.Command, Reason: k.Description}
		r.emitLocked("approval.requested", r.approval)
		r.wake()
	case "post_approval_response":
		r.emitLocked("approval.answered", map[string]string{"command": k.Command, "choice": k.Choice})
		r.approval = nil
		if r.status == StatusAwaitingApproval {
			r.status = StatusRunning
		}
		r.wake()
	case "agent:start":
		r.agentStarted = true
	case "agent:end":
		r.agentEnded = true
		r.endFailed, r.endError = k.Failed, k.Error
		r.wake()
	}
}

// watch follows the run's message to its end: through approvals (each
// answer's receipt covers the rest of the turn) to a final outcome, then
// waits for the turn's agent:end and ends the run.
func (r *run) watch(rec *adapters.Receipt) {
	defer r.a.watchers.Done()
	for {
		select {
		case <-rec.Done():
		case <-r.a.quit:
			r.finish(StatusStopped, "the gateway stopped")
			return
		}
		o := rec.Outcome()
		if o.SessionID != "" {
			r.a.learnSession(r, o.SessionID)
		}
		if o.Status != adapters.StatusAwaitingInput {
			// the handling is over: what it sent last is no prompt
			r.mu.Lock()
			r.showHeldLocked()
			r.mu.Unlock()
			r.awaitEnd(o.Status != adapters.StatusSkipped)
			r.finish(r.outcome(o))
			return
		}
		next, ok := r.awaitAnswer()
		switch {
		case next != nil:
			rec = next
		case ok:
			// the turn went on without a receipt (the prompt timed out)
			// or was stopped; agent:end ended it
			r.finish(r.endOutcome())
			return
		default:
			r.finish(StatusStopped, "the gateway stopped")
			return
		}
	}
}

// awaitAnswer waits, once the run's message resolved awaiting_input, for
// the approval's answer (the receipt of the message that answered it), or
// the end of the turn (ok true, next nil); ok false when the gateway
// stops.
func (r *run) awaitAnswer() (next *adapters.Receipt, ok bool) {
	r.mu.Lock()
	// the message sent last before the receipt resolved is the prompt
	if r.held != nil {
		r.held.hidden = true
		r.held = nil
	}
	r.mu.Unlock()
	// pre_approval_request (emitted before the prompt) normally is in
	// already; the status says awaiting_approval with its command
	timer := time.NewTimer(EndWait)
	defer timer.Stop()
	for wait := true; wait; {
		r.mu.Lock()
		have := r.approval != nil || r.agentEnded
		r.mu.Unlock()
		if have {
			break
		}
		select {
		case <-r.kick:
		case <-timer.C:
			wait = false
		case <-r.a.quit:
			return nil, false
		}
	}
	r.mu.Lock()
	if !r.agentEnded && r.status == StatusRunning {
		r.status = StatusAwaitingApproval
	}
	r.mu.Unlock()
	for {
		select {
		case next := <-r.next:
			return next, true
		case <-r.kick:
			r.mu.Lock()
			ended := r.agentEnded
			r.mu.Unlock()
			if ended {
				return nil, true
			}
		case <-r.a.quit:
			return nil, false
		}
	}
}

// awaitEnd waits (bounded) for the turn's agent:end, so that its hook
// points are in the log before the run's end.
func (r *run) awaitEnd(turned bool) {
	if !turned || r.a.cfg.Events == nil {
		return
	}
	r.mu.Lock()
	bound := EndWait
	if !r.agentStarted {
		bound = endWaitUnstarted
	}
	r.mu.Unlock()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		r.mu.Lock()
		ended := r.agentEnded
		r.mu.Unlock()
		if ended {
			return
		}
		select {
		case <-r.kick:
		case <-timer.C:
			return
		case <-r.a.quit:
			return
		}
	}
}

// outcome is how a run whose message was handled ends.
func (r *run) outcome(o adapters.Outcome) (status, errText string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch o.Status {
	case adapters.StatusDone:
		if o.Err == nil && !r.endFailed {
			return StatusCompleted, ""
		}
		return StatusFailed, r.failureLocked(o.Err)
	case adapters.StatusInterrupted:
		if r.stopAsked {
			return StatusStopped, ""
		}
		return StatusStopped, "interrupted (by /new in the session, or the gateway stopping)"
	case adapters.StatusQueued:
		return StatusFailed, "the session was busy: the input was queued behind another turn"
	}
	if o.Err != nil {
		return StatusFailed, "the gateway did not take the input: " + r.a.cfg.Redact(o.Err.Error())
	}
	return StatusFailed, "the gateway skipped the input (a pre_gateway_dispatch hook, or it was not allowed)"
}

// endOutcome is how a run ends whose turn ended with no receipt left to
// resolve (stopped while awaiting an approval, or gone on after the
// prompt timed out).
func (r *run) endOutcome() (status, errText string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.stopAsked:
		return StatusStopped, ""
	case r.endFailed:
		return StatusFailed, r.failureLocked(nil)
	}
	return StatusCompleted, ""
}

func (r *run) failureLocked(err error) string {
	switch {
	case r.endError != "":
		return r.endError // masked in the hook payload
	case err != nil:
		return r.a.cfg.Redact(err.Error())
	}
	return "the turn failed"
}

// finish ends the run with status (once): its output is what was shown
// and held, its last event says how it ended.
func (r *run) finish(status, errText string) {
	r.mu.Lock()
	if r.terminal() {
		r.mu.Unlock()
		return
	}
	r.showHeldLocked()
	r.releaseLocked(time.Time{})
	r.status, r.errText, r.approval = status, errText, nil
	r.finished = r.a.cfg.Now()
	ev := map[string]any{"run_id": r.id}
	switch status {
	case StatusCompleted:
		r.output = r.outputLocked()
		ev["output"] = r.output
	case StatusFailed:
		ev["error"] = errText
	case StatusStopped:
		if errText != "" {
			ev["error"] = errText
		}
	}
	r.log.final = r.emitLocked("run."+status, ev)
	r.mu.Unlock()
	if testHookFinished != nil {
		testHookFinished()
	}
	r.a.ended(r)
}

// testHookFinished, set by tests, runs between a run's final status and
// its leaving the adapter's indexes.
var testHookFinished func()

// over reports whether the run has reached its final status (it may not
// have left the adapter's indexes yet).
func (r *run) over() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.terminal()
}

// finishedInfo is when the run finished and its log's size (ok false
// while it runs).
func (r *run) finishedInfo() (at time.Time, size int, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished, r.log.bytes, r.terminal()
}

func sortByFinish(rs []*run) {
	slices.SortFunc(rs, func(x, y *run) int {
		fx, _, _ := x.finishedInfo()
		fy, _, _ := y.finishedInfo()
		return fx.Compare(fy)
	})
}

// state is the run as GET /v1/runs/{id} shows it.
type state struct {
	RunID      string     `json:"run_id"`
	Status     string     `json:"status"`
	SessionID  string     `json:"session_id,omitempty"`
	Output     *string    `json:"output,omitempty"`
	Error      string     `json:"error,omitempty"`
	Approval   *Approval  `json:"approval,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

func (r *run) state() state {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := state{RunID: r.id, Status: r.status, SessionID: r.session, Error: r.errText, CreatedAt: r.created.UTC()}
	if r.status == StatusAwaitingApproval {
		s.Approval = r.approval
	}
	if r.status == StatusCompleted {
		out := r.output
		s.Output = &out
	}
	if r.terminal() {
		at := r.finished.UTC()
		s.FinishedAt = &at
	}
	return s
}
