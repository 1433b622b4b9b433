package herald

import (
	"strings"
	"testing"
	"unicode"
)

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/start", "/Model@herald_bot gpt-4o", "  /queue  do it  ", "/tmp/x is a path", "/", "/@bot", "/stop\nnow", "/a\tb c", "not a command", "/É"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		name, args := ParseCommand(text)
		if name == "" {
			if args != "" {
				t.Fatalf("ParseCommand(%q): no name but args %q", text, args)
			}
			return
		}
		if !strings.HasPrefix(strings.TrimSpace(text), "/") {
			t.Fatalf("ParseCommand(%q) = %q for text that does not start with /", text, name)
		}
		if strings.ContainsAny(name, "@/") || strings.IndexFunc(name, unicode.IsSpace) >= 0 || strings.ToLower(name) != name {
			t.Fatalf("ParseCommand(%q): name %q is not one lower-case word", text, name)
		}
		if strings.TrimSpace(args) != args {
			t.Fatalf("ParseCommand(%q): args %q not trimmed", text, args)
		}
		// the parsed command, written back, reads the same
		if n2, a2 := ParseCommand("/" + name + " " + args); n2 != name || a2 != args {
			t.Fatalf("ParseCommand(%q) = %q %q, but /%s %s reads as %q %q", text, name, args, name, args, n2, a2)
		}
	})
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"telegram", "telegram:-100123", "telegram:-100123:42", "Slack : C01 : 1700000000.1", "discord:", ":x", "local:a:b:c", " ", "x::y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ParseTarget(s)
		if err != nil {
			return
		}
		if tg.Platform == "" || strings.Contains(string(tg.Platform), ":") || strings.Contains(tg.ChatID, ":") {
			t.Fatalf("ParseTarget(%q) = %+v", s, tg)
		}
		if tg.ThreadID != "" && tg.ChatID == "" {
			t.Fatalf("ParseTarget(%q) = %+v: a thread with no chat", s, tg)
		}
		back, err := ParseTarget(tg.String())
		if err != nil || back != tg {
			t.Fatalf("ParseTarget(%q) = %+v, written %q, which reads as %+v, %v", s, tg, tg.String(), back, err)
		}
	})
}

// A command word ends at any white space: a client sending CRLF line
// ends ("/model\r\ngpt-4o") must not get a command named "model\r".
func TestParseCommandEndsTheWordAtAnySpace(t *testing.T) {
	for _, tc := range []struct{ in, name, args string }{
		{"/model\r\ngpt-4o", "model", "gpt-4o"},
		{"/stop\r", "stop", ""},
		{"/queue\vnext", "queue", "next"},
		{"/title\u00a0My chat", "title", "My chat"},
		{"/\r@", "", ""},
		{"/a\tb\tc d", "a", "b\tc d"},
	} {
		if name, args := ParseCommand(tc.in); name != tc.name || args != tc.args {
			t.Errorf("ParseCommand(%q) = %q, %q; want %q, %q", tc.in, name, args, tc.name, tc.args)
		}
	}
}

func TestCommandAddressedToABot(t *testing.T) {
	for _, tc := range []struct{ in, name, bot, args string }{
		{"/new@otherbot", "new", "otherbot", ""},
		{"/Status@Herald_Bot now", "status", "Herald_Bot", "now"},
		{"/new", "new", "", ""},
		{"/@bot", "", "", ""},
	} {
		name, bot, args := SplitCommand(tc.in)
		if name != tc.name || bot != tc.bot || args != tc.args {
			t.Errorf("SplitCommand(%q) = %q %q %q", tc.in, name, bot, args)
		}
		if n, _ := ParseCommand(tc.in); tc.bot != "" && n != "" {
			t.Errorf("ParseCommand(%q) = %q: a command for a named bot is not herald's", tc.in, n)
		}
	}
	for _, tc := range []struct{ in, bot, out string }{
		{"/new@herald_bot", "herald_bot", "/new"},
		{"  /Model@HERALD_BOT gpt-4o", "herald_bot", "  /Model gpt-4o"},
		{"/new@otherbot", "herald_bot", "/new@otherbot"},
		{"/new", "herald_bot", "/new"},
		{"hi @herald_bot", "herald_bot", "hi @herald_bot"},
		{"/new@herald_bot", "", "/new@herald_bot"},
	} {
		out, ok := StripBotSuffix(tc.in, tc.bot)
		if out != tc.out || ok != (out != tc.in) {
			t.Errorf("StripBotSuffix(%q, %q) = %q, %v; want %q", tc.in, tc.bot, out, ok, tc.out)
		}
	}
}

// FuzzStripBotSuffix: a command addressed to bot reads, once stripped, as
// the same command with the same arguments addressed to no bot; anything
// else is left as it is.
func FuzzStripBotSuffix(f *testing.F) {
	for _, s := range [][2]string{{"/new@herald_bot", "herald_bot"}, {"  /Status@HERALD_BOT\tnow", "herald_bot"}, {"/new@other", "herald_bot"}, {"/a@b@c x", "b@c"}, {"/@x", "x"}, {"hi", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, text, bot string) {
		out, ok := StripBotSuffix(text, bot)
		name, to, args := SplitCommand(text)
		if !ok {
			if out != text {
				t.Fatalf("StripBotSuffix(%q, %q) changed the text to %q without saying so", text, bot, out)
			}
			if name != "" && to != "" && bot != "" && strings.EqualFold(to, bot) {
				t.Fatalf("StripBotSuffix(%q, %q): a command for %q not stripped", text, bot, bot)
			}
			return
		}
		n2, to2, a2 := SplitCommand(out)
		if n2 != name || to2 != "" || a2 != args {
			t.Fatalf("StripBotSuffix(%q, %q) = %q, which reads %q@%q %q; want %q %q", text, bot, out, n2, to2, a2, name, args)
		}
		if n3, _ := ParseCommand(out); n3 != name {
			t.Fatalf("ParseCommand(%q) = %q, want %q", out, n3, name)
		}
	})
}
