package slack

// feedback.go shows that herald is working on a message while its turn
// runs, through the shared tracker (adapters.Reactions), which follows
// each message the gateway took and calls show as its turn starts, runs
// on and ends. The first call for a message sets the thread's status with
// assistant.threads.setStatus ("is thinking…") or, where the app cannot
// (no scope, not an assistant app: remembered for the adapter's life),
// puts an :eyes: reaction on the user's message. When the gateway is done
// with the message (its Receipt resolves, after the answer was sent) the
// status is cleared and the reaction removed. With Config.Reactions,
// processing reactions are shown as well: :eyes: while the turn runs,
// then :white_check_mark: when it answered or :x: when it failed.

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
)

// unavailable are the error codes that mean the app cannot use a method
// at all (not for this message only): it is not tried again.
var unavailable = map[string]bool{
	"missing_scope": true, "not_allowed": true, "not_allowed_token_type": true,
	"unknown_method": true, "feature_not_enabled": true, "no_permission": true,
}

// feedback is what the adapter showed on the messages a turn runs on.
type feedback struct {
	mu          sync.Mutex
	shown       map[string]*shown // channel/ts → what is on it
	noStatus    bool
	noReactions bool
}

// shown is the feedback on one message: whether its thread has a status,
// and the reaction herald put on it ("" for none).
type shown struct {
	status   bool
	reaction string
}

// Typing implements adapters.Typer: the tracker shows the status (or the
// reaction) on the oldest message in work in the target's chat and
// thread, once, renewing a status before Slack drops it. A target with no
// message in work (a cron job's turn) shows nothing. Failures are logged,
// never returned: feedback never affects the reply.
func (a *Adapter) Typing(ctx context.Context, to herald.Target) error {
	a.rx.Typing(ctx, to)
	return nil
}

// show is the tracker's FeedbackFunc.
func (a *Adapter) show(ctx context.Context, channel, thread, ts string, p adapters.Phase) {
	if thread == "" {
		thread = ts
	}
	switch p {
	case adapters.PhaseWorking:
		a.startFeedback(ctx, channel, thread, ts)
	case adapters.PhaseStillWorking:
		a.fb.mu.Lock()
		st := a.fb.shown[channel+"/"+ts]
		renew := st != nil && st.status && !a.fb.noStatus
		a.fb.mu.Unlock()
		if renew {
			a.setStatus(ctx, channel, thread, ts, st)
		}
	default:
		a.endFeedback(ctx, channel, thread, ts, p)
	}
}

// startFeedback shows that a turn began on a message: the thread's
// status, and :eyes: with processing reactions or where there is no
// status.
func (a *Adapter) startFeedback(ctx context.Context, channel, thread, ts string) {
	f := &a.fb
	st := &shown{}
	f.mu.Lock()
	f.shown[channel+"/"+ts] = st
	wantStatus := !f.noStatus
	react := !f.noReactions && (a.cfg.Reactions || f.noStatus)
	if react {
		st.reaction = WorkingReaction
	}
	f.mu.Unlock()
	if react {
		a.react(ctx, "reactions.add", channel, ts, WorkingReaction)
	}
	if wantStatus {
		a.setStatus(ctx, channel, thread, ts, st)
	}
}

// setStatus sets the thread's status; where the app cannot, the message
// gets :eyes: instead.
func (a *Adapter) setStatus(ctx context.Context, channel, thread, ts string, st *shown) {
	f := &a.fb
	f.mu.Lock()
	// set before the call: a call cut short may still have landed, and
	// clearing a status never set is harmless
	st.status = true
	f.mu.Unlock()
	err := a.api.SetAssistantThreadsStatusContext(ctx, slackapi.AssistantThreadsSetStatusParameters{ChannelID: channel, ThreadTS: thread, Status: StatusText})
	if err == nil || ctx.Err() != nil {
		return
	}
	var se slackapi.SlackErrorResponse
	f.mu.Lock()
	st.status = false
	if errors.As(err, &se) && unavailable[se.Err] && !f.noStatus {
		f.noStatus = true
		a.log.Info("slack: this app cannot set a thread status (assistant.threads.setStatus: "+se.Err+"); herald reacts with :eyes: while it works instead", "channel", channel)
	}
	fallback := st.reaction == "" && !f.noReactions
	if fallback {
		st.reaction = WorkingReaction
	}
	f.mu.Unlock()
	if fallback {
		a.react(ctx, "reactions.add", channel, ts, WorkingReaction)
		return
	}
	a.log.Debug("slack: could not set a thread status", "channel", channel, "err", mapError("set status in "+channel, err, "SLACK_BOT_TOKEN"))
}

// endFeedback takes a message's feedback down once the gateway is done
// with it, and with processing reactions shows how its turn ended.
func (a *Adapter) endFeedback(ctx context.Context, channel, thread, ts string, p adapters.Phase) {
	a.fb.mu.Lock()
	st := a.fb.shown[channel+"/"+ts]
	delete(a.fb.shown, channel+"/"+ts)
	a.fb.mu.Unlock()
	if st == nil {
		return
	}
	if st.status {
		if err := a.api.SetAssistantThreadsStatusContext(ctx, slackapi.AssistantThreadsSetStatusParameters{ChannelID: channel, ThreadTS: thread}); err != nil {
			a.log.Debug("slack: could not clear a thread status", "channel", channel, "err", err)
		}
	}
	if st.reaction != "" {
		a.react(ctx, "reactions.remove", channel, ts, st.reaction)
	}
	if !a.cfg.Reactions {
		return
	}
	switch p {
	case adapters.PhaseDone:
		a.react(ctx, "reactions.add", channel, ts, DoneReaction)
	case adapters.PhaseFailed:
		a.react(ctx, "reactions.add", channel, ts, FailedReaction)
	}
}

// react adds or removes a reaction on a message. Slack's already_reacted
// and no_reaction are success; a missing scope stops reactions for the
// adapter's life.
func (a *Adapter) react(ctx context.Context, method, channel, ts, name string) {
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
			return
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
		a.log.Debug("slack reaction failed", "err", mapError(method+" on "+channel+"/"+ts, err, "SLACK_BOT_TOKEN"))
	}
}
