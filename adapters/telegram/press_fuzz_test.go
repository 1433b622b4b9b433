package telegram

import (
	"strconv"
	"testing"

	"github.com/heraldgw/herald"
)

// FuzzPressOf feeds raw updates to pressOf: it must not panic, and a
// press it reads names the chat by a number, its thread by a number or
// not at all, and the presser by a number or not at all.
func FuzzPressOf(f *testing.F) {
	f.Add([]byte(`{"update_id":1,"callback_query":{"id":"q1","from":{"id":7,"is_bot":false,"first_name":"B","username":"bob"},"message":{"message_id":5,"date":1,"chat":{"id":-100,"type":"supergroup","is_forum":true},"message_thread_id":3,"text":"x"},"chat_instance":"c","data":"ap:0123456789abcdef:once"}}`))
	f.Add([]byte(`{"update_id":2,"callback_query":{"id":"q2","from":{"id":7,"is_bot":false,"first_name":"B"},"inline_message_id":"im","chat_instance":"c","data":"x"}}`))
	f.Add([]byte(`{"update_id":3,"callback_query":{"id":"q3","message":{"message_id":5,"chat":null}}}`))
	f.Add([]byte(`{"update_id":4,"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"text":"hi"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		id, p, hasChat, ok := pressOf(raw)
		if !ok {
			if id != "" || hasChat {
				t.Fatalf("not a press, yet id %q chat %v", id, hasChat)
			}
			return
		}
		if p.UserID != "" {
			if _, err := strconv.ParseInt(p.UserID, 10, 64); err != nil {
				t.Fatalf("user id %q", p.UserID)
			}
		}
		if !hasChat {
			if p.Chat != (herald.Target{}) || p.MessageID != "" {
				t.Fatalf("no chat, yet %+v", p)
			}
			return
		}
		if p.Chat.Platform != herald.PlatformTelegram {
			t.Fatalf("platform %q", p.Chat.Platform)
		}
		if _, err := strconv.ParseInt(p.Chat.ChatID, 10, 64); err != nil {
			t.Fatalf("chat id %q", p.Chat.ChatID)
		}
		if p.Chat.ThreadID != "" {
			if n, err := strconv.Atoi(p.Chat.ThreadID); err != nil || n == 0 {
				t.Fatalf("thread id %q", p.Chat.ThreadID)
			}
		}
	})
}
