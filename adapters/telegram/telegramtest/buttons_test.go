package telegramtest

import (
	"net/url"
	"strings"
	"testing"
)

// Telegram's checks on inline keyboards, edits that change only the
// keyboard, answers to callback queries, and allowed_updates.
func TestInlineKeyboards(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	tok := s.Token()
	kb := `{"inline_keyboard":[[{"text":"Yes","callback_data":"ap:t:once"}]]}`
	for _, tc := range []struct{ markup, desc string }{
		{`{"inline_keyboard":[[{"text":"Yes","callback_data":"` + strings.Repeat("x", 65) + `"}]]}`, "BUTTON_DATA_INVALID"},
		{`{"inline_keyboard":[[{"text":"","callback_data":"x"}]]}`, "text buttons are unallowed"},
		{`[1]`, "can't parse reply keyboard markup"},
	} {
		if code, body := call(t, s, tok, "sendMessage", url.Values{"chat_id": {"1"}, "text": {"x"}, "reply_markup": {tc.markup}}); code != 400 || !strings.Contains(body["description"].(string), tc.desc) {
			t.Errorf("%s: %d %v", tc.markup, code, body)
		}
	}
	code, body := call(t, s, tok, "sendMessage", url.Values{"chat_id": {"1"}, "text": {"pick"}, "reply_markup": {kb}})
	if code != 200 {
		t.Fatalf("send: %v", body)
	}
	id := "101"
	if k := s.Keyboard("1", id); len(k) != 1 || k[0][0].CallbackData != "ap:t:once" {
		t.Fatalf("keyboard %+v", k)
	}
	// same text, keyboard gone: a change; then the same again: not modified
	empty := url.Values{"chat_id": {"1"}, "message_id": {id}, "text": {"pick"}, "reply_markup": {`{"inline_keyboard":[]}`}}
	if code, body := call(t, s, tok, "editMessageText", empty); code != 200 || s.Keyboard("1", id) != nil {
		t.Fatalf("edit: %d %v", code, body)
	}
	if code, body := call(t, s, tok, "editMessageText", empty); code != 400 || !strings.Contains(body["description"].(string), "not modified") {
		t.Fatalf("second edit: %d %v", code, body)
	}

	qid := s.PressButton("1", id, User{ID: 1, UserName: "a"}, "ap:t:once")
	s.DM(1, "a", "hello")
	// asked for messages only, the press is not sent
	_, body = call(t, s, tok, "getUpdates", url.Values{"allowed_updates": {`["message"]`}})
	if res := body["result"].([]any); len(res) != 1 || res[0].(map[string]any)["message"] == nil {
		t.Fatalf("getUpdates = %v", res)
	}
	if got := s.AllowedUpdates(); len(got) != 1 || got[0] != "message" {
		t.Fatalf("AllowedUpdates = %q", got)
	}
	_, body = call(t, s, tok, "getUpdates", url.Values{"allowed_updates": {`["message","callback_query"]`}})
	if res := body["result"].([]any); len(res) != 2 || res[0].(map[string]any)["callback_query"] == nil {
		t.Fatalf("getUpdates = %v", res)
	}
	for i, want := range []int{200, 400} { // a query is answered once
		if code, _ := call(t, s, tok, "answerCallbackQuery", url.Values{"callback_query_id": {qid}, "text": {"ok"}}); code != want {
			t.Errorf("answer %d: %d, want %d", i, code, want)
		}
	}
	if code, _ := call(t, s, tok, "answerCallbackQuery", url.Values{"callback_query_id": {"nope"}}); code != 400 {
		t.Errorf("unknown query answered %d", code)
	}
	if calls := s.Calls("answerCallbackQuery"); len(calls) != 1 || calls[0].CallbackQueryID != qid || calls[0].Text != "ok" {
		t.Errorf("answers %+v", calls)
	}
}
