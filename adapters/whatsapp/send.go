package whatsapp

// send.go: the Graph API calls (one helper that sends JSON or a form,
// decodes the answer and maps Graph's errors onto the adapters' error
// types) and Send, which posts text and buttons to /{phone-number-id}/messages.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// maxAnswer bounds a Graph API answer herald reads.
const maxAnswer = 1 << 20

// Graph error codes herald acts on.
const (
	codeTokenInvalid   = 190    // the access token expired or is wrong
	codeAppRateLimit   = 4      // the app's call rate
	codeWABARateLimit  = 80007  // the business account's call rate
	codeThroughput     = 130429 // the phone number's messages per second
	codePairRateLimit  = 131056 // too many messages to one user
	codeReEngagement   = 131047 // more than 24 hours since the user wrote
	defaultRetryAfter  = time.Second
	pairRateLimitAfter = 6 * time.Second
)

// GraphError is an error answer of the Graph API.
type GraphError struct {
	Status  int    `json:"-"` // HTTP status
	Code    int    `json:"code"`
	Subcode int    `json:"error_subcode"`
	Type    string `json:"type"`
	Message string `json:"message"`
	Data    struct {
		Details string `json:"details"`
	} `json:"error_data"`
}

func (e *GraphError) Error() string {
	msg := e.Message
	if e.Data.Details != "" && e.Data.Details != msg {
		msg += ": " + e.Data.Details
	}
	return fmt.Sprintf("Graph API error %d (HTTP %d): %s", e.Code, e.Status, msg)
}

// WindowError is a free-form send to a user outside the 24-hour
// customer-service window.
type WindowError struct {
	// To is the user's wa_id.
	To string
	// Last is when they last wrote (zero: never, as far as herald knows).
	Last time.Time
	// Err is the Graph API's answer, when it was the one to refuse.
	Err error
}

func (e *WindowError) Error() string {
	when := "herald has no message from them"
	if !e.Last.IsZero() {
		when = "their last message was at " + e.Last.UTC().Format(time.RFC3339)
	}
	s := fmt.Sprintf("whatsapp: cannot send to %s: outside the 24-hour customer-service window (%s); WhatsApp takes only approved template messages until they write again", e.To, when)
	if e.Err != nil {
		s += " (" + e.Err.Error() + ")"
	}
	return s
}
func (e *WindowError) Unwrap() error { return e.Err }

