package discord

// webhook.go routes the replies to a slash command through its
// interaction: the first reply replaces the deferred ("thinking…")
// original response, later ones are follow-ups, and edits (streaming,
// CloseButtons) and deletes of those messages go through the
// interaction's webhook while its token lives (15 minutes). After that,
// or once Discord refuses the token, replies are plain channel messages
// and edits use the channel endpoint.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald/adapters"
)

// An interaction's token works for 15 minutes; a reply is not started
// within the last tokenMargin of that, so it does not race the end.
const (
	tokenLife   = 15 * time.Minute
	tokenMargin = 30 * time.Second
)

// Texts left in a deferred response that no reply replaced.
const (
	// DoneText: the command's turn ended with nothing sent.
	DoneText = "Done."
	// RefusedText: the gateway did not take the command (shutting down).
	RefusedText = "herald could not take this command now; try again."
)

// interactionReply is a slash command's way back.
type interactionReply struct {
	mu           sync.Mutex // one reply or edit at a time per interaction
	appID, token string
	created      time.Time
	answered     bool // the original response no longer says "thinking…"
	dead         bool // Discord refused the token
}

// alive reports whether the token may still be used; r.mu held.
func (r *interactionReply) alive() bool {
	return !r.dead && time.Since(r.created) < tokenLife-tokenMargin
}

// hookedMessage is a message sent through an interaction's webhook.
type hookedMessage struct {
	reply *interactionReply
	ref   string // "@original" or the follow-up's id
}

// openReply keeps interaction i's token for the replies to the herald
// message with the interaction's id; replies older than the token's life
// are forgotten.
func (a *Adapter) openReply(i *discordgo.Interaction) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, r := range a.replies {
		if time.Since(r.created) > tokenLife {
			delete(a.replies, id)
		}
	}
	for id, h := range a.hooked {
		if time.Since(h.reply.created) > tokenLife {
			delete(a.hooked, id)
		}
	}
	a.replies[i.ID] = &interactionReply{appID: i.AppID, token: i.Token, created: time.Now()}
}

