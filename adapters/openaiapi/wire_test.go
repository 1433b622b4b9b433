package openaiapi

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDeltasOfGrowingEditedAndNewMessages(t *testing.T) {
	var d deltas
	steps := []struct {
		msgs []sentText
		want string
	}{
		{[]sentText{{"r1", "Hel"}}, "Hel"},
		{[]sentText{{"r1", "Hel"}}, ""},
		{[]sentText{{"r1", "Hello, wor"}}, "lo, wor"},
		{[]sentText{{"r1", "Hello, world"}, {"r2", "a notice"}}, "ld\n\na notice"},
		// a hook rewrote the answer: it is streamed again whole
		{[]sentText{{"r1", "Goodbye"}, {"r2", "a notice"}}, "\n\nGoodbye"},
		{[]sentText{{"r1", "Goodbye"}, {"r2", "a notice"}, {"r3", ""}}, ""},
	}
	for i, s := range steps {
		if got := d.next(s.msgs); got != s.want {
			t.Fatalf("step %d: delta %q, want %q", i, got, s.want)
		}
	}
}

func TestTextsKeepFirstOrderAndLatestText(t *testing.T) {
	got := texts([]sentText{{"a", "1"}, {"b", "x"}, {"a", "12"}, {"c", ""}, {"a", "123"}})
	if joinTexts(got) != "123\n\nx" || len(got) != 3 || got[0].id != "a" {
		t.Fatalf("texts = %+v", got)
	}
}

func TestConversationOfSplitsHistoryAndPrompt(t *testing.T) {
	var req chatRequest
	json.Unmarshal([]byte(`{"model":"herald","user":"u7","messages":[
		{"role":"developer","content":"rules"},
		{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
		{"role":"assistant","content":null},
		{"role":"tool","content":"result"},
		{"role":"assistant","content":"said"},
		{"role":"user","content":"now"}]}`), &req)
	cv, err := conversationOf(req, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []turnMessage{{"system", "rules"}, {"user", "a\nb"}, {"assistant", "said"}}
	if cv.prompt != "now" || cv.user != "u7" || len(cv.history) != len(want) {
		t.Fatalf("conversation = %+v", cv)
	}
	for i := range want {
		if cv.history[i] != want[i] {
			t.Fatalf("history[%d] = %+v, want %+v", i, cv.history[i], want[i])
		}
	}
}

// FuzzChatRequest: any body either decodes into a conversation with a
// non-empty prompt, or is refused with a 4xx error naming a message.
func FuzzChatRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"herald","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"herald","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"x"}]}]}`,
		`{"model":"herald","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`,
		`{"model":"herald","messages":[{"role":"assistant","content":"y"}]}`,
		`{"model":"herald","messages":[]}`,
		`{"messages":[{"role":"user","content":{"a":1}}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var req chatRequest
		if json.Unmarshal([]byte(body), &req) != nil {
			return
		}
		cv, err := conversationOf(req, "")
		if err != nil {
			var es *errStatus
			if !errors.As(err, &es) || es.status/100 != 4 || es.err.Message == "" {
				t.Fatalf("error %v is not a 4xx with a message", err)
			}
			return
		}
		if strings.TrimSpace(cv.prompt) == "" {
			t.Fatal("accepted without a prompt")
		}
	})
}
