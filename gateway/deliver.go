package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/sessions"
)

// Retry bounds for delivery.
const (
	maxSendAttempts = 5
	maxRetryWait    = 2 * time.Minute
)

// DeliveryFailedNotice is sent (best effort) when a reply could not be
// delivered.
const DeliveryFailedNotice = "⚠️ Message delivery failed after multiple attempts. Please try again."

// ErrUnknownPlatform is returned for targets on platforms that are not
// configured.
var ErrUnknownPlatform = errors.New("unknown or unconfigured platform")

// ErrNotRecorded is returned (wrapped) by Deliver when the text was sent
// but could not be stored in the chat's transcript: do not send it again.
var ErrNotRecorded = errors.New("sent, but not recorded in the chat's transcript")

// Deliver sends text to a target through the one delivery path and
// records it in that chat's open sessions (whatever the chat's type, and
// each participant's where groups are per user), once it was sent. Text
// a rate limit keeps for later is recorded too and reported with a
// *herald.QueuedError; text that may or may not have gone through with an
// error wrapping herald.ErrMaybeSent (see herald.Deliverer).
func (r *Runner) Deliver(ctx context.Context, to herald.Target, text string) error {
	a, ok := r.adapters[to.Platform]
	if !ok {
		return fmt.Errorf("deliver to %s: %w: %s", to, ErrUnknownPlatform, to.Platform)
	}
	if to.ChatID == "" {
		home := r.cfg.Auth[to.Platform].HomeChannel
		if hc, ok := a.(adapters.HomeChanneler); ok && home == "" {
			home = hc.HomeChannel()
		}
		if home == "" {
			return fmt.Errorf("deliver to %s: no home channel configured (set %s_HOME_CHANNEL or platforms.%s.home_channel)", to.Platform, upper(string(to.Platform)), to.Platform)
		}
		to.ChatID = home
	}
	res, err := r.send(ctx, a, to, text, "", quoting{})
	if err != nil {
		return err
	}
	var unsure error
	switch {
	case !res.queuedUntil.IsZero():
		unsure = &herald.QueuedError{Target: to, Until: res.queuedUntil}
	case res.maybeSent:
		unsure = fmt.Errorf("deliver to %s: %w", to, herald.ErrMaybeSent)
	}
	if err := r.record(context.WithoutCancel(ctx), to, text); err != nil {
		r.log.Error("delivered text not recorded", "target", to.String(), "err", r.cfg.Redactor.Redact(err.Error()))
		return errors.Join(unsure, fmt.Errorf("deliver to %s: %w: %w", to, ErrNotRecorded, err))
	}
	return unsure
}

// record stores text, as said by the assistant, in every open session of
// the chat it was delivered to, and in the history of those loaded.
func (r *Runner) record(ctx context.Context, to herald.Target, text string) error {
	open, err := r.store.OpenSessionsOfChat(ctx, string(to.Platform), to.ChatID, to.ThreadID)
	if err != nil || len(open) == 0 {
		if err != nil {
			r.storeResult(err)
		}
		return err
	}
	content, now := r.cfg.Redactor.Redact(text), r.cfg.Now()
	msgs := make([]sessions.Message, len(open))
	for i, s := range open {
		msgs[i] = sessions.Message{SessionID: s.ID, Role: openai.ChatMessageRoleAssistant, Content: content, CreatedAt: now}
	}
	err = r.store.Append(ctx, nil, msgs...)
	r.storeResult(err)
	if err != nil {
		return err
	}
	for _, s := range open {
		r.mu.Lock()
		c := r.chats[s.Key]
		r.mu.Unlock()
		if c != nil {
			r.remember(c, s.ID, openai.ChatMessageRoleAssistant, content)
		}
	}
	return nil
}

