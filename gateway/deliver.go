package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// Deliver sends text to a target through the one delivery path and
// records it in that chat's session transcript (when one is open).
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
	if err := r.send(ctx, a, to, text, ""); err != nil {
		return err
	}
	src := herald.Source{Platform: to.Platform, ChatID: to.ChatID, ThreadID: to.ThreadID, ChatType: herald.ChatDM}
	if sess, _ := r.store.OpenSession(ctx, sessions.Key(src, r.cfg.Keys)); sess != nil {
		r.store.Append(ctx, nil, sessions.Message{SessionID: sess.ID, Role: "assistant", Content: r.cfg.Redactor.Redact(text)})
	}
	return nil
}

// Reply sends a side-channel reply to a source's chat.
func (r *Runner) Reply(ctx context.Context, to herald.Source, text string) error {
	a, ok := r.adapters[to.Platform]
	if !ok {
		return fmt.Errorf("reply: %w: %s", ErrUnknownPlatform, to.Platform)
	}
	return r.send(ctx, a, to.Target(), text, "")
}

// send splits text to the adapter's limit and sends each part, retrying
// rate limits (honouring retry-after) and network errors with backoff, and
// falling back to plain text when the platform rejects the markup. When a
// part cannot be delivered it tells the chat, best effort, and returns the
// error.
func (r *Runner) send(ctx context.Context, a adapters.Adapter, to herald.Target, text, cause string) error {
	parts := Split(text, a.Limits())
	for i, part := range parts {
		out := adapters.Outgoing{Text: part, Cause: cause, Part: i + 1, Parts: len(parts)}
		if err := r.sendOne(ctx, a, to, out); err != nil {
			r.log.Error("delivery failed", "platform", a.Platform(), "chat", to.ChatID, "part", i+1, "parts", len(parts), "err", r.cfg.Redactor.Redact(err.Error()))
			if !adapters.IsFatal(err) {
				nctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				a.Send(nctx, to, adapters.Outgoing{Text: DeliveryFailedNotice, Cause: cause, Plain: true})
				cancel()
			}
			return fmt.Errorf("deliver to %s: %w", to, err)
		}
	}
	return nil
}

func (r *Runner) sendOne(ctx context.Context, a adapters.Adapter, to herald.Target, out adapters.Outgoing) error {
	backoff := time.Second
	var err error
	for attempt := 1; attempt <= maxSendAttempts; attempt++ {
		_, err = safeSend(ctx, a, to, out)
		if err == nil {
			return nil
		}
		var ra *adapters.RetryAfterError
		var tmp *adapters.TemporaryError
		var wait time.Duration
		switch {
		case adapters.IsFatal(err):
			return err
		case errors.As(err, &ra):
			wait = ra.After
			if wait <= 0 {
				wait = time.Second
			}
		case errors.As(err, &tmp):
			wait = backoff
			backoff *= 2
		default:
			if out.Plain {
				return err
			}
			// the platform refused this message: try once more as plain text
			out.Plain = true
			continue
		}
		if wait > maxRetryWait {
			return fmt.Errorf("retry-after %s is too long: %w", wait, err)
		}
		if attempt == maxSendAttempts {
			break
		}
		r.log.Warn("send failed; retrying", "platform", a.Platform(), "chat", to.ChatID, "attempt", attempt, "in", wait, "err", r.cfg.Redactor.Redact(err.Error()))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return err
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
