package matrix

// send.go: Send (m.room.message with its HTML form, in a thread or as a
// reply), Edit (m.replace with m.new_content, for streamed replies),
// Typing, and the mapping of the homeserver's errors onto the adapters'
// error types.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/format"
	"maunium.net/go/mautrix/id"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// maxEvent is the most JSON herald puts in one event: the spec's 65,536
// bytes less room for the envelope the homeserver adds.
const maxEvent = 60000

// typingTimeout is how long one typing notification lasts; typingRenew
// how often herald renews it while a turn runs.
const (
	typingTimeout = 30 * time.Second
	typingRenew   = 20 * time.Second
)

// ErrEncrypted is a send to an end-to-end encrypted room.
var ErrEncrypted = errors.New("matrix: the room is end-to-end encrypted, which herald does not support")

// Send implements adapters.Adapter.
func (a *Adapter) Send(ctx context.Context, to herald.Target, m adapters.Outgoing) (adapters.Sent, error) {
	roomID, err := a.target(ctx, to)
	if err != nil {
		return adapters.Sent{}, err
	}
	content := a.content(m.Text, m.Plain)
	if rel := relation(to.ThreadID, m.ReplyTo); rel != nil {
		content["m.relates_to"] = rel
	}
	eventID, err := a.sendEvent(ctx, roomID, content)
	if err != nil {
		return adapters.Sent{}, err
	}
	a.stopTyping(ctx, roomID)
	return adapters.Sent{MessageID: eventID}, nil
}

// Edit implements adapters.Editor: an m.replace of messageID.
func (a *Adapter) Edit(ctx context.Context, to herald.Target, messageID, text string) error {
	roomID, err := a.target(ctx, to)
	if err != nil {
		return err
	}
	newContent := a.content(text, false)
	content := map[string]any{
		"msgtype": "m.text", "body": "* " + text, "m.mentions": map[string]any{},
		"m.new_content": newContent,
		"m.relates_to":  map[string]any{"rel_type": "m.replace", "event_id": messageID},
	}
	if html, ok := newContent["formatted_body"].(string); ok {
		content["format"], content["formatted_body"] = event.FormatHTML, "* "+html
	}
	if size(content) > maxEvent {
		delete(content, "format")
		delete(content, "formatted_body")
		delete(newContent, "format")
		delete(newContent, "formatted_body")
	}
	_, err = a.sendEvent(ctx, roomID, content)
	return err
}

// Delete implements adapters.Deleter: a redaction of the message (a
// streamed preview whose final edit failed).
func (a *Adapter) Delete(ctx context.Context, to herald.Target, messageID string) error {
	roomID, err := a.target(ctx, to)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if _, err := a.client().RedactEvent(rctx, id.RoomID(roomID), id.EventID(messageID)); err != nil {
		return a.classify("redact in "+roomID, err)
	}
	return nil
}

