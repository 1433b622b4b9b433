package teams

// send.go: the Connector REST calls — send, update, delete, typing — and
// what their failures mean to the gateway.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Send implements adapters.Adapter.
func (a *Adapter) Send(ctx context.Context, to herald.Target, m adapters.Outgoing) (adapters.Sent, error) {
	act := a.textActivity(m.Text, m.Plain)
	// replyToId ties an answer to the activity it answers (Teams threads
	// it under a channel message; elsewhere it is bookkeeping)
	act.ReplyToID = m.ReplyTo
	if act.ReplyToID == "" {
		act.ReplyToID = m.Cause
	}
	if len(m.Buttons) > 0 {
		act.Attachments = []attachment{buttonCard(m.Buttons)}
	}
	var res struct {
		ID string `json:"id"`
	}
	if err := a.call(ctx, http.MethodPost, to, "", act, &res); err != nil {
		return adapters.Sent{}, err
	}
	return adapters.Sent{MessageID: res.ID}, nil
}

// Edit implements adapters.Editor.
func (a *Adapter) Edit(ctx context.Context, to herald.Target, messageID, text string) error {
	act := a.textActivity(text, false)
	act.ID = messageID
	return a.call(ctx, http.MethodPut, to, messageID, act, nil)
}

// CloseButtons implements adapters.ButtonSender: the card's text is
// replaced and its buttons removed.
func (a *Adapter) CloseButtons(ctx context.Context, to herald.Target, messageID, text string) error {
	return a.Edit(ctx, to, messageID, text)
}

// Delete implements adapters.Deleter.
func (a *Adapter) Delete(ctx context.Context, to herald.Target, messageID string) error {
	return a.call(ctx, http.MethodDelete, to, messageID, nil, nil)
}

// Typing implements adapters.Typer.
func (a *Adapter) Typing(ctx context.Context, to herald.Target) error {
	return a.call(ctx, http.MethodPost, to, "", &activity{Type: typeTyping}, nil)
}

// textActivity is a message activity carrying text (the model's
// Markdown, converted for Teams unless plain).
func (a *Adapter) textActivity(text string, plain bool) *activity {
	if plain {
		return &activity{Type: typeMessage, Text: text, TextFormat: "plain"}
	}
	return &activity{Type: typeMessage, Text: Format(text), TextFormat: "markdown"}
}

// buttonCard is an Adaptive Card of one Action.Submit per button; a press
// comes back as a message whose value is the action's data.
func buttonCard(buttons []adapters.Button) attachment {
	actions := make([]map[string]any, 0, len(buttons))
	for _, b := range buttons {
		act := map[string]any{"type": "Action.Submit", "title": b.Label, "data": map[string]string{buttonKey: b.Data}}
		switch b.Style {
		case "primary":
			act["style"] = "positive"
		case "danger":
			act["style"] = "destructive"
		}
		actions = append(actions, act)
	}
	return attachment{
		ContentType: "application/vnd.microsoft.card.adaptive",
		Content: map[string]any{
			"type": "AdaptiveCard", "version": "1.4",
			"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
			"body":    []any{}, "actions": actions,
		},
	}
}

// call makes one Connector request for the conversation of to (and the
// activity id, for updates and deletes) and decodes a JSON answer into
// out when given.
func (a *Adapter) call(ctx context.Context, method string, to herald.Target, activityID string, body *activity, out any) error {
	chat := to.ChatID
	if chat == "" {
		chat = a.cfg.HomeChannel
	}
	op := strings.ToLower(method) + " to " + chat
	base := a.convs.serviceURL(ctx, chat)
	if base == "" {
		return fmt.Errorf("teams: %s: no activity from this conversation has arrived yet, so herald does not know its serviceUrl (say something to the bot there first)", op)
	}
	u := strings.TrimRight(base, "/") + "/v3/conversations/" + url.PathEscape(joinConversation(chat, to.ThreadID)) + "/activities"
	if activityID != "" {
		u += "/" + url.PathEscape(activityID)
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("teams: %s: %w", op, err)
		}
	}
	token, err := a.tokens.get(ctx)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("teams: %s: %w", op, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return transportError(ctx, op, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		return &adapters.RetryAfterError{After: retryAfter(resp.Header), Err: fmt.Errorf("teams: %s: HTTP 429", op)}
	case code == http.StatusUnauthorized:
		a.tokens.forget(token)
		return &adapters.TemporaryError{Err: fmt.Errorf("teams: %s: the Connector refused the bot's token (HTTP 401)", op)}
	case code >= 500:
		return &adapters.TemporaryError{Err: fmt.Errorf("teams: %s: HTTP %d%s", op, code, connectorMessage(answer))}
	case code < 200 || code > 299:
		return fmt.Errorf("teams: %s: HTTP %d%s", op, code, connectorMessage(answer))
	}
	if out != nil && len(bytes.TrimSpace(answer)) > 0 {
		if err := json.Unmarshal(answer, out); err != nil {
			return fmt.Errorf("teams: %s: unreadable answer: %w", op, err)
		}
	}
	return nil
}

// connectorMessage is the error message of a Connector error answer
// ({"error": {"code": …, "message": …}}), for the log.
func connectorMessage(body []byte) string {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || (e.Error.Code == "" && e.Error.Message == "") {
		return ""
	}
	return ": " + strings.TrimSpace(e.Error.Code+" "+e.Error.Message)
}

// transportError sorts a failed request: one that never reached the
// Connector is worth another try; one that may have (a timeout while
// waiting for the answer) is not sent again.
func transportError(ctx context.Context, op string, err error) error {
	wrapped := fmt.Errorf("teams: %s: %w", op, err)
	if ctx.Err() != nil {
		return fmt.Errorf("teams: %s: %w", op, ctx.Err())
	}
	var op2 *net.OpError
	if errors.As(err, &op2) && op2.Op == "dial" {
		return &adapters.TemporaryError{Err: wrapped}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &adapters.MaybeSentError{Err: wrapped}
	}
	return &adapters.TemporaryError{Err: wrapped}
}

// retryAfter reads a Retry-After header (seconds or an HTTP date, at
// most maxRetryAfter); without one, a second.
func retryAfter(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return min(time.Duration(secs)*time.Second, maxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return time.Second
}

// maxRetryAfter bounds the wait a 429 asks for.
const maxRetryAfter = 10 * time.Minute
