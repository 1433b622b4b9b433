package telegram

// send.go is the outbound side: sendMessage, editMessageText,
// sendChatAction, and the mapping of the library's errors onto the
// gateway's error types.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// ErrMarkup marks a refusal caused by the message's markup; the gateway
// resends such a message with Outgoing.Plain.
var ErrMarkup = errors.New("telegram refused the message's formatting")

// ErrThreadNotFound marks a refusal because the forum topic a message was
// aimed at is gone (deleted, or the chat is no longer a forum).
var ErrThreadNotFound = errors.New("telegram: the forum topic was not found")

// maxEditMemory bounds the identical-edit memory.
const maxEditMemory = 4096

// Send implements adapters.Adapter.
func (a *Adapter) Send(ctx context.Context, to herald.Target, out adapters.Outgoing) (adapters.Sent, error) {
	chat, err := a.chatFor(to)
	if err != nil {
		return adapters.Sent{}, err
	}
	var p tgbotapi.Params
	var resp *tgbotapi.APIResponse
	err = a.sendTo("sendMessage", chat, to.ThreadID, func(c, thread string) error {
		chat = c
		p = tgbotapi.Params{}
		addTarget(p, chat, thread, out.ReplyTo)
		addMarkup(p, "text", out.Text, out.Plain)
		if len(out.Buttons) > 0 {
			p["reply_markup"] = keyboard(out.Buttons)
		}
		var err error
		if resp, err = a.bot(ctx).MakeRequest("sendMessage", p); err != nil {
			return a.classify("sendMessage to "+chat, err)
		}
		return nil
	})
	if err != nil {
		return adapters.Sent{}, err
	}
	var m tgbotapi.Message
	if err := json.Unmarshal(resp.Result, &m); err != nil {
		// sent, but we cannot say which message it is; do not send twice
		a.log.Warn("telegram: sendMessage answer unreadable", "chat", chat, "err", err)
		return adapters.Sent{}, nil
	}
	id := strconv.Itoa(m.MessageID)
	a.remember(chat, id, p["text"])
	return adapters.Sent{MessageID: id}, nil
}

// chatFor is the chat a target names: its chat id, or the home channel.
func (a *Adapter) chatFor(to herald.Target) (string, error) {
	if to.ChatID != "" {
		return to.ChatID, nil
	}
	if a.cfg.HomeChannel == "" {
		return "", errors.New("telegram: send: no chat id and no home channel (set TELEGRAM_HOME_CHANNEL)")
	}
	return a.cfg.HomeChannel, nil
}

// sendTo runs send for chat (by the id it goes by now) and the target's
// forum topic, and once more where Telegram says the message belongs
// instead: into the supergroup a group became (remembered, so later sends
// go there at once), or into the chat itself when the topic is gone. An
// answer in the right place beats an answer lost.
func (a *Adapter) sendTo(op, chat, thread string, send func(chat, thread string) error) error {
	chat = a.current(chat)
	err := send(chat, thread)
	var moved *movedError
	switch {
	case errors.As(err, &moved):
		a.log.Warn("telegram: the group is now a supergroup; sending there", "op", op, "chat", chat, "supergroup", moved.to)
		a.setMoved(chat, moved.to)
		return send(moved.to, thread)
	case thread != "" && errors.Is(err, ErrThreadNotFound):
		a.log.Warn("telegram: forum topic not found; sending to the chat without it", "op", op, "chat", chat, "thread", thread)
		return send(chat, "")
	}
	return err
}

// movedError is a refusal because the group became supergroup to.
type movedError struct {
	to  string
	err error
}

func (e *movedError) Error() string { return e.err.Error() }
func (e *movedError) Unwrap() error { return e.err }

// addTarget sets the chat, the forum topic and the message replied to.
func addTarget(p tgbotapi.Params, chat, thread, replyTo string) {
	p["chat_id"] = chat
	p.AddNonEmpty("message_thread_id", thread)
	if replyTo != "" {
		p["reply_to_message_id"] = replyTo
		p.AddBool("allow_sending_without_reply", true)
	}
}

// addMarkup sets key (text, caption) from the model's Markdown as
// Telegram HTML with parse_mode, or as it is when plain.
func addMarkup(p tgbotapi.Params, key, text string, plain bool) {
	if plain {
		p[key] = text
		return
	}
	p[key] = toHTML(text)
	p["parse_mode"] = tgbotapi.ModeHTML
}

// Edit implements adapters.Editor. An edit to the text the message already
// has is skipped; one Telegram refuses for its markup is retried once as
// plain text (an edit has no Plain flag the gateway could set).
func (a *Adapter) Edit(ctx context.Context, to herald.Target, messageID, text string) error {
	return a.edit(ctx, to, messageID, text, "")
}