// isInteraction reports whether id is a slash command's (an interaction
// id, not a message's).
func (a *Adapter) isInteraction(id string) bool {
	if id == "" {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.replies[id]
	return ok
}

// sendReply sends out through the interaction that caused it, if there
// is one whose token still works: false means send it to the channel.
func (a *Adapter) sendReply(ctx context.Context, out adapters.Outgoing) (adapters.Sent, bool, error) {
	if out.Cause == "" {
		return adapters.Sent{}, false, nil
	}
	a.mu.Lock()
	r := a.replies[out.Cause]
	a.mu.Unlock()
	if r == nil {
		return adapters.Sent{}, false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.alive() {
		return adapters.Sent{}, false, nil
	}
	rows := buttonRows(out.Buttons)
	var m *discordgo.Message
	var err error
	ref := "@original"
	if !r.answered {
		edit := &discordgo.WebhookEdit{Content: &out.Text, AllowedMentions: noPings()}
		if rows != nil {
			edit.Components = &rows
		}
		m, err = a.rest.WebhookMessageEdit(r.appID, r.token, ref, edit, discordgo.WithContext(ctx))
	} else {
		m, err = a.rest.WebhookExecute(r.appID, r.token, true, &discordgo.WebhookParams{Content: out.Text, Components: rows, AllowedMentions: noPings()}, discordgo.WithContext(ctx))
		if m != nil {
			ref = m.ID
		}
	}
	if tokenRefused(err) {
		r.dead = true
		a.log.Info("discord: the slash command's token was refused; replying in the channel", "interaction", out.Cause)
		return adapters.Sent{}, false, nil
	}
	if err != nil {
		return adapters.Sent{}, true, a.interactionError(ctx, "reply to slash command "+out.Cause, err)
	}
	if m == nil || m.ID == "" {
		return adapters.Sent{}, true, errors.New("discord: reply to slash command " + out.Cause + ": Discord returned no message")
	}
	r.answered = true
	a.remember(m.ID, out.Text)
	a.mu.Lock()
	a.hooked[m.ID] = hookedMessage{reply: r, ref: ref}
	a.mu.Unlock()
	return adapters.Sent{MessageID: m.ID}, true, nil
}

// editHooked edits a message sent through an interaction's webhook while
// its token works; false means it is not such a message (or no longer
// editable that way) and the channel endpoint is the way.
func (a *Adapter) editHooked(ctx context.Context, messageID string, edit *discordgo.WebhookEdit) (bool, error) {
	return a.viaWebhook(ctx, "edit "+messageID, messageID, func(app, token, ref string) error {
		_, err := a.rest.WebhookMessageEdit(app, token, ref, edit, discordgo.WithContext(ctx))
		return err
	})
}

// deleteHooked is editHooked for a delete.
func (a *Adapter) deleteHooked(ctx context.Context, messageID string) (bool, error) {
	return a.viaWebhook(ctx, "delete "+messageID, messageID, func(app, token, ref string) error {
		return a.rest.WebhookMessageDelete(app, token, ref, discordgo.WithContext(ctx))
	})
}

// viaWebhook runs call with the webhook of the interaction messageID was
// sent through, if its token still works; false: not done, use the
// channel endpoint.
func (a *Adapter) viaWebhook(ctx context.Context, op, messageID string, call func(app, token, ref string) error) (bool, error) {
	a.mu.Lock()
	h, ok := a.hooked[messageID]
	a.mu.Unlock()
	if !ok {
		return false, nil
	}
	h.reply.mu.Lock()
	defer h.reply.mu.Unlock()
	if !h.reply.alive() {
		return false, nil
	}
	err := call(h.reply.appID, h.reply.token, h.ref)
	if tokenRefused(err) {
		h.reply.dead = true
		return false, nil
	}
	if err != nil {
		return true, a.interactionError(ctx, op, err)
	}
	return true, nil
}

// follow waits for the command's receipt and, when its turn ended with
// nothing sent, replaces "thinking…" with DoneText (or RefusedText), so
// no response is left thinking for good. A queued command or one waiting
// for an approval has replies still to come, and is left alone. The
// goroutine is Run's: the caller has counted it in a.watchers; it ends
// with ctx.
func (a *Adapter) follow(ctx context.Context, id string, rec *adapters.Receipt) {
	if rec == nil {
		a.watchers.Done()
		return
	}
	go func() {
		defer a.watchers.Done()
		select {
		case <-rec.Done():
		case <-ctx.Done():
			return
		}
		o := rec.Outcome()
		switch {
		case o.Status == adapters.StatusQueued, o.Status == adapters.StatusAwaitingInput:
		case adapters.Refused(rec):
			a.closeReply(ctx, id, RefusedText)
		default:
			a.closeReply(ctx, id, DoneText)
		}
	}()
}

// closeReply sets the original response to text unless a reply did.
func (a *Adapter) closeReply(ctx context.Context, id, text string) {
	a.mu.Lock()
	r := a.replies[id]
	a.mu.Unlock()
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answered || !r.alive() {
		return
	}
	if _, err := a.rest.WebhookMessageEdit(r.appID, r.token, "@original", &discordgo.WebhookEdit{Content: &text}, discordgo.WithContext(ctx)); err != nil {
		a.log.Debug("discord: could not close a slash command's response", "interaction", id, "err", a.interactionError(ctx, "close response", err))
		return
	}
	r.answered = true
}

// tokenRefused reports whether Discord refused an interaction's token
// (expired, or unknown): 401 Invalid Webhook Token, 404 Unknown Webhook.
func tokenRefused(err error) bool {
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response == nil {
		return false
	}
	return re.Response.StatusCode == http.StatusUnauthorized || re.Response.StatusCode == http.StatusNotFound
}

// interactionError classifies a failure of an interaction call: as
// classify, except that a 401 is the interaction's token, not the bot's.
func (a *Adapter) interactionError(ctx context.Context, op string, err error) error {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("discord: %s: %w", op, restError(op, re))
	}
	return classify(ctx, op, err)
}
