package slack

// send.go posts and edits messages and maps slack-go's errors to the
// adapters error types the gateway acts on.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Send implements adapters.Adapter with chat.postMessage. A target's
// ThreadID (or, failing that, Outgoing.ReplyTo) is the thread replied in.
func (a *Adapter) Send(ctx context.Context, to herald.Target, m adapters.Outgoing) (adapters.Sent, error) {
	channel, thread, err := a.destination(to, m.ReplyTo)
	if err != nil {
		return adapters.Sent{}, err
	}
	opts := []slackapi.MsgOption{a.textOption(m.Text, m.Plain)}
	if m.Plain {
		opts = append(opts, slackapi.MsgOptionDisableMarkdown())
	}
	if len(m.Buttons) > 0 {
		// the text stays as the notification's fallback
		opts = append(opts, slackapi.MsgOptionBlocks(blocks(m.Text, m.Plain, m.Buttons)...))
	}
	if thread != "" {
		opts = append(opts, slackapi.MsgOptionTS(thread))
		// remembered before posting: the user may answer before
		// chat.postMessage returns
		a.joined(ctx, channel, thread)
	}
	if user := a.ephemeralUser(m.Cause); user != "" {
		// a reply to a slash command shown only to its user; an ephemeral
		// message cannot be edited, so no id is returned and the gateway
		// sends the whole answer anew rather than editing a preview
		if _, err := a.api.PostEphemeralContext(ctx, channel, user, opts...); err != nil {
			return adapters.Sent{}, mapError("post to "+user+" in "+channel, err, "SLACK_BOT_TOKEN")
		}
		return adapters.Sent{}, nil
	}
	_, ts, err := a.api.PostMessageContext(ctx, channel, opts...)
	if err != nil {
		return adapters.Sent{}, mapError("post to "+channel, err, "SLACK_BOT_TOKEN")
	}
	a.remember(channel, ts, m.Text)
	return adapters.Sent{MessageID: ts}, nil
}

// destination is the channel and thread a message or file for to goes
// to: the target's chat (or the home channel), and its thread (or
// replyTo's).
func (a *Adapter) destination(to herald.Target, replyTo string) (channel, thread string, err error) {
	channel = to.ChatID
	if channel == "" {
		channel = a.cfg.HomeChannel
	}
	if channel == "" {
		return "", "", errors.New("slack: send: no channel (and no home channel: set SLACK_HOME_CHANNEL)")
	}
	thread = to.ThreadID
	if thread == "" {
		thread = replyTo
	}
	if strings.HasPrefix(thread, slashIDPrefix) {
		// a slash command is no message a thread can hang under
		thread = ""
	}
	return channel, thread, nil
}

// Edit implements adapters.Editor with chat.update; an edit that would
// not change the text is skipped.
func (a *Adapter) Edit(ctx context.Context, to herald.Target, messageID, text string) error {
	channel := to.ChatID
	if channel == "" {
		channel = a.cfg.HomeChannel
	}
	key := channel + "/" + messageID
	a.mu.Lock()
	last, known := a.edits[key]
	a.mu.Unlock()
	if known && last == text {
		return nil
	}
	if _, _, _, err := a.api.UpdateMessageContext(ctx, channel, messageID, a.textOption(text, false)); err != nil {
		return mapError("edit "+key, err, "SLACK_BOT_TOKEN")
	}
	a.remember(channel, messageID, text)
	return nil
}

func (a *Adapter) textOption(text string, plain bool) slackapi.MsgOption {
	if plain {
		return slackapi.MsgOptionText(escape(text), false)
	}
	return slackapi.MsgOptionText(toMrkdwn(text), false)
}

// remember keeps the last text of recent messages (bounded) so that
// identical edits are skipped.
func (a *Adapter) remember(channel, ts, text string) {
	const keep = 1000
	key := channel + "/" + ts
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.edits[key]; !ok {
		a.editQ = append(a.editQ, key)
		if len(a.editQ) > keep {
			delete(a.edits, a.editQ[0])
			a.editQ = a.editQ[1:]
		}
	}
	a.edits[key] = text
}

// fatalCodes are the Slack error codes that mean the token will never
// work.
var fatalCodes = map[string]bool{"invalid_auth": true, "not_authed": true, "token_revoked": true, "account_inactive": true, "token_expired": true, "not_allowed_token_type": true}

// mapError turns a slack-go error into the adapters error types. token
// names the environment variable to check when the token is refused.
func mapError(op string, err error, token string) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("slack: %s: %w", op, err)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return wrapped
	}
	var rl *slackapi.RateLimitedError
	if errors.As(err, &rl) {
		return &adapters.RetryAfterError{After: rl.RetryAfter, Err: wrapped}
	}
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) {
		switch {
		case fatalCodes[se.Err]:
			return &adapters.FatalError{Msg: fmt.Sprintf("slack: %s refused the token (%s): check %s", op, se.Err, token), Err: err}
		case se.Err == "ratelimited":
			return &adapters.RetryAfterError{After: 0, Err: wrapped}
		case se.Err == "internal_error" || se.Err == "fatal_error" || se.Err == "service_unavailable" || se.Err == "request_timeout":
			return &adapters.TemporaryError{Err: wrapped}
		}
		return wrapped
	}
	var sc slackapi.StatusCodeError
	if errors.As(err, &sc) {
		switch {
		case sc.Code == http.StatusTooManyRequests:
			return &adapters.RetryAfterError{After: 0, Err: wrapped}
		case sc.Code == http.StatusUnauthorized || sc.Code == http.StatusForbidden:
			return &adapters.FatalError{Msg: fmt.Sprintf("slack: %s was refused with HTTP %d: check %s", op, sc.Code, token), Err: err}
		case sc.Code >= 500:
			return &adapters.TemporaryError{Err: wrapped}
		}
		return wrapped
	}
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ne) || errors.As(err, &ue) {
		return &adapters.TemporaryError{Err: wrapped}
	}
	return wrapped
}

// Pace is Slack's chat.postMessage limit: about one message a second to
// a channel.
func (a *Adapter) Pace(to herald.Target) adapters.Pace {
	return adapters.Pace{Every: time.Second}
}

// Delete implements adapters.Deleter with chat.delete (a streamed preview
// the answer could not replace).
func (a *Adapter) Delete(ctx context.Context, to herald.Target, messageID string) error {
	channel := to.ChatID
	if channel == "" {
		channel = a.cfg.HomeChannel
	}
	if _, _, err := a.api.DeleteMessageContext(ctx, channel, messageID); err != nil {
		return mapError("delete "+channel+"/"+messageID, err, "SLACK_BOT_TOKEN")
	}
	return nil
}
