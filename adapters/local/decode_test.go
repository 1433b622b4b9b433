package local

import (
	"encoding/json"
	"testing"

	"github.com/heraldgw/herald/adapters"
)

func FuzzDecodeInbound(f *testing.F) {
	for _, s := range []string{
		`{"chat_id":"c1","user_id":"u1","text":"hi"}`,
		`{"chat_id":"c1","chat_type":"group","mentioned":false,"thread_id":"t","message_id":"m"}`,
		`{"chat_id":"c1"} {"chat_id":"c2"}`,
		`{"chat_id":"c1"}x`,
		`{"chat_id":"c1"}` + "\n\t ",
		`{"chat_id":""}`,
		`{"chat_id":1}`,
		`[]`,
		`{"chat_id":"c","chat_type":"nope"}`,
		`{"chat_id":"\u00e9\ud800","text":"\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := decodeInbound(body)
		if err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted a body that is not one JSON value: %q", body)
		}
		if in.ChatID == "" {
			t.Fatalf("accepted %q with no chat_id", body)
		}
		for _, id := range []string{in.ChatID, in.UserID, in.ThreadID, in.MessageID} {
			if len(id) > MaxIDLength {
				t.Fatalf("accepted an id of %d bytes", len(id))
			}
		}
		switch in.ChatType {
		case "dm", "group", "channel", "thread", "forum":
		default:
			t.Fatalf("accepted chat_type %q", in.ChatType)
		}
		// what was read, written back, reads the same
		again, _ := json.Marshal(in)
		in2, err := decodeInbound(again)
		if err != nil || in2.ChatID != in.ChatID || in2.Text != in.Text || in2.MessageID != in.MessageID || in2.ChatType != in.ChatType {
			t.Fatalf("%q read as %+v; written back %s reads as %+v, %v", body, in, again, in2, err)
		}
	})
}

func FuzzDecodePress(f *testing.F) {
	for _, s := range []string{
		`{"message_id":"7","data":"ap:0123456789abcdef:once","user_id":"u1","user_name":"Ann"}`,
		`{"message_id":"7","data":"d","user_id":"u1","thread_id":"t"}`,
		`{"message_id":"7","data":"d","user_id":"u1"} {}`,
		`{"message_id":"","data":"d","user_id":"u1"}`,
		`{"message_id":7}`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := decodePress(body)
		if err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted a body that is not one JSON value: %q", body)
		}
		if in.MessageID == "" || in.Data == "" || in.UserID == "" {
			t.Fatalf("accepted a press without a required field: %+v", in)
		}
		if len(in.MessageID) > MaxIDLength || len(in.UserID) > MaxIDLength || len(in.Data) > adapters.MaxButtonData {
			t.Fatalf("accepted an over-long field: %+v", in)
		}
	})
}
