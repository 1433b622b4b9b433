package telegram

// buttons.go: buttons under a message as an inline keyboard (one row, the
// button's Data as callback_data), CloseButtons as an editMessageText
// with an empty keyboard, and callback_query updates — a press — handed
// to the sink's Press and always answered with answerCallbackQuery, so
// the presser's client stops its spinner.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

var _ adapters.ButtonSender = (*Adapter)(nil)

// allowedUpdates are the update kinds herald asks Telegram for
// (getUpdates and setWebhook): messages, channel posts, and button
// presses.
var allowedUpdates = []string{"message", "channel_post", "callback_query"}

// NoPressText answers a press when the sink takes no presses.
const NoPressText = "This button no longer works."

// maxAnswerText is the longest text answerCallbackQuery shows.
const maxAnswerText = 200

// keyboard is the reply_markup of buttons: one row of callback buttons.
// Telegram draws every button alike, so Style is not used.
func keyboard(buttons []adapters.Button) string {
	row := make([]tgbotapi.InlineKeyboardButton, 0, len(buttons))
	for _, b := range buttons {
		row = append(row, tgbotapi.NewInlineKeyboardButtonData(b.Label, b.Data))
	}
	return markupJSON(tgbotapi.NewInlineKeyboardMarkup(row))
}

// noKeyboard is the reply_markup that removes a message's buttons.
var noKeyboard = markupJSON(tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{}})

func markupJSON(m tgbotapi.InlineKeyboardMarkup) string {
	b, _ := json.Marshal(m) // plain strings: cannot fail
	return string(b)
}

// CloseButtons implements adapters.ButtonSender: the message's text
// becomes text and its inline keyboard goes.
func (a *Adapter) CloseButtons(ctx context.Context, to herald.Target, messageID, text string) error {
	return a.edit(ctx, to, messageID, text, noKeyboard)
}

// rawCallback is what a callback_query carries that the library's types
// lack (the forum topic of the message).
type rawCallback struct {
	CallbackQuery *struct {
		Message *rawFields `json:"message"`
	} `json:"callback_query"`
}

// pressOf reads a callback_query update: the query's id and the press.
// ok is false when the update is no callback query; hasChat is false for
// a query with no message to say where it was (an inline-mode message).
func pressOf(raw []byte) (queryID string, p adapters.Press, hasChat, ok bool) {
	var upd tgbotapi.Update
	if json.Unmarshal(raw, &upd) != nil || upd.CallbackQuery == nil {
		return "", p, false, false
	}
	q := upd.CallbackQuery
	p.Data = q.Data
	if q.From != nil {
		p.UserID = strconv.FormatInt(q.From.ID, 10)
		p.UserName = userName(q.From)
	}
	if q.Message == nil || q.Message.Chat == nil {
		return q.ID, p, false, true
	}
	var extra rawCallback
	json.Unmarshal(raw, &extra)
	p.Chat = herald.Target{Platform: herald.PlatformTelegram, ChatID: strconv.FormatInt(q.Message.Chat.ID, 10)}
	p.ChatType = chatType(q.Message.Chat.Type)
	p.MessageID = strconv.Itoa(q.Message.MessageID)
	if cq := extra.CallbackQuery; cq != nil && cq.Message != nil {
		// the same rule as for messages: only a forum topic is a thread
		if ff := cq.Message; ff.ThreadID != 0 && (ff.IsTopic || ff.Chat.IsForum) {
			p.Chat.ThreadID = strconv.Itoa(ff.ThreadID)
		}
	}
	return q.ID, p, true, true
}

// handlePress hands a callback_query update to the sink's Press, when the
// sink takes presses, and answers the query with what Press returned. It
// reports whether raw was a callback query.
func (a *Adapter) handlePress(ctx context.Context, sink adapters.Sink, raw []byte) bool {
	id, p, hasChat, ok := pressOf(raw)
	if !ok {
		return false
	}
	reply := NoPressText
	if ps, takes := sink.(adapters.PressSink); takes && hasChat {
		reply = ps.Press(ctx, p)
	}
	if err := a.answerPress(ctx, id, reply); err != nil {
		a.log.Warn("telegram: answerCallbackQuery failed", "err", err)
	}
	return true
}

// answerPress answers callback query id, showing text ("" shows nothing).
func (a *Adapter) answerPress(ctx context.Context, id, text string) error {
	if id == "" {
		return fmt.Errorf("telegram: answerCallbackQuery: the callback query has no id")
	}
	p := tgbotapi.Params{}
	p["callback_query_id"] = id
	if r := []rune(text); len(r) > maxAnswerText {
		text = string(r[:maxAnswerText-1]) + "…"
	}
	p.AddNonEmpty("text", text)
	if _, err := a.bot(ctx).MakeRequest("answerCallbackQuery", p); err != nil {
		return a.classify("answerCallbackQuery", err)
	}
	return nil
}
