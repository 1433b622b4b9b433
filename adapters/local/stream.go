package local

// stream.go: the local platform edits what it sent (adapters.Editor), so
// the gateway streams replies here as it does to Telegram: the first
// words are sent as a message, which is then edited as the model writes
// (at most once per the gateway's stream interval) and ends as the final
// reply. Each edit replaces the message's text in the outbox (the final
// text is what it keeps, edited_at set), in what a waiting POST
// /v1/messages has collected (so it answers with the final reply, once),
// and is published as "message_update". A client that only polls the
// outbox reads each message once, as it was when read: a streamed reply
// may be cut short there; its final text is in the POST's answer, in
// the last "message_update", and in the outbox when read again.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/heraldgw/herald"
)

// Edit implements adapters.Editor: messageID (an id Send returned) gets
// text as its whole text.
func (a *Adapter) Edit(ctx context.Context, to herald.Target, messageID, text string) error {
	return a.edit(ctx, to, messageID, text, "edit")
}

// edit gives a sent message text and no buttons (a streamed reply that
// grew, a closed approval prompt): in the outbox, in the replies a
// request still waits with, and as a "message_update" event. what names
// the operation in errors.
func (a *Adapter) edit(ctx context.Context, to herald.Target, messageID, text, what string) error {
	if a.cfg.Outbox != nil {
		id, err := strconv.ParseInt(messageID, 10, 64)
		if err != nil {
			return fmt.Errorf("local: %s message %q: not an outbox id", what, messageID)
		}
		if err := a.cfg.Outbox.EditOutbox(context.WithoutCancel(ctx), string(herald.PlatformLocal), to.ChatID, id, text, "", time.Now()); err != nil {
			return fmt.Errorf("local: %s message %s in chat %q: %w", what, messageID, to.ChatID, err)
		}
		a.wakeReaders(to.ChatID)
	}
	a.replies.Revise(to.ChatID, func(r Reply) (Reply, bool) {
		if r.sent != messageID {
			return r, false
		}
		r.Text, r.Buttons = text, nil
		return r, true
	})
	a.hub.publish("message_update", struct {
		ChatID  string   `json:"chat_id"`
		ID      string   `json:"id"`
		Text    string   `json:"text"`
		Buttons []Button `json:"buttons"`
	}{to.ChatID, messageID, text, []Button{}})
	return nil
}
