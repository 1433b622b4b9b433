package hooks

import (
	"strings"
	"testing"

	"github.com/heraldgw/herald"
)

func TestRedactJSON(t *testing.T) {
	red := herald.NewRedactor("tok-0123456789-secret")
	in := []byte(`{"event_type":"pre_llm_call","context":{"user_message":"key tok-0123456789-secret <b>","n":12345678901234567890,"history":[{"content":"again tok-0123456789-secret"}]}}`)
	out := string(RedactJSON(red, in))
	if strings.Contains(out, "tok-0123456789-secret") || strings.Count(out, herald.Mask) != 2 {
		t.Fatalf("RedactJSON = %s", out)
	}
	if !strings.Contains(out, "12345678901234567890") || !strings.Contains(out, "<b>") {
		t.Fatalf("numbers or text changed: %s", out)
	}
	clean := []byte(`{"b":1,  "a":"plain"}`)
	if got := RedactJSON(red, clean); string(got) != string(clean) {
		t.Fatalf("a document with nothing to mask changed: %s", got)
	}
	if got := RedactJSON(red, []byte("not json")); string(got) != "not json" {
		t.Fatalf("non-JSON changed: %s", got)
	}
}
