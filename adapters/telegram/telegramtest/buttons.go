package telegramtest

// buttons.go fakes inline keyboards: the reply_markup of sendMessage and
// editMessageText (checked and kept per message), a press of a button
// (PressButton queues the callback_query update Telegram sends), and
// answerCallbackQuery for the queries it made.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// InlineButton is one button of an inline keyboard.
type InlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
}

// maxCallbackData is Telegram's limit on callback_data, in bytes.
const maxCallbackData = 64

// parseKeyboard reads a reply_markup ("" is none); ok is false, with the
// failure Telegram answers, for a markup it refuses. An empty keyboard
// is none.
func parseKeyboard(raw string) (rows [][]InlineButton, fail Failure, ok bool) {
	if raw == "" {
		return nil, Failure{}, true
	}
	var m struct {
		InlineKeyboard *[][]InlineButton `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m.InlineKeyboard == nil {
		return nil, Failure{Code: 400, Description: "Bad Request: can't parse reply keyboard markup JSON object"}, false
	}
	for _, row := range *m.InlineKeyboard {
		for _, b := range row {
			if b.Text == "" {
				return nil, Failure{Code: 400, Description: "Bad Request: text buttons are unallowed in the inline keyboard"}, false
			}
			if b.CallbackData == "" || len(b.CallbackData) > maxCallbackData {
				return nil, Failure{Code: 400, Description: "Bad Request: BUTTON_DATA_INVALID"}, false
			}
		}
		if len(row) > 0 {
			rows = append(rows, row)
		}
	}
	return rows, Failure{}, true
}

// sameKeyboard reports whether two keyboards are alike.
func sameKeyboard(a, b [][]InlineButton) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Keyboard is the inline keyboard message id in chat shows now (nil when
// none: never had one, or an edit took it away).
func (s *Server) Keyboard(chat, id string) [][]InlineButton {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keyboards[chat+"\x00"+id]
}

// PressButton queues the callback_query update Telegram sends when from
// presses the button with data under message id in chat (the message's
// forum topic, if it was sent to one, comes along). It returns the query's
// id, which answerCallbackQuery must name.
func (s *Server) PressButton(chat, id string, from User, data string) string {
	qid, q := s.callbackQuery(chat, id, from, data)
	s.AddUpdate(map[string]any{"callback_query": q})
	return qid
}

// PressUpdate builds (without queueing) the update of PressButton, with
// update_id updateID, for posting to a webhook.
func (s *Server) PressUpdate(updateID int, chat, id string, from User, data string) (queryID string, update []byte) {
	qid, q := s.callbackQuery(chat, id, from, data)
	b, _ := json.Marshal(map[string]any{"update_id": updateID, "callback_query": q})
	return qid, b
}

func (s *Server) callbackQuery(chat, id string, from User, data string) (string, map[string]any) {
	s.mu.Lock()
	s.nextQuery++
	qid := "q" + strconv.Itoa(s.nextQuery)
	s.queries[qid] = false
	text := s.texts[chat+"\x00"+id]
	thread := ""
	for _, c := range s.calls {
		if c.Method == "sendMessage" && c.ChatID == chat && c.MessageID == id {
			thread = c.ThreadID
		}
	}
	s.notifyLocked()
	s.mu.Unlock()
	msg := messageJSON(chat, id, text, thread)
	msg["from"] = map[string]any{"id": s.opts.BotID, "is_bot": true, "first_name": "Herald Test", "username": s.opts.BotUsername}
	if thread != "" {
		msg["chat"].(map[string]any)["is_forum"] = true
	}
	return qid, map[string]any{"id": qid, "from": from.json(), "message": msg, "chat_instance": "ci-" + chat, "data": data}
}

// answerCallbackQuery records the answer to a query PressButton made; a
// query answered already, or never made, is refused as Telegram refuses
// an expired one.
func (s *Server) answerCallbackQuery(w http.ResponseWriter, r *http.Request) {
	f := r.Form
	qid := f.Get("callback_query_id")
	s.mu.Lock()
	answered, known := s.queries[qid]
	if known && !answered {
		s.queries[qid] = true
	}
	s.mu.Unlock()
	if !known || answered {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: query is too old and response timeout expired or query ID is invalid"})
		return
	}
	if n := len([]rune(f.Get("text"))); n > 200 {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: MESSAGE_TOO_LONG"})
		return
	}
	s.record(Call{Method: "answerCallbackQuery", CallbackQueryID: qid, Text: f.Get("text"), Form: f})
	writeOK(w, true)
}

// AllowedUpdates is the allowed_updates the last getUpdates asked for
// (nil when it named none: Telegram then keeps the last setting).
func (s *Server) AllowedUpdates() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var kinds []string
	json.Unmarshal([]byte(s.allowed), &kinds)
	return kinds
}

// allowedKinds reads getUpdates' allowed_updates (nil: every kind).
func allowedKinds(raw string) map[string]bool {
	var kinds []string
	if raw == "" || json.Unmarshal([]byte(raw), &kinds) != nil || len(kinds) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, k := range kinds {
		out[strings.TrimSpace(k)] = true
	}
	return out
}

// kindOf is an update's kind: its one key besides update_id.
func kindOf(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	for k := range m {
		if k != "update_id" {
			return k
		}
	}
	return ""
}
