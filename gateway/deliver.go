package gateway

import (
	"context"
	"errors"
	"fmt"
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
// each participant's where groups are per user), once it was sent.
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
	if _, err := r.send(ctx, a, to, text, "", quoting{}); err != nil {
		return err
	}
	if err := r.record(context.WithoutCancel(ctx), to, text); err != nil {
		r.log.Error("delivered text not recorded", "target", to.String(), "err", r.cfg.Redactor.Redact(err.Error()))
		return fmt.Errorf("deliver to %s: %w: %w", to, ErrNotRecorded, err)
	}
	return nil
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

// send splits text to the adapter's limit and sends each part, retrying
// rate limits (honouring retry-after) and network errors with backoff, and
// falling back to plain text when the platform rejects the markup. When a
// part cannot be delivered it tells the chat, best effort, and returns the
// error. It returns the first part's platform message id. q says which
// parts quote the message answered.
func (r *Runner) send(ctx context.Context, a adapters.Adapter, to herald.Target, text, cause string, q quoting) (string, error) {
	// A secret the model or a user wrote into a message does not go out.
	parts := splitFor(r.cfg.Redactor.Redact(text), a)
	first := ""
	for i, part := range parts {
		out := adapters.Outgoing{Text: part, Cause: cause, Part: i + 1, Parts: len(parts), ReplyTo: q.of(i + 1)}
		id, err := r.sendOne(ctx, a, to, out)
		if err != nil {
			r.log.Error("delivery failed", "platform", a.Platform(), "chat", to.ChatID, "part", i+1, "parts", len(parts), "err", r.cfg.Redactor.Redact(err.Error()))
			if !adapters.IsFatal(err) {
				nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				safeSend(nctx, a, to, adapters.Outgoing{Text: DeliveryFailedNotice, Cause: cause, Plain: true})
				cancel()
			}
			return first, fmt.Errorf("deliver to %s: %w", to, err)
		}
		if i == 0 {
			first = id
		}
	}
	return first, nil
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

func (r *Runner) sendOne(ctx context.Context, a adapters.Adapter, to herald.Target, out adapters.Outgoing) (string, error) {
	return r.retrySend(ctx, a, to, out.Plain, func(plain bool) (adapters.Sent, error) {
		o := out
		o.Plain = plain
		return safeSend(ctx, a, to, o)
	})
}

// retrySend makes one delivery with retries: rate limits (honouring
// retry-after) and network errors with backoff; a refusal is tried once
// more as plain text unless plain is already set.
func (r *Runner) retrySend(ctx context.Context, a adapters.Adapter, to herald.Target, plain bool, try func(plain bool) (adapters.Sent, error)) (string, error) {
	backoff := r.cfg.RetryBase
	var err error
	for attempt := 1; attempt <= maxSendAttempts; attempt++ {
		var sent adapters.Sent
		sent, err = try(plain)
		if err == nil {
			return sent.MessageID, nil
		}
		var ra *adapters.RetryAfterError
		var tmp *adapters.TemporaryError
		var wait time.Duration
		switch {
		case adapters.IsFatal(err):
			return "", err
		case errors.As(err, &ra):
			wait = ra.After
			if wait <= 0 {
				wait = backoff
			}
		case errors.As(err, &tmp):
			wait = backoff
			backoff *= 2
		default:
			if plain {
				return "", err
			}
			// the platform refused this message: try once more as plain text
			plain = true
			continue
		}
		if wait > maxRetryWait {
			return "", fmt.Errorf("retry-after %s is too long: %w", wait, err)
		}
		if attempt == maxSendAttempts {
			break
		}
		r.log.Warn("send failed; retrying", "platform", a.Platform(), "chat", to.ChatID, "attempt", attempt, "in", wait, "err", r.cfg.Redactor.Redact(err.Error()))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
	}
	return "", err
}

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