// Reply sends a side-channel reply to a source's chat. Sent while
// pre_gateway_dispatch looks at a message of that chat, it counts as
// caused by that message (the local platform returns it with the answer).
func (r *Runner) Reply(ctx context.Context, to herald.Source, text string) error {
	a, ok := r.adapters[to.Platform]
	if !ok {
		return fmt.Errorf("reply: %w: %s", ErrUnknownPlatform, to.Platform)
	}
	if to.ChatType == "" {
		to.ChatType = herald.ChatDM
	}
	cause := ""
	r.mu.Lock()
	c := r.chats[sessions.Key(to, r.cfg.Keys)]
	r.mu.Unlock()
	if c != nil {
		c.mu.Lock()
		cause = c.hookMsg
		c.mu.Unlock()
	}
	_, err := r.send(ctx, a, to.Target(), text, cause, quoting{})
	return err
}

// FormattedLener is implemented by adapters whose Send converts markup
// (Markdown to HTML, say): it measures text as it will be sent, by the
// platform's counting rule, so that splitting leaves room for the markup.
type FormattedLener interface {
	FormattedLen(text string) int
}

// send splits text to the adapter's limit and sends each part (see
// sendParts). q says which parts quote the message answered.
func (r *Runner) send(ctx context.Context, a adapters.Adapter, to herald.Target, text, cause string, q quoting) (sentParts, error) {
	// A secret the model or a user wrote into a message does not go out.
	return r.sendParts(ctx, a, to, numbered(splitFor(r.cfg.Redactor.Redact(text), a), cause, q))
}

// numbered makes parts the messages of one text, numbered, quoting the
// message answered as q says.
func numbered(parts []string, cause string, q quoting) []adapters.Outgoing {
	outs := make([]adapters.Outgoing, len(parts))
	for i, p := range parts {
		outs[i] = adapters.Outgoing{Text: p, Cause: cause, Part: i + 1, Parts: len(parts), ReplyTo: q.of(i + 1)}
	}
	return outs
}

// sentParts is how a text that did not fail went out.
type sentParts struct {
	// firstID is the platform message id of the first part ("" when it
	// was not sent, or the platform gave none).
	firstID string
	// queuedUntil is set when parts wait in the outbound queue: the
	// earliest they may go.
	queuedUntil time.Time
	// maybeSent: a part timed out after it was written and was not sent
	// again.
	maybeSent bool
}

// sendParts sends messages in order, paced per chat, retrying rate limits
// (honouring retry-after) and network errors with backoff, and falling
// back to plain text when the platform rejects the markup. When the
// platform asks for a wait longer than the retry cap, the parts not yet
// sent are queued in the store and delivered after it (also after a
// restart). When a part cannot be delivered it tells the chat, paced and
// best effort, and returns the error.
func (r *Runner) sendParts(ctx context.Context, a adapters.Adapter, to herald.Target, outs []adapters.Outgoing) (sentParts, error) {
	var res sentParts
	for i, out := range outs {
		id, maybe, err := r.sendTracked(ctx, a, to, out)
		if i == 0 {
			res.firstID = id
		}
		res.maybeSent = res.maybeSent || maybe
		var de *deferredError
		if errors.As(err, &de) {
			qerr := r.queue(ctx, to, outs[i:], "", de.until)
			if qerr == nil {
				res.queuedUntil = de.until
				return res, nil
			}
			err = fmt.Errorf("%w; and it could not be queued: %w", err, qerr)
		}
		if err != nil {
			r.log.Error("delivery failed", "platform", a.Platform(), "chat", to.ChatID, "part", out.Part, "parts", out.Parts, "err", r.cfg.Redactor.Redact(err.Error()))
			r.failureNotice(ctx, a, to, out.Cause, err)
			return res, fmt.Errorf("deliver to %s: %w", to, err)
		}
	}
	return res, nil
}

// failureNotice tells a chat that a message could not be delivered: at
// most once a minute per chat, in the chat's pace, and not at all while a
// rate limit keeps the chat closed for more than a few seconds.
func (r *Runner) failureNotice(ctx context.Context, a adapters.Adapter, to herald.Target, cause string, err error) {
	if adapters.IsFatal(err) || !r.pace.noticeDue(to) {
		return
	}
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if d := r.pace.blockedFor(to); d > 10*time.Second {
		r.log.Warn("delivery-failure notice not sent: the chat is rate limited", "platform", a.Platform(), "chat", to.ChatID, "for", d)
		return
	}
	if r.pace.wait(nctx, a, to) != nil {
		return
	}
	safeSend(nctx, a, to, adapters.Outgoing{Text: DeliveryFailedNotice, Cause: cause, Plain: true})
}

