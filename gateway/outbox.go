package gateway

// outbox.go: messages a rate limit holds back for longer than the retry
// cap. They wait in the store (sessions.Outbound), not in memory, so that
// a restart delivers them; one loop sends each chat's rows in order once
// their time has come.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/sessions"
)

// queue stores outs (the first replacing message editID when that is
// set) to be sent to to from until on, and wakes the outbox loop.
func (r *Runner) queue(ctx context.Context, to herald.Target, outs []adapters.Outgoing, editID string, until time.Time) error {
	if r.store == nil {
		return errors.New("no store to queue in")
	}
	now := time.Now()
	rows := make([]sessions.Outbound, len(outs))
	for i, o := range outs {
		rows[i] = sessions.Outbound{Platform: string(to.Platform), ChatID: to.ChatID, ThreadID: to.ThreadID,
			Text: o.Text, Cause: o.Cause, Part: o.Part, Parts: o.Parts, Plain: o.Plain, NotBefore: until, CreatedAt: now}
	}
	if len(rows) > 0 {
		rows[0].EditID = editID
	}
	err := r.store.QueueOutbound(context.WithoutCancel(ctx), rows...)
	r.storeResult(err)
	if err != nil {
		return err
	}
	r.queued.Add(int64(len(rows)))
	r.pace.blockUntil(to, until)
	r.pace.setQueued(to, true)
	r.log.Warn("rate limited beyond the retry cap; queued for later", "platform", to.Platform, "chat", to.ChatID, "messages", len(rows), "until", until.UTC().Format(time.RFC3339))
	select {
	case r.outboxKick <- struct{}{}:
	default:
	}
	return nil
}

// countQueued sets the count of queued messages /healthz reports from
// the store (rows an earlier run queued); queue and drainOutbox keep it.
func (r *Runner) countQueued(ctx context.Context) {
	rows, err := r.store.PendingOutbound(ctx)
	if err != nil {
		r.storeResult(err)
		r.log.Error("outbound queue not read", "err", r.cfg.Redactor.Redact(err.Error()))
		return
	}
	r.queued.Store(int64(len(rows)))
}

// outboxLoop delivers queued messages when their time comes, until ctx
// ends.
func (r *Runner) outboxLoop(ctx context.Context) {
	if r.store == nil {
		return
	}
	for {
		next, err := r.drainOutbox(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.storeResult(err)
			r.log.Error("outbound queue", "err", r.cfg.Redactor.Redact(err.Error()))
			next = time.Now().Add(time.Minute)
		}
		var due <-chan time.Time
		var t *time.Timer
		if !next.IsZero() {
			t = time.NewTimer(time.Until(next))
			due = t.C
		}
		select {
		case <-ctx.Done():
		case <-r.outboxKick:
		case <-due:
		}
		if t != nil {
			t.Stop()
		}
	}
}

