package herald

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	r := NewRedactor("known-secret-value-123", "short")
	for _, tc := range []struct{ in, mustNot, mustKeep string }{
		{"token is known-secret-value-123 ok", "known-secret-value-123", "token is"},
		{"key sk-abcdefghijklmnopqrstuvwx", "sk-abcdefghijklmnopqrstuvwx", "key"},
		{"Authorization: Bearer abc.def.ghi", "abc.def.ghi", "Authorization:"},
		{"slack xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij", "slack"},
		{"tg 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "tg"},
		{"url https://bob:hunter2pass@example.com/x", "hunter2pass", "https://bob:"},
		{"password=supersecret1", "supersecret1", "password="},
		{"aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "aws"},
		{"plain chat text stays as it is, short too", "", "plain chat text stays as it is, short too"},
	} {
		got := r.Redact(tc.in)
		if tc.mustNot != "" && strings.Contains(got, tc.mustNot) {
			t.Errorf("Redact(%q) = %q still holds the secret", tc.in, got)
		}
		if !strings.Contains(got, tc.mustKeep) {
			t.Errorf("Redact(%q) = %q lost %q", tc.in, got, tc.mustKeep)
		}
	}
	var nilR *Redactor
	if got := nilR.Redact("sk-abcdefghijklmnopqrstuvwx"); strings.Contains(got, "sk-abcdefghijklmnopqrstuvwx") {
		t.Errorf("a nil redactor must still mask shapes: %q", got)
	}
}

func TestParseCommandAndTarget(t *testing.T) {
	for _, tc := range []struct{ in, name, args string }{
		{"/new", "new", ""},
		// adapters strip their own bot's name; one left is another bot's
		{"/Stop@herald_bot now", "", ""},
		{"/tmp/x is a path", "", ""},
		{"hello", "", ""},
		{"/queue do this later", "queue", "do this later"},
	} {
		n, a := ParseCommand(tc.in)
		if n != tc.name || a != tc.args {
			t.Errorf("ParseCommand(%q) = %q, %q", tc.in, n, a)
		}
	}
	tg, err := ParseTarget("telegram:-100123:42")
	if err != nil || tg.Platform != "telegram" || tg.ChatID != "-100123" || tg.ThreadID != "42" {
		t.Errorf("ParseTarget = %+v, %v", tg, err)
	}
	if _, err := ParseTarget("discord:"); err == nil {
		t.Error("empty chat id accepted")
	}
	if tg, _ := ParseTarget("slack"); tg.ChatID != "" || tg.String() != "slack" {
		t.Errorf("home target = %+v", tg)
	}
}

func TestClosest(t *testing.T) {
	if got := Closest("pre_tool_cal", []string{"pre_tool_call", "post_tool_call"}); got != "pre_tool_call" {
		t.Errorf("Closest = %q", got)
	}
	if got := Closest("zzz", []string{"pre_tool_call"}); got != "" {
		t.Errorf("Closest = %q, want none", got)
	}
}
