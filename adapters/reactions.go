package adapters

import (
	"context"
	"sync"
	"time"

	"github.com/heraldgw/herald"
)

// Phase is the stage of a message's turn a processing reaction shows.
type Phase int

// Phases of a processing reaction.
const (
	PhaseWorking Phase = iota // a turn runs on the message
	PhaseDone                 // the turn answered
	PhaseFailed               // the turn failed
	PhaseCleared              // it ended otherwise (interrupted, shut down): the working reaction comes off
	// PhaseStillWorking: the turn still runs, a renewal interval after
	// the last PhaseWorking or PhaseStillWorking (trackers made with
	// NewFeedback only).
	PhaseStillWorking
)

// ReactFunc shows the reaction for phase on message id in chat (the
// platform's chat or channel the message is in). It is called with
// PhaseWorking once a turn starts on the message and then, when the
// gateway is done with it, with PhaseDone, PhaseFailed or PhaseCleared. Errors are the
// ReactFunc's to log: a reaction never affects the reply.
type ReactFunc func(ctx context.Context, chat, id string, p Phase)

// FeedbackFunc is a ReactFunc that is also told the message's thread
// (its Source.ThreadID), for platforms that show a working status per
// thread (Slack's assistant.threads.setStatus) as well as reactions.
type FeedbackFunc func(ctx context.Context, chat, thread, id string, p Phase)

// reactTimeout bounds one reaction call.
const reactTimeout = 5 * time.Second

// Reactions shows processing reactions on the messages an adapter hands
// to the gateway: the working reaction on the first Typing for a message
// (a turn began on it), the done or failed one when its Receipt
// resolves. A nil *Reactions (reactions off) does nothing.
type Reactions struct {
	react FeedbackFunc
	// renew is how long after a working call Typing calls again
	// (PhaseStillWorking); 0 never does
	renew    time.Duration
	mu       sync.Mutex
	inflight map[string][]*reacting // chat/thread → oldest first
	wg       sync.WaitGroup
}

type reacting struct {
	key, chat, thread, id string
	receipt               *Receipt
	started, done         bool
	shown                 chan struct{} // closed once the last working call returned
	shownAt               time.Time     // when the last working call began
}

// NewReactions returns a tracker that reacts through react.
func NewReactions(react ReactFunc) *Reactions {
	return NewFeedback(func(ctx context.Context, chat, _, id string, p Phase) { react(ctx, chat, id, p) }, 0)
}

// NewFeedback returns a tracker that shows feedback through show: as a
// NewReactions tracker does, and besides, when renew is positive, with
// PhaseStillWorking on a Typing at least renew after the last working
// call, so that a status the platform drops after a while is set again.
func NewFeedback(show FeedbackFunc, renew time.Duration) *Reactions {
	return &Reactions{react: show, renew: renew, inflight: map[string][]*reacting{}}
}

// Receive hands m to sink and, when the gateway took it, follows it until
// its receipt resolves or ctx ends; chat is where the message itself is
// (it can differ from m.Source.ChatID, a Discord thread say). It returns
// the sink's receipt.
func (r *Reactions) Receive(ctx context.Context, sink Sink, m herald.Message, chat string) *Receipt {
	if r == nil || m.ID == "" {
		return sink.Receive(ctx, m)
	}
	w := &reacting{key: m.Source.ChatID + "/" + m.Source.ThreadID, chat: chat, thread: m.Source.ThreadID, id: m.ID}
	r.mu.Lock()
	r.inflight[w.key] = append(r.inflight[w.key], w)
	r.mu.Unlock()
	rec := sink.Receive(ctx, m)
	if rec == nil || Refused(rec) {
		r.drop(w)
		return rec
	}
	r.mu.Lock()
	w.receipt = rec
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		out := Outcome{Status: StatusInterrupted}
		select {
		case <-rec.Done():
			out = rec.Outcome()
		case <-ctx.Done():
		}
		if !r.drop(w) {
			return // no turn ran on it: nothing was shown
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reactTimeout)
		defer cancel()
		select { // the final reaction must land after the working one
		case <-w.shown: // no longer replaced: w is dropped
		case <-fctx.Done():
		}
		switch {
		case out.Status == StatusDone && out.Err == nil:
			r.react(fctx, w.chat, w.thread, w.id, PhaseDone)
		case out.Err != nil:
			r.react(fctx, w.chat, w.thread, w.id, PhaseFailed)
		default:
			r.react(fctx, w.chat, w.thread, w.id, PhaseCleared)
		}
	}()
	return rec
}

// drop forgets w; it reports whether a turn ran on it.
func (r *Reactions) drop(w *reacting) (started bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.inflight[w.key]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(r.inflight, w.key)
	} else {
		r.inflight[w.key] = q
	}
	w.done = true
	return w.started
}

// Typing marks the oldest message in work in the target's chat and
// thread as worked on, showing the working reaction once (and, for a
// NewFeedback tracker, PhaseStillWorking each renewal interval). A target
// with no message in work (a cron job's turn) shows nothing.
func (r *Reactions) Typing(ctx context.Context, to herald.Target) {
	if r == nil {
		return
	}
	r.mu.Lock()
	var w *reacting
	for _, x := range r.inflight[to.ChatID+"/"+to.ThreadID] {
		if x.receipt != nil {
			select {
			case <-x.receipt.Done():
				continue // resolved a moment ago, not yet dropped
			default:
			}
		}
		w = x
		break
	}
	phase := PhaseWorking
	if w != nil && w.started {
		phase = PhaseStillWorking
	}
	if w == nil || w.done || (phase == PhaseStillWorking && !r.due(w)) {
		r.mu.Unlock()
		return
	}
	w.started = true
	w.shownAt = time.Now()
	shown := make(chan struct{})
	w.shown = shown
	r.mu.Unlock()
	defer close(shown)
	// not cut short when the turn ends at once: the final reaction
	// must not be followed by a working one
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reactTimeout)
	defer cancel()
	r.react(rctx, w.chat, w.thread, w.id, phase)
}

// due reports whether w's working feedback is to be renewed: renewal is
// on, the interval has passed, and the last call returned. Call with r.mu
// held.
func (r *Reactions) due(w *reacting) bool {
	if r.renew <= 0 || time.Since(w.shownAt) < r.renew {
		return false
	}
	select {
	case <-w.shown:
		return true
	default:
		return false
	}
}

// Wait waits for the final reactions of the messages followed so far
// (Run calls it before returning).
func (r *Reactions) Wait() {
	if r != nil {
		r.wg.Wait()
	}
}