// drainOutbox sends every queued row whose time has come, each chat's in
// order, and returns when the next row is due (zero: none queued).
func (r *Runner) drainOutbox(ctx context.Context) (next time.Time, err error) {
	rows, err := r.store.PendingOutbound(ctx)
	if err != nil {
		return time.Time{}, err
	}
	ctx = context.WithValue(ctx, outboxKey{}, true)
	held := map[herald.Target]bool{}
	for _, row := range rows {
		r.pace.setQueued(herald.Target{Platform: herald.Platform(row.Platform), ChatID: row.ChatID}, true)
	}
	defer func() {
		// a chat whose rows all went (or were given up) takes sends
		// directly again; one queued meanwhile is marked by queue
		for _, row := range rows {
			k := herald.Target{Platform: herald.Platform(row.Platform), ChatID: row.ChatID}
			if !held[k] && err == nil && ctx.Err() == nil {
				r.pace.setQueued(k, false)
			}
		}
	}()
	soonest := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	for _, row := range rows {
		to := herald.Target{Platform: herald.Platform(row.Platform), ChatID: row.ChatID, ThreadID: row.ThreadID}
		k := paceKey(to)
		if held[k] {
			continue
		}
		if time.Now().Before(row.NotBefore) {
			// later sends to the chat wait behind it
			r.pace.blockUntil(to, row.NotBefore)
			held[k] = true
			soonest(row.NotBefore)
			continue
		}
		a, ok := r.adapters[to.Platform]
		if !ok {
			r.log.Error("queued message dropped: its platform is not configured", "platform", row.Platform, "chat", row.ChatID)
			if err := r.store.DeleteOutbound(ctx, row.ID); err != nil {
				return next, err
			}
			r.queued.Add(-1)
			continue
		}
		out := adapters.Outgoing{Text: row.Text, Cause: row.Cause, Part: row.Part, Parts: row.Parts, Plain: row.Plain}
		if row.EditID != "" {
			err = r.replacePreview(ctx, a, to, row.EditID, out)
		} else {
			_, err = r.sendOne(ctx, a, to, out)
		}
		var de *deferredError
		switch {
		case err == nil:
		case errors.As(err, &de):
			if err := r.store.DeferOutbound(ctx, row.Platform, row.ChatID, de.until); err != nil {
				return next, err
			}
			held[k] = true
			soonest(de.until)
			continue
		case ctx.Err() != nil:
			return next, nil
		default:
			r.log.Error("queued message not delivered", "platform", row.Platform, "chat", row.ChatID, "err", r.cfg.Redactor.Redact(err.Error()))
			r.failureNotice(ctx, a, to, row.Cause, err)
		}
		if err := r.store.DeleteOutbound(context.WithoutCancel(ctx), row.ID); err != nil {
			return next, err
		}
		r.queued.Add(-1)
	}
	return next, nil
}

// replacePreview puts out's text into the streamed preview msgID, waiting
// out rate limits. When the preview cannot be edited it is deleted (where
// the platform can) and the text sent anew, so no stale preview stays
// above the answer. A *deferredError means nothing changed yet.
func (r *Runner) replacePreview(ctx context.Context, a adapters.Adapter, to herald.Target, msgID string, out adapters.Outgoing) error {
	ed, ok := a.(adapters.Editor)
	if !ok {
		_, err := r.sendOne(ctx, a, to, out)
		return err
	}
	err := r.edit(ctx, a, ed, to, msgID, out.Text)
	var de *deferredError
	if err == nil || errors.As(err, &de) || ctx.Err() != nil {
		return err
	}
	r.log.Warn("final streamed edit failed; sending the answer anew", "platform", a.Platform(), "chat", to.ChatID, "err", r.cfg.Redactor.Redact(err.Error()))
	r.deletePreview(ctx, a, to, msgID)
	_, err = r.sendOne(ctx, a, to, out)
	return err
}

// edit replaces a sent message's text, paced and retried like a send.
func (r *Runner) edit(ctx context.Context, a adapters.Adapter, ed adapters.Editor, to herald.Target, msgID, text string) error {
	return r.retry(ctx, a, to, func(ctx context.Context) error {
		return r.editAttempt(ctx, a, ed, to, msgID, text)
	}, nil)
}

// deletePreview removes a preview that could not become the answer.
func (r *Runner) deletePreview(ctx context.Context, a adapters.Adapter, to herald.Target, msgID string) {
	d, ok := a.(adapters.Deleter)
	if !ok {
		r.log.Warn("the platform cannot delete the stale preview; it stays above the answer", "platform", a.Platform(), "chat", to.ChatID)
		return
	}
	err := r.retry(ctx, a, to, func(ctx context.Context) error { return r.deleteAttempt(ctx, a, d, to, msgID) }, nil)
	if err != nil {
		r.log.Warn("stale preview not deleted", "platform", a.Platform(), "chat", to.ChatID, "err", r.cfg.Redactor.Redact(err.Error()))
	}
}

func safeEdit(ctx context.Context, a adapters.Adapter, ed adapters.Editor, to herald.Target, msgID, text string) (err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("adapter %s panicked in Edit: %v", a.Platform(), x)
		}
	}()
	return ed.Edit(ctx, to, msgID, text)
}
