package slack

// feedback.go shows that herald is working on a message while its turn
// runs. The gateway calls Typing while a turn runs; the first call for a
// message sets the thread's status with assistant.threads.setStatus ("is
// thinking…") or, where the app cannot (no scope, not an assistant app:
// remembered for the adapter's life), puts an :eyes: reaction on the
// user's message. When the gateway is done with the message (its Receipt
// resolves, after the answer was sent) the status is cleared and the
// reaction removed. With Config.Reactions, processing reactions are shown
// as well: :eyes: while the turn runs, then :white_check_mark: when it
// answered or :x: when it failed.

import (
	"context"
	"errors"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Feedback texts and reactions.
const (
	StatusText       = "is thinking…"
	WorkingReaction  = "eyes"
	DoneReaction     = "white_check_mark"
	FailedReaction   = "x"
	statusRenewAfter = 90 * time.Second // Slack drops a status after about two minutes
	feedbackTimeout  = 5 * time.Second  // bounds taking the feedback down
)

// unavailable are the error codes that mean the app cannot use a method
// at all (not for this message only): it is not tried again.
var unavailable = map[string]bool{
	"missing_scope": true, "not_allowed": true, "not_allowed_token_type": true,
	"unknown_method": true, "feature_not_enabled": true, "no_permission": true,
}

// working is one taken message the gateway has not finished with.
type working struct {
	channel, thread, ts string            // thread is the Source's ThreadID
	receipt             *adapters.Receipt // nil until the gateway took it
	started             bool              // a turn began on it (Typing was called)
	statusAt            time.Time
	reaction            string // the reaction herald put on it, if any
	done                bool
}

// feedback tracks the messages in work, per chat and thread.
type feedback struct {
	mu          sync.Mutex
	inflight    map[string][]*working // channel/thread → oldest first
	noStatus    bool
	noReactions bool
	wg          sync.WaitGroup // one waiter per message in work
}

// begin registers a message about to be handed to the gateway, so that a
// turn starting before Receive returns finds it.
func (a *Adapter) begin(m herald.Message) *working {
	w := &working{channel: m.Source.ChatID, thread: m.Source.ThreadID, ts: m.ID}
	f := &a.fb
	f.mu.Lock()
	f.inflight[w.key()] = append(f.inflight[w.key()], w)
	f.mu.Unlock()
	return w
}

func (w *working) key() string { return w.channel + "/" + w.thread }

// drop forgets a message; it reports whether w had feedback to take down.
func (a *Adapter) drop(w *working) (shown bool) {
	f := &a.fb
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.inflight[w.key()]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(f.inflight, w.key())
	} else {
		f.inflight[w.key()] = q
	}
	w.done = true
	return w.started
}

// track follows a message the gateway took until its receipt resolves or
// ctx ends, then takes its feedback down.
func (a *Adapter) track(ctx context.Context, w *working, r *adapters.Receipt) {
	f := &a.fb
	f.mu.Lock()
	w.receipt = r
	f.mu.Unlock()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		out := adapters.Outcome{Status: adapters.StatusInterrupted}
		select {
		case <-r.Done():
			out = r.Outcome()
		case <-ctx.Done():
		}
		if !a.drop(w) {
			return // no turn ran on it: nothing was shown
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), feedbackTimeout)
		defer cancel()
		a.finish(fctx, w, out)
	}()
}

