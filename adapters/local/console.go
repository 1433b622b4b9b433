package local

// console.go: what the web console needs of the local platform beyond
// the plain API. An EventSource cannot send the bearer header, so POST
// /v1/events/ticket trades the token for a ticket that opens one
// /v1/events stream within TicketTTL (and nothing else), and the token
// never goes into a URL; it also names the events beyond the catalogue
// (plugins' commands) that an EventSource must listen to by name. Approval prompts keep their buttons
// (adapters.ButtonSender): they are in the replies, the outbox and the
// "message" event, a press comes back as POST /v1/chats/{chat_id}/press
// and goes to the gateway (adapters.PressSink), and a closed prompt is
// edited in the outbox and published as "message_update".

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// TicketTTL is how long an events ticket may wait for its connection.
const TicketTTL = 60 * time.Second

// tickets are the events tickets issued and not used yet.
type tickets struct {
	mu     sync.Mutex
	issued map[string]time.Time // ticket → expiry
}

// issue returns a fresh ticket good until now+TicketTTL; expired ones
// are dropped on the way.
func (t *tickets) issue() string {
	tk := rand.Text() // 26 base32 characters: 130 random bits
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.issued == nil {
		t.issued = map[string]time.Time{}
	}
	for k, exp := range t.issued {
		if !now.Before(exp) {
			delete(t.issued, k)
		}
	}
	t.issued[tk] = now.Add(TicketTTL)
	return tk
}

// redeem uses up a ticket: it reports whether tk was issued, unused and
// not expired.
func (t *tickets) redeem(tk string) bool {
	if tk == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, exp := range t.issued {
		if subtle.ConstantTimeCompare([]byte(k), []byte(tk)) == 1 {
			delete(t.issued, k)
			return time.Now().Before(exp)
		}
	}
	return false
}

// issueTicket is POST /v1/events/ticket. With the ticket come the
// names of the events beyond the catalogue's that the stream may carry
// (Config.EventNames), for an EventSource to listen to.
func (a *Adapter) issueTicket(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	names := []string{}
	if a.cfg.EventNames != nil {
		names = append(names, a.cfg.EventNames()...)
	}
	adapters.WriteJSON(w, http.StatusOK, struct {
		Ticket    string   `json:"ticket"`
		ExpiresIn int      `json:"expires_in"`
		Events    []string `json:"events"`
	}{a.tickets.issue(), int(TicketTTL / time.Second), names})
}

// authOrTicket lets through a request with the bearer token, or one with
// a ?ticket= that was issued, unused and fresh.
func (a *Adapter) authOrTicket(next http.HandlerFunc) http.HandlerFunc {
	withToken := a.auth(next)
	return func(w http.ResponseWriter, r *http.Request) {
		if tk := r.URL.Query().Get("ticket"); tk != "" && r.Header.Get("Authorization") == "" {
			if !a.tickets.redeem(tk) {
				writeErr(w, http.StatusUnauthorized, "the events ticket is unknown, used or expired (POST /v1/events/ticket for a fresh one)")
				return
			}
			next(w, r)
			return
		}
		withToken(w, r)
	}
}

// Button is one choice under a message, as the API shows it.
type Button struct {
	Label string `json:"label"`
	Data  string `json:"data"`
	Style string `json:"style"`
}

func wireButtons(bs []adapters.Button) []Button {
	if len(bs) == 0 {
		return nil
	}
	out := make([]Button, len(bs))
	for i, b := range bs {
		out[i] = Button{Label: b.Label, Data: b.Data, Style: b.Style}
	}
	return out
}

// buttonsColumn is how the outbox keeps a message's buttons ("" for none).
func buttonsColumn(bs []Button) string {
	if len(bs) == 0 {
		return ""
	}
	b, _ := json.Marshal(bs)
	return string(b)
}

// messageEvent is the context of a "message" event, and (Buttons then
// never nil) of a "message_update" one.
type messageEvent struct {
	ChatID  string   `json:"chat_id"`
	ID      string   `json:"id"`
	Text    string   `json:"text"`
	Buttons []Button `json:"buttons,omitempty"`
	File    *FileRef `json:"file,omitempty"`
}

// CloseButtons implements adapters.ButtonSender: the kept message gets
// text and loses its buttons, and a "message_update" event says so.
func (a *Adapter) CloseButtons(ctx context.Context, to herald.Target, messageID, text string) error {
	return a.edit(ctx, to, messageID, text, "close the buttons of")
}

// pressRequest is the body of POST /v1/chats/{chat_id}/press.
type pressRequest struct {
	MessageID string `json:"message_id"`
	Data      string `json:"data"`
	UserID    string `json:"user_id"`
	UserName  string `json:"user_name"`
	// ThreadID is the thread the message is in, if any.
	ThreadID string `json:"thread_id"`
}

// decodePress reads a press body: one JSON object with message_id, data
// and user_id, ids of at most MaxIDLength bytes.
func decodePress(body []byte) (pressRequest, error) {
	var in pressRequest
	if err := decodeOne(body, &in); err != nil {
		return in, err
	}
	for _, f := range []struct{ name, v string }{{"message_id", in.MessageID}, {"data", in.Data}, {"user_id", in.UserID}} {
		if f.v == "" {
			return in, fmt.Errorf("%q is required", f.name)
		}
	}
	for _, f := range []struct{ name, v string }{{"message_id", in.MessageID}, {"user_id", in.UserID}, {"thread_id", in.ThreadID}, {"user_name", in.UserName}} {
		if len(f.v) > MaxIDLength {
			return in, fmt.Errorf("%q is %d bytes long; at most %d are allowed", f.name, len(f.v), MaxIDLength)
		}
	}
	if len(in.Data) > adapters.MaxButtonData {
		return in, fmt.Errorf(`"data" is %d bytes long; a button's data is at most %d`, len(in.Data), adapters.MaxButtonData)
	}
	return in, nil
}

// press is POST /v1/chats/{chat_id}/press: a press of a button under a
// message of the chat, passed to the gateway, which decides.
func (a *Adapter) press(w http.ResponseWriter, r *http.Request, sink adapters.Sink) {
	chat := r.PathValue("chat_id")
	if len(chat) > MaxIDLength {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("chat_id is %d bytes long; at most %d are allowed", len(chat), MaxIDLength))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<16))
	if err != nil {
		writeErr(w, http.StatusRequestEntityTooLarge, "press body is over 64 KiB")
		return
	}
	in, err := decodePress(body)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	reply := UnknownButtonText
	if ps, ok := sink.(adapters.PressSink); ok {
		reply = ps.Press(r.Context(), adapters.Press{
			Chat:      herald.Target{Platform: herald.PlatformLocal, ChatID: chat, ThreadID: in.ThreadID},
			MessageID: in.MessageID, UserID: in.UserID, UserName: in.UserName, Data: in.Data,
		})
	}
	adapters.WriteJSON(w, http.StatusOK, map[string]string{"reply": reply})
}

// UnknownButtonText answers a press when the gateway takes none.
const UnknownButtonText = "This button no longer works."
