package teams

import (
	"testing"
	"unicode/utf8"

	"github.com/heraldgw/herald/adapters"
)

// FuzzDecodeActivity: whatever JSON arrives (after the token check),
// decoding and translating it never panics, and what it yields holds
// herald's invariants: a message has valid UTF-8 text that is not empty
// and a sender; a press's data fits a button.
func FuzzDecodeActivity(f *testing.F) {
	f.Add([]byte(`{"type":"message","id":"1","serviceUrl":"https://smba.trafficmanager.net/amer/","channelId":"msteams","from":{"id":"29:a","aadObjectId":"aad"},"conversation":{"id":"a:1","conversationType":"personal"},"recipient":{"id":"28:app"},"text":"hi"}`))
	f.Add([]byte(`{"type":"message","id":"2","serviceUrl":"https://x/","from":{"id":"29:a"},"conversation":{"id":"19:c@thread.tacv2;messageid=2","conversationType":"channel"},"recipient":{"id":"28:app"},"text":"<at>bot</at> hi","entities":[{"type":"mention","text":"<at>bot</at>","mentioned":{"id":"28:app"}}]}`))
	f.Add([]byte(`{"type":"message","id":"3","serviceUrl":"https://x/","from":{"id":"29:a"},"conversation":{"id":"a:1"},"replyToId":"9","value":{"herald_button":"a:1:once"}}`))
	f.Add([]byte(`{"type":"invoke","name":"adaptiveCard/action","id":"4","serviceUrl":"https://x/","from":{"id":"29:a"},"conversation":{"id":"a:1"},"value":{"action":{"type":"Action.Execute","data":{"herald_button":"x"}}}}`))
	f.Add([]byte(`{"type":"conversationUpdate","membersAdded":[{"id":"28:app"}]}`))
	f.Add([]byte(`{"type":"message","conversation":null,"from":{}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		act, err := decodeActivity(body)
		if err != nil {
			return
		}
		if act.Type != typeMessage && act.Type != typeInvoke {
			return
		}
		if p, ok := act.press(); ok {
			if len(p.Data) > adapters.MaxButtonData || p.UserID == "" || p.Chat.ChatID == "" {
				t.Fatalf("press %+v", p)
			}
		}
		m, ok := act.message("app")
		if !ok {
			return
		}
		if m.Text == "" || !utf8.ValidString(m.Text) || m.Source.UserID == "" || m.Source.Platform != Platform {
			t.Fatalf("message %+v", m)
		}
		if chat, thread := splitConversation(act.Conversation.ID); joinConversation(chat, thread) != act.Conversation.ID {
			t.Fatalf("conversation %q does not round-trip", act.Conversation.ID)
		}
	})
}