// splitFor splits text for a, measuring formatted text when a says how.
// The split counts the text as written; a part whose formatted form is
// still too long is split again with less room, a few times at most.
func splitFor(text string, a adapters.Adapter) []string {
	lim := a.Limits()
	fl, ok := a.(FormattedLener)
	if !ok || lim.MaxLength <= 0 {
		return Split(text, lim)
	}
	room := lim
	for try := 0; ; try++ {
		parts := Split(text, room)
		worst := 0
		for _, p := range parts {
			worst = max(worst, fl.FormattedLen(p))
		}
		if worst <= lim.MaxLength || try == 6 || room.MaxLength <= 32 {
			return parts
		}
		// shrink in proportion to the overshoot, and a bit more
		room.MaxLength = max(32, room.MaxLength*lim.MaxLength/worst-8)
	}
}

// deferredError is a chat closed by a retry-after longer than
// maxRetryWait: what was to be sent waits in the store until then.
type deferredError struct {
	until time.Time
	err   error
}

func (e *deferredError) Error() string {
	return fmt.Sprintf("rate limited until %s: %v", e.until.UTC().Format(time.RFC3339), e.err)
}
func (e *deferredError) Unwrap() error { return e.err }

// sendOne sends one message, paced and retried (see sendParts). A send
// that timed out after its request was written is not repeated: it counts
// as sent, outcome unknown, and sendOne returns "" and no error.
func (r *Runner) sendOne(ctx context.Context, a adapters.Adapter, to herald.Target, out adapters.Outgoing) (string, error) {
	id, _, err := r.sendTracked(ctx, a, to, out)
	return id, err
}

// sendTracked is sendOne, reporting a send that may have gone through.
func (r *Runner) sendTracked(ctx context.Context, a adapters.Adapter, to herald.Target, out adapters.Outgoing) (id string, maybeSent bool, err error) {
	err = r.retry(ctx, a, to, func(ctx context.Context) error {
		sent, err := r.attempt(ctx, a, to, out)
		id = sent.MessageID
		return err
	}, func(err error) bool {
		if out.Plain {
			return false
		}
		// the platform refused this message: try once more as plain text
		out.Plain = true
		return true
	})
	var ms *adapters.MaybeSentError
	if errors.As(err, &ms) {
		r.maybeSent.Add(1)
		r.log.Warn("send timed out after it was written; not sent again, it may have gone through", "platform", a.Platform(), "chat", to.ChatID, "err", r.cfg.Redactor.Redact(err.Error()))
		return "", true, nil
	}
	return id, false, err
}

// outboxKey marks the context of the outbox loop's sends: they are the
// queue, so they do not join it.
type outboxKey struct{}