// Typing implements adapters.Typer: it shows the status (or the
// reaction) on the oldest message in work in the target's chat and
// thread, once, renewing a status before Slack drops it. A target with
// no message in work (a cron job's turn) shows nothing.
func (a *Adapter) Typing(ctx context.Context, to herald.Target) error {
	f := &a.fb
	f.mu.Lock()
	var w *working
	for _, x := range f.inflight[to.ChatID+"/"+to.ThreadID] {
		// a message resolved a moment ago (folded into the next one) may
		// not be out of the list yet
		if x.receipt != nil {
			select {
			case <-x.receipt.Done():
				continue
			default:
			}
		}
		w = x
		break
	}
	if w == nil || w.done {
		f.mu.Unlock()
		return nil
	}
	first := !w.started
	w.started = true
	renew := !w.statusAt.IsZero() && time.Since(w.statusAt) >= statusRenewAfter
	wantStatus := !f.noStatus && (first || renew)
	react := first && !f.noReactions && (a.cfg.Reactions || f.noStatus)
	if wantStatus {
		// set before the call: a call cut short may still have landed,
		// and clearing a status never set is harmless
		w.statusAt = time.Now()
	}
	if react {
		w.reaction = WorkingReaction
	}
	f.mu.Unlock()

	var err error
	if react {
		err = a.react(ctx, "reactions.add", w.channel, w.ts, WorkingReaction)
	}
	if !wantStatus {
		return err
	}
	thread := w.thread
	if thread == "" {
		thread = w.ts
	}
	serr := a.api.SetAssistantThreadsStatusContext(ctx, slackapi.AssistantThreadsSetStatusParameters{ChannelID: w.channel, ThreadTS: thread, Status: StatusText})
	if serr == nil || ctx.Err() != nil {
		return errors.Join(err, serr)
	}
	var se slackapi.SlackErrorResponse
	f.mu.Lock()
	w.statusAt = time.Time{}
	if errors.As(serr, &se) && unavailable[se.Err] && !f.noStatus {
		f.noStatus = true
		a.log.Info("slack: this app cannot set a thread status (assistant.threads.setStatus: "+se.Err+"); herald reacts with :eyes: while it works instead", "channel", w.channel)
	}
	fallback := w.reaction == "" && !f.noReactions
	if fallback {
		w.reaction = WorkingReaction
	}
	f.mu.Unlock()
	if fallback {
		return a.react(ctx, "reactions.add", w.channel, w.ts, WorkingReaction)
	}
	return mapError("set status in "+w.channel, serr, "SLACK_BOT_TOKEN")
}

// finish takes a message's feedback down once the gateway is done with
// it, and with processing reactions shows how its turn ended.
func (a *Adapter) finish(ctx context.Context, w *working, out adapters.Outcome) {
	a.fb.mu.Lock()
	status, reaction, started := !w.statusAt.IsZero(), w.reaction, w.started
	a.fb.mu.Unlock()
	if status {
		thread := w.thread
		if thread == "" {
			thread = w.ts
		}
		if err := a.api.SetAssistantThreadsStatusContext(ctx, slackapi.AssistantThreadsSetStatusParameters{ChannelID: w.channel, ThreadTS: thread}); err != nil {
			a.log.Debug("slack: could not clear a thread status", "channel", w.channel, "err", err)
		}
	}
	if reaction != "" {
		a.react(ctx, "reactions.remove", w.channel, w.ts, reaction)
	}
	if !a.cfg.Reactions || !started {
		return
	}
	switch {
	case out.Status == adapters.StatusDone && out.Err == nil:
		a.react(ctx, "reactions.add", w.channel, w.ts, DoneReaction)
	case out.Err != nil:
		a.react(ctx, "reactions.add", w.channel, w.ts, FailedReaction)
	}
}

// react adds or removes a reaction on a message. Slack's already_reacted
// and no_reaction are success; a missing scope stops reactions for the
// adapter's life.
func (a *Adapter) react(ctx context.Context, method, channel, ts, name string) error {
	ref := slackapi.NewRefToMessage(channel, ts)
	var err error
	if method == "reactions.add" {
		err = a.api.AddReactionContext(ctx, name, ref)
	} else {
		err = a.api.RemoveReactionContext(ctx, name, ref)
	}
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) {
		switch {
		case se.Err == "already_reacted" || se.Err == "no_reaction":
			return nil
		case unavailable[se.Err]:
			a.fb.mu.Lock()
			if !a.fb.noReactions {
				a.fb.noReactions = true
				a.log.Warn("slack: this app cannot add reactions ("+method+": "+se.Err+"); add the reactions:write scope", "channel", channel)
			}
			a.fb.mu.Unlock()
		}
	}
	if err != nil {
		err = mapError(method+" on "+channel+"/"+ts, err, "SLACK_BOT_TOKEN")
		a.log.Debug("slack reaction failed", "err", err)
	}
	return err
}