// graph calls the Graph API: method on path (under APIBase) with body
// (JSON unless contentType says otherwise), decoding a 2xx answer into
// out when not nil.
func (a *Adapter) graph(ctx context.Context, hc *http.Client, method, path string, body []byte, contentType string, out any) error {
	op := method + " " + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.cfg.APIBase+path, rd)
	if err != nil {
		return fmt.Errorf("whatsapp: %s: %w", op, err)
	}
	if body != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+a.cfg.AccessToken)
	res, err := hc.Do(req)
	if err != nil {
		return a.transportError(op, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return &adapters.TemporaryError{Err: fmt.Errorf("whatsapp: %s: reading the answer: %s", op, a.red.Redact(err.Error()))}
	}
	if res.StatusCode/100 != 2 {
		return a.classify(op, res, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("whatsapp: %s: unreadable answer: %w", op, err)
	}
	return nil
}

// transportError is a request that got no answer: worth retrying. The
// URL is left out (it holds nothing secret, but the error text is
// redacted all the same).
func (a *Adapter) transportError(op string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &adapters.TemporaryError{Err: fmt.Errorf("whatsapp: %s: %s", op, a.red.Redact(err.Error()))}
}

// classify maps an error answer onto the adapters' error types.
func (a *Adapter) classify(op string, res *http.Response, raw []byte) error {
	var env struct {
		Error *GraphError `json:"error"`
	}
	ge := &GraphError{Message: strings.TrimSpace(string(raw))}
	if json.Unmarshal(raw, &env) == nil && env.Error != nil {
		ge = env.Error
	}
	if len(ge.Message) > 300 {
		ge.Message = ge.Message[:300] + "…"
	}
	ge.Message = a.red.Redact(ge.Message)
	ge.Data.Details = a.red.Redact(ge.Data.Details)
	ge.Status = res.StatusCode
	e := fmt.Errorf("whatsapp: %s: %w", op, ge)
	switch {
	case res.StatusCode == http.StatusTooManyRequests || ge.Code == codeAppRateLimit || ge.Code == codeWABARateLimit ||
		ge.Code == codeThroughput || ge.Code == codePairRateLimit:
		after := defaultRetryAfter
		if ge.Code == codePairRateLimit {
			after = pairRateLimitAfter
		}
		if s, err := strconv.Atoi(strings.TrimSpace(res.Header.Get("Retry-After"))); err == nil && s > 0 {
			after = time.Duration(s) * time.Second
		}
		return &adapters.RetryAfterError{After: after, Err: e}
	case res.StatusCode == http.StatusUnauthorized || ge.Code == codeTokenInvalid:
		return &adapters.FatalError{Msg: fmt.Sprintf("whatsapp: the Graph API refused the access token (HTTP %d): check WHATSAPP_ACCESS_TOKEN (and platforms.whatsapp.api_base)", res.StatusCode), Err: e}
	case res.StatusCode >= 500:
		return &adapters.TemporaryError{Err: e}
	}
	return e
}

// wireMessage is the body of POST /{phone-number-id}/messages.
type wireMessage struct {
	Product       string           `json:"messaging_product"`
	RecipientType string           `json:"recipient_type,omitempty"`
	To            string           `json:"to"`
	Type          string           `json:"type"`
	Context       *wireContext     `json:"context,omitempty"`
	Text          *wireText        `json:"text,omitempty"`
	Interactive   *wireInteractive `json:"interactive,omitempty"`
	Image         *wireMedia       `json:"image,omitempty"`
	Audio         *wireMedia       `json:"audio,omitempty"`
	Video         *wireMedia       `json:"video,omitempty"`
	Document      *wireMedia       `json:"document,omitempty"`
}

type wireContext struct {
	MessageID string `json:"message_id"`
}

type wireText struct {
	PreviewURL bool   `json:"preview_url"`
	Body       string `json:"body"`
}

type wireMedia struct {
	ID       string `json:"id"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// sentAnswer is the answer to a send.
type sentAnswer struct {
	Messages []struct {
		ID string `json:"id"`
	} `json:"messages"`
}

// Send implements adapters.Adapter.
func (a *Adapter) Send(ctx context.Context, to herald.Target, m adapters.Outgoing) (adapters.Sent, error) {
	chat, err := a.recipient(to)
	if err != nil {
		return adapters.Sent{}, err
	}
	text := m.Text
	if !m.Plain {
		text = toWhatsApp(text)
	}
	msg := wireMessage{Type: "text", Text: &wireText{Body: text}}
	if len(m.Buttons) > 0 {
		msg = interactive(text, m.Buttons)
	}
	if m.ReplyTo != "" {
		msg.Context = &wireContext{MessageID: m.ReplyTo}
	}
	return a.post(ctx, chat, msg)
}

// recipient is the wa_id a target names: digits only (a "+" and the
// spaces or dashes of a written phone number are dropped).
func (a *Adapter) recipient(to herald.Target) (string, error) {
	chat := to.ChatID
	if chat == "" {
		chat = a.cfg.HomeChannel
	}
	id := strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9':
			return r
		case r == '+' || r == ' ' || r == '-' || r == '(' || r == ')' || r == '.':
			return -1
		}
		return 'x'
	}, chat)
	if id == "" || strings.Contains(id, "x") {
		return "", fmt.Errorf("whatsapp: %q is not a WhatsApp number (a wa_id: the phone number with its country code, digits only)", chat)
	}
	return id, nil
}

// post sends one message to chat, inside its customer-service window.
func (a *Adapter) post(ctx context.Context, chat string, msg wireMessage) (adapters.Sent, error) {
	if open, last := a.windows.open(ctx, chat); !open {
		return adapters.Sent{}, &WindowError{To: chat, Last: last}
	}
	msg.Product, msg.RecipientType, msg.To = "whatsapp", "individual", chat
	body, err := json.Marshal(msg)
	if err != nil {
		return adapters.Sent{}, fmt.Errorf("whatsapp: send to %s: %w", chat, err)
	}
	var out sentAnswer
	if err := a.graph(ctx, a.http, http.MethodPost, "/"+url.PathEscape(a.cfg.PhoneNumberID)+"/messages", body, "", &out); err != nil {
		var ge *GraphError
		if errors.As(err, &ge) && ge.Code == codeReEngagement {
			_, last := a.windows.open(ctx, chat)
			return adapters.Sent{}, &WindowError{To: chat, Last: last, Err: err}
		}
		return adapters.Sent{}, err
	}
	if len(out.Messages) == 0 {
		return adapters.Sent{}, nil
	}
	return adapters.Sent{MessageID: out.Messages[0].ID}, nil
}
