package local

// outbox.go: every message the gateway sends to a local chat is stored
// (Config.Outbox, state.db) before Send reports it sent, and is read back
// with GET /v1/chats/{chat_id}/messages: a reply that comes after its
// request gave up, a reply to a queued message, a cron job's or BOOT.md's
// report all reach the client. Each stored message is also a "message"
// event on /v1/events.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/sessions"
)

// Outbox keeps what the gateway sends to each chat (sessions.Store).
type Outbox interface {
	AppendOutbox(ctx context.Context, m sessions.OutboxMessage) (sessions.OutboxMessage, error)
	OutboxAfter(ctx context.Context, platform, chatID string, after int64) ([]sessions.OutboxMessage, error)
	// EditOutbox replaces a kept message's text and buttons (a closed
	// approval prompt).
	EditOutbox(ctx context.Context, platform, chatID string, id int64, text, buttons string, at time.Time) error
}

// MaxMessagesWait bounds GET /v1/chats/{chat_id}/messages?wait=.
const MaxMessagesWait = 60 * time.Second

// OutboxMessage is one message of GET /v1/chats/{chat_id}/messages.
type OutboxMessage struct {
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	File      *FileRef  `json:"file,omitempty"`
	Buttons   []Button  `json:"buttons,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// EditedAt is when the message was last edited (a closed approval
	// prompt); absent if never.
	EditedAt *time.Time `json:"edited_at,omitempty"`
}

// keep stores rp as sent to chat to and returns its id, then wakes the
// chat's waiting readers and publishes a "message" event. With no
// Outbox configured nothing is kept and the id is "".
func (a *Adapter) keep(ctx context.Context, to herald.Target, rp Reply) (string, error) {
	if a.cfg.Outbox == nil {
		return "", nil
	}
	var file []byte
	if rp.File != nil {
		file, _ = json.Marshal(rp.File)
	}
	m, err := a.cfg.Outbox.AppendOutbox(context.WithoutCancel(ctx), sessions.OutboxMessage{
		Platform: string(herald.PlatformLocal), ChatID: to.ChatID, Text: rp.Text, File: string(file), Buttons: buttonsColumn(rp.Buttons), CreatedAt: time.Now(),
	})
	if err != nil {
		return "", fmt.Errorf("local: keep the message to chat %q: %w", to.ChatID, err)
	}
	id := strconv.FormatInt(m.ID, 10)
	a.wakeReaders(to.ChatID)
	a.hub.publish("message", messageEvent{ChatID: to.ChatID, ID: id, Text: rp.Text, Buttons: rp.Buttons, File: rp.File})
	return id, nil
}

// changed returns a channel closed when the next message to chat is
// stored.
func (a *Adapter) changed(chat string) <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	ch := a.readers[chat]
	if ch == nil {
		ch = make(chan struct{})
		a.readers[chat] = ch
	}
	return ch
}

func (a *Adapter) wakeReaders(chat string) {
	a.mu.Lock()
	ch := a.readers[chat]
	delete(a.readers, chat)
	a.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// getMessages is GET /v1/chats/{chat_id}/messages?after=<id>&wait=<s>:
// the messages to the chat after id, oldest first; with wait, it holds
// until there is one or wait passes.
func (a *Adapter) getMessages(w http.ResponseWriter, r *http.Request) {
	chat := r.PathValue("chat_id")
	if len(chat) > MaxIDLength {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("chat_id is %d bytes long; at most %d are allowed", len(chat), MaxIDLength))
		return
	}
	if a.cfg.Outbox == nil {
		writeErr(w, http.StatusNotFound, "the outbox is not available")
		return
	}
	q := r.URL.Query()
	var after int64
	if s := q.Get("after"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			writeErr(w, http.StatusBadRequest, fmt.Sprintf("after=%q is not a message id (use the id of a message this endpoint returned)", s))
			return
		}
		after = n
	}
	var wait time.Duration
	if s := q.Get("wait"); s != "" {
		d, err := parseWait(s)
		if err != nil {
			writeErr(w, http.StatusBadRequest, err.Error())
			return
		}
		wait = min(d, MaxMessagesWait)
	}
	if wait > 0 {
		// a long poll outlives the listener's whole-request read deadline
		http.NewResponseController(w).SetReadDeadline(time.Time{})
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		// taken before reading, so a message stored in between wakes us
		changed := a.changed(chat)
		msgs, err := a.cfg.Outbox.OutboxAfter(r.Context(), string(herald.PlatformLocal), chat, after)
		if err != nil {
			a.log.Error("reading the outbox", "chat", chat, "err", err)
			writeErr(w, http.StatusInternalServerError, "the outbox cannot be read: "+err.Error())
			return
		}
		if len(msgs) > 0 || wait == 0 {
			adapters.WriteJSON(w, http.StatusOK, map[string][]OutboxMessage{"messages": toWire(msgs)})
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			wait = 0
		case <-r.Context().Done():
			return
		}
	}
}

func toWire(msgs []sessions.OutboxMessage) []OutboxMessage {
	out := make([]OutboxMessage, 0, len(msgs))
	for _, m := range msgs {
		om := OutboxMessage{ID: strconv.FormatInt(m.ID, 10), Text: m.Text, CreatedAt: m.CreatedAt.UTC()}
		if m.File != "" {
			var f FileRef
			if json.Unmarshal([]byte(m.File), &f) == nil {
				om.File = &f
			}
		}
		if m.Buttons != "" {
			json.Unmarshal([]byte(m.Buttons), &om.Buttons)
		}
		if !m.EditedAt.IsZero() {
			at := m.EditedAt.UTC()
			om.EditedAt = &at
		}
		out = append(out, om)
	}
	return out
}