// edit is editMessageText, with replyMarkup when set (then never skipped:
// the markup changes even when the text does not).
func (a *Adapter) edit(ctx context.Context, to herald.Target, messageID, text, replyMarkup string) error {
	chat := to.ChatID
	if chat == "" {
		chat = a.cfg.HomeChannel
	}
	// a message sent since its group became a supergroup is there
	chat = a.current(chat)
	for _, plain := range []bool{false, true} {
		p := tgbotapi.Params{}
		p["chat_id"] = chat
		p["message_id"] = messageID
		addMarkup(p, "text", text, plain)
		p.AddNonEmpty("reply_markup", replyMarkup)
		if replyMarkup == "" && a.same(chat, messageID, p["text"]) {
			return nil
		}
		_, err := a.bot(ctx).MakeRequest("editMessageText", p)
		if err == nil {
			a.remember(chat, messageID, p["text"])
			return nil
		}
		var te *tgbotapi.Error
		if errors.As(err, &te) && strings.Contains(te.Message, "message is not modified") {
			a.remember(chat, messageID, p["text"])
			return nil
		}
		err = a.classify("editMessageText in "+chat, err)
		if plain || !errors.Is(err, ErrMarkup) {
			return err
		}
	}
	return nil
}

func (a *Adapter) remember(chat, id, text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.edits) >= maxEditMemory {
		clear(a.edits)
	}
	a.edits[chat+"\x00"+id] = text
}

func (a *Adapter) same(chat, id, text string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	old, ok := a.edits[chat+"\x00"+id]
	return ok && old == text
}

// Typing implements adapters.Typer (Telegram shows it for about 5 s).
func (a *Adapter) Typing(ctx context.Context, to herald.Target) error {
	a.rx.Typing(ctx, to)
	chat := to.ChatID
	if chat == "" {
		chat = a.cfg.HomeChannel
	}
	return a.sendTo("sendChatAction", chat, to.ThreadID, func(chat, thread string) error {
		p := tgbotapi.Params{}
		p["chat_id"] = chat
		p["action"] = tgbotapi.ChatTyping
		p.AddNonEmpty("message_thread_id", thread)
		if _, err := a.bot(ctx).MakeRequest("sendChatAction", p); err != nil {
			return a.classify("sendChatAction in "+chat, err)
		}
		return nil
	})
}

// classify maps a library error onto the gateway's error types, with the
// request URL (which holds the token) removed.
func (a *Adapter) classify(op string, err error) error {
	var te *tgbotapi.Error
	if errors.As(err, &te) {
		e := fmt.Errorf("telegram: %s: %s", op, a.red.Redact(te.Message))
		switch {
		case te.RetryAfter > 0 || te.Code == http.StatusTooManyRequests:
			after := time.Duration(te.RetryAfter) * time.Second
			if after <= 0 {
				after = time.Second
			}
			return &adapters.RetryAfterError{After: after, Err: e}
		case te.Code == http.StatusUnauthorized || te.Code == http.StatusNotFound:
			return &adapters.FatalError{Msg: fmt.Sprintf("telegram: the Bot API refused the bot token (HTTP %d): check TELEGRAM_BOT_TOKEN (and platforms.telegram.api_endpoint)", te.Code), Err: e}
		case te.Code >= 500:
			return &adapters.TemporaryError{Err: e}
		case te.MigrateToChatID != 0:
			to := strconv.FormatInt(te.MigrateToChatID, 10)
			return &movedError{to: to, err: fmt.Errorf("%w (the group is now supergroup %s)", e, to)}
		case te.Code == http.StatusBadRequest && strings.Contains(strings.ToLower(te.Message), "thread not found"):
			return fmt.Errorf("%w: %w", e, ErrThreadNotFound)
		case te.Code == http.StatusBadRequest && markupRefusal(te.Message):
			return fmt.Errorf("%w: %w", e, ErrMarkup)
		}
		return e
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		// ue.URL carries the token; keep only what went wrong
		return &adapters.TemporaryError{Err: fmt.Errorf("telegram: %s: %w", op, ue.Err)}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return &adapters.TemporaryError{Err: fmt.Errorf("telegram: %s: %s", op, a.red.Redact(err.Error()))}
	}
	// the answer was not a Bot API envelope (an HTML 502 from a proxy)
	return &adapters.TemporaryError{Err: fmt.Errorf("telegram: %s: unreadable answer: %s", op, a.red.Redact(err.Error()))}
}

func markupRefusal(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "can't parse entities") || strings.Contains(m, "can't find end") ||
		strings.Contains(m, "unsupported start tag") || strings.Contains(m, "entity") || strings.Contains(m, "parse")
}

// Pace is the Bot API's flood limit as Telegram documents it: about one
// message a second to a chat, twenty a minute to a group (a chat id below
// zero), and about thirty a second over all chats.
func (a *Adapter) Pace(to herald.Target) adapters.Pace {
	p := adapters.Pace{Every: time.Second, BotPerSecond: 30}
	if strings.HasPrefix(to.ChatID, "-") {
		p.PerMinute = 20
	}
	return p
}

// Delete implements adapters.Deleter with deleteMessage (a streamed
// preview the answer could not replace).
func (a *Adapter) Delete(ctx context.Context, to herald.Target, messageID string) error {
	chat := to.ChatID
	if chat == "" {
		chat = a.cfg.HomeChannel
	}
	p := tgbotapi.Params{}
	p["chat_id"] = chat
	p["message_id"] = messageID
	if _, err := a.bot(ctx).MakeRequest("deleteMessage", p); err != nil {
		return a.classify("deleteMessage in "+chat, err)
	}
	return nil
}
