package whatsapp_test

import (
	"strings"
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters/whatsapp"
	"github.com/heraldgw/herald/adapters/whatsapp/whatsapptest"
)

// Decode never panics, and what it returns is well formed: every message
// and press is a DM from a sender with an id, on the whatsapp platform.
func FuzzDecode(f *testing.F) {
	fake := whatsapptest.New(whatsapptest.Options{})
	defer fake.Close()
	f.Add(fake.Payload([]whatsapptest.Message{whatsapptest.Text("15551230001", "Ann", "hi")}))
	f.Add(fake.Payload([]whatsapptest.Message{whatsapptest.Media("15551230001", "Ann", "voice", "m1", "audio/ogg", "", "")}))
	f.Add(fake.Payload([]whatsapptest.Message{whatsapptest.Media("15551230001", "", "document", "m2", "application/pdf", "the report", "r.pdf")}))
	f.Add(fake.Payload([]whatsapptest.Message{whatsapptest.ButtonReply("15551230001", "Ann", "wamid.X", "ap:1:once", "Approve once", true)}))
	f.Add(fake.Payload(nil, map[string]any{"id": "wamid.OUT1", "status": "read", "timestamp": "1", "recipient_id": "1"}))
	f.Add([]byte(`{"entry":[{"changes":[{"value":{"messages":[{"from":"1","id":"x","type":"location","location":{"latitude":1e308}}]}}]}]}`))
	f.Add([]byte(`{"entry":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := whatsapp.Decode(body, "")
		if err != nil {
			if len(in.Messages)+len(in.Presses) > 0 {
				t.Fatal("an error with messages")
			}
			return
		}
		for _, m := range in.Messages {
			if m.ID == "" || m.Source.UserID == "" || m.Source.ChatID != m.Source.UserID || m.Source.Platform != whatsapp.Platform || m.Source.ChatType != herald.ChatDM {
				t.Fatalf("malformed message %+v", m)
			}
			if m.Text == "" && len(m.Media) == 0 {
				t.Fatalf("an empty message %+v", m)
			}
			for _, md := range m.Media {
				if md.Ref == "" || strings.ContainsAny(md.Type, " /") {
					t.Fatalf("malformed media %+v", md)
				}
			}
		}
		for _, p := range in.Presses {
			if p.UserID == "" || p.Chat.ChatID != p.UserID || p.Chat.Platform != whatsapp.Platform {
				t.Fatalf("malformed press %+v", p)
			}
		}
		if len(in.Senders) < len(in.Messages)+len(in.Presses) {
			t.Fatalf("%d senders for %d messages and presses", len(in.Senders), len(in.Messages)+len(in.Presses))
		}
	})
}