// retry runs try in the chat's pace until it succeeds, waiting out rate
// limits (a retry-after closes the chat to every send and edit for its
// length) and backing off after network errors, maxSendAttempts times at
// most. A retry-after beyond maxRetryWait ends it with a *deferredError,
// as does a chat with messages in the outbound queue (outside the outbox
// loop): what comes later waits behind them.
// Another failure ends it unless refused (given the error) says to try
// again at once.
func (r *Runner) retry(ctx context.Context, a adapters.Adapter, to herald.Target, try func(context.Context) error, refused func(error) bool) error {
	if q, until := r.pace.queuedUntil(to); q && ctx.Value(outboxKey{}) == nil {
		return &deferredError{until: later(time.Now(), until), err: fmt.Errorf("%s has messages queued before this one", to)}
	}
	backoff := r.cfg.RetryBase
	var err error
	for attempt := 1; attempt <= maxSendAttempts; attempt++ {
		if d := r.pace.blockedFor(to); d > maxRetryWait {
			return &deferredError{until: time.Now().Add(d), err: fmt.Errorf("%s is rate limited for %s", to, d.Round(time.Second))}
		}
		if err := r.pace.wait(ctx, a, to); err != nil {
			return err
		}
		err = try(ctx)
		if err == nil {
			return nil
		}
		var ra *adapters.RetryAfterError
		var tmp *adapters.TemporaryError
		var ms *adapters.MaybeSentError
		var wait time.Duration
		switch {
		case adapters.IsFatal(err), errors.As(err, &ms):
			return err
		case errors.As(err, &ra):
			wait = ra.After
			if wait <= 0 {
				wait = backoff
				backoff *= 2
			}
			r.pace.block(to, wait)
			if wait > maxRetryWait {
				return &deferredError{until: time.Now().Add(wait), err: err}
			}
		case errors.As(err, &tmp), ctx.Err() == nil && timedOut(err):
			// a network error, or an attempt that ran out of its own
			// time (a send that may have gone through ended above)
			wait = backoff
			backoff *= 2
		default:
			if refused == nil || !refused(err) {
				return err
			}
			continue
		}
		if attempt == maxSendAttempts {
			break
		}
		r.log.Warn("send failed; retrying", "platform", a.Platform(), "chat", to.ChatID, "attempt", attempt, "in", wait, "err", r.cfg.Redactor.Redact(err.Error()))
		if ra != nil {
			continue // the pace holds the chat for the wait
		}
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
	}
	return err
}

// bounded limits ctx to one attempt at a platform call (SendTimeout): a
// call that hangs fails that attempt instead of holding the chat, the
// stream or the turn.
func (r *Runner) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.cfg.SendTimeout)
}

// attempt is one Send, bounded by SendTimeout. A timeout after the
// request was written (seen through an HTTP trace on the context, which
// the platform libraries pass on) is a *adapters.MaybeSentError: the
// platform may have taken the message. A timeout before (no connection)
// stays an error worth retrying.
func (r *Runner) attempt(ctx context.Context, a adapters.Adapter, to herald.Target, out adapters.Outgoing) (adapters.Sent, error) {
	actx, cancel := r.bounded(ctx)
	defer cancel()
	var wrote atomic.Bool
	actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{WroteRequest: func(w httptrace.WroteRequestInfo) {
		if w.Err == nil {
			wrote.Store(true)
		}
	}})
	sent, err := safeSend(actx, a, to, out)
	if err != nil && wrote.Load() && timedOut(err) {
		var ms *adapters.MaybeSentError
		if !errors.As(err, &ms) {
			err = &adapters.MaybeSentError{Err: err}
		}
	}
	return sent, err
}

// editAttempt is one Edit, bounded by SendTimeout. An edit that timed
// out may have taken, but making it again changes nothing, so it is
// retried like a network error.
func (r *Runner) editAttempt(ctx context.Context, a adapters.Adapter, ed adapters.Editor, to herald.Target, msgID, text string) error {
	actx, cancel := r.bounded(ctx)
	defer cancel()
	return safeEdit(actx, a, ed, to, msgID, text)
}

// deleteAttempt is one Delete, bounded by SendTimeout.
func (r *Runner) deleteAttempt(ctx context.Context, a adapters.Adapter, d adapters.Deleter, to herald.Target, msgID string) (err error) {
	actx, cancel := r.bounded(ctx)
	defer cancel()
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("adapter %s panicked in Delete: %v", a.Platform(), x)
		}
	}()
	return d.Delete(actx, to, msgID)
}

// timedOut reports whether err is a deadline or a network timeout.
func timedOut(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// MaybeSent is how many sends timed out after they were written and were
// not repeated (delivered or not: unknown) since the gateway started.
func (r *Runner) MaybeSent() int64 { return r.maybeSent.Load() }

func safeSend(ctx context.Context, a adapters.Adapter, to herald.Target, out adapters.Outgoing) (s adapters.Sent, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("adapter %s panicked in Send: %v", a.Platform(), x)
		}
	}()
	return a.Send(ctx, to, out)
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}