// Typing implements adapters.Typer: a typing notification lasting
// typingTimeout, renewed at most every typingRenew.
func (a *Adapter) Typing(ctx context.Context, to herald.Target) error {
	roomID, err := a.target(ctx, to)
	if err != nil {
		return err
	}
	now := time.Now()
	a.mu.Lock()
	due := now.Sub(a.typing[roomID]) >= typingRenew
	if due {
		a.typing[roomID] = now
	}
	a.mu.Unlock()
	if !due {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if _, err := a.client().UserTyping(rctx, id.RoomID(roomID), true, typingTimeout); err != nil {
		return a.classify("typing", err)
	}
	return nil
}

// stopTyping takes the indicator down once the answer is sent (it would
// otherwise stay up to typingTimeout after it).
func (a *Adapter) stopTyping(ctx context.Context, roomID string) {
	a.mu.Lock()
	_, on := a.typing[roomID]
	delete(a.typing, roomID)
	a.mu.Unlock()
	if !on {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	a.client().UserTyping(rctx, id.RoomID(roomID), false, 0)
}

// target is the room a target names (the home channel when it names
// none); an encrypted room is refused.
func (a *Adapter) target(ctx context.Context, to herald.Target) (string, error) {
	roomID := to.ChatID
	if roomID == "" {
		roomID = a.cfg.HomeChannel
	}
	if !strings.HasPrefix(roomID, "!") || !strings.Contains(roomID, ":") {
		return "", fmt.Errorf("matrix: %q is not a room id (like !abc123:example.org)", roomID)
	}
	if a.client() == nil {
		return "", &adapters.TemporaryError{Err: errors.New("matrix: not connected yet")}
	}
	if a.room(ctx, roomID).encrypted {
		return "", fmt.Errorf("matrix: send to %s: %w", roomID, ErrEncrypted)
	}
	return roomID, nil
}

// content is an m.text content of text: its Markdown rendered to
// org.matrix.custom.html unless plain, or when the HTML would not fit in
// an event. m.mentions is empty, so a name in the text pings no one.
func (a *Adapter) content(text string, plain bool) map[string]any {
	c := map[string]any{"msgtype": "m.text", "body": text, "m.mentions": map[string]any{}}
	if plain {
		return c
	}
	if html, ok := toHTML(text); ok {
		c["format"], c["formatted_body"] = event.FormatHTML, html
		if size(c) > maxEvent {
			delete(c, "format")
			delete(c, "formatted_body")
		}
	}
	return c
}

// toHTML renders Markdown (CommonMark with strikethrough and tables; raw
// HTML in the text is escaped, not passed on); ok is false when the text
// has no markup, so the message goes as plain text.
func toHTML(md string) (html string, ok bool) {
	defer func() {
		// the renderer panics only on a writer error, which a
		// strings.Builder never returns; a panic still must not lose
		// the message
		if recover() != nil {
			html, ok = "", false
		}
	}()
	c := format.RenderMarkdown(md, true, false)
	if c.Format != event.FormatHTML || c.FormattedBody == "" {
		return "", false
	}
	return c.FormattedBody, true
}

func size(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}

// relation is the m.relates_to of a message in a thread and/or replying
// to an event.
func relation(thread, replyTo string) map[string]any {
	switch {
	case thread != "":
		rel := map[string]any{"rel_type": "m.thread", "event_id": thread}
		if replyTo != "" && replyTo != thread {
			rel["m.in_reply_to"] = map[string]any{"event_id": replyTo}
		} else {
			// clients without threads show it as a reply to the root
			rel["is_falling_back"] = true
			rel["m.in_reply_to"] = map[string]any{"event_id": thread}
		}
		return rel
	case replyTo != "":
		return map[string]any{"m.in_reply_to": map[string]any{"event_id": replyTo}}
	}
	return nil
}

// sendEvent sends an m.room.message; it returns the event id.
func (a *Adapter) sendEvent(ctx context.Context, roomID string, content map[string]any) (string, error) {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := a.client().SendMessageEvent(rctx, id.RoomID(roomID), event.EventMessage, content)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return "", &adapters.MaybeSentError{Err: fmt.Errorf("matrix: send to %s: %s", roomID, a.red.Redact(err.Error()))}
		}
		return "", a.classify("send to "+roomID, err)
	}
	a.mu.Lock()
	if len(a.sent) >= recentSent {
		a.sent = a.sent[1:]
	}
	a.sent = append(a.sent, string(resp.EventID))
	a.mu.Unlock()
	return string(resp.EventID), nil
}

// classify maps a client error onto the adapters' error types: 429
// M_LIMIT_EXCEEDED is a *RetryAfterError after retry_after_ms (or
// Retry-After), a refused token a *FatalError naming it, 5xx and network
// failures *TemporaryError.
func (a *Adapter) classify(op string, err error) error {
	msg := a.red.Redact(err.Error())
	e := fmt.Errorf("matrix: %s: %s", op, msg)
	var he mautrix.HTTPError
	if !errors.As(err, &he) {
		if errors.Is(err, context.Canceled) {
			return e
		}
		return &adapters.TemporaryError{Err: e}
	}
	code := ""
	if he.RespError != nil {
		code = he.RespError.ErrCode
	}
	status := 0
	if he.Response != nil {
		status = he.Response.StatusCode
	}
	switch {
	case code == "M_LIMIT_EXCEEDED" || status == http.StatusTooManyRequests:
		return &adapters.RetryAfterError{After: retryAfter(he), Err: e}
	case code == "M_UNKNOWN_TOKEN" || code == "M_MISSING_TOKEN" || status == http.StatusUnauthorized:
		return &adapters.FatalError{Msg: "matrix: the homeserver refused the access token: check MATRIX_ACCESS_TOKEN (or MATRIX_USER_ID and MATRIX_PASSWORD)", Err: e}
	case status >= 500 || status == 0:
		return &adapters.TemporaryError{Err: e}
	}
	return e
}

// retryAfter reads retry_after_ms (the body) or Retry-After (the
// header); 1 s when neither is given.
func retryAfter(he mautrix.HTTPError) time.Duration {
	if he.RespError != nil {
		if ms, ok := he.RespError.ExtraData["retry_after_ms"].(float64); ok && ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
	}
	if he.Response != nil {
		var s int
		if _, err := fmt.Sscanf(he.Response.Header.Get("Retry-After"), "%d", &s); err == nil && s > 0 {
			return time.Duration(s) * time.Second
		}
	}
	return time.Second
}
