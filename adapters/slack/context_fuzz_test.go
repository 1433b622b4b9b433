package slack

import (
	"strings"
	"testing"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"
)

// FuzzFormatContext feeds arbitrary thread messages (text split on NUL,
// every third one the bot's) to formatContext: it never panics, and what
// it gives the model stays within its bounds.
func FuzzFormatContext(f *testing.F) {
	f.Add("hello\x00<@UBOT> are you there?\x00&lt;b&gt; <https://x.test|link>")
	f.Add(strings.Repeat("word ", 3000) + "\x00short")
	f.Add("\x00\x00   \x00\xff\xfe")
	f.Add(strings.Repeat("a\x00", 100))
	f.Fuzz(func(t *testing.T, in string) {
		var msgs []slackapi.Message
		for i, text := range strings.Split(in, "\x00") {
			m := slackapi.Message{}
			m.Timestamp = "1700000000.0000" + string(rune('0'+i%10))
			m.Text = text
			m.User = "U1"
			if i%3 == 2 {
				m.User, m.BotID = "UBOT", "B1"
			}
			msgs = append(msgs, m)
		}
		out := formatContext(msgs, "1700000000.00000", "UBOT")
		if out == "" {
			for _, m := range msgs {
				if contextLine(m, "1700000000.00000", "UBOT") != "" {
					t.Fatalf("no context for a thread with text: %q", in)
				}
			}
			return
		}
		if !strings.HasPrefix(out, contextHeader+"\n") || !strings.HasSuffix(out, "\n"+contextEnd) {
			t.Fatalf("context without its header and end line: %q", out)
		}
		// the messages' text, one "…" for a cut one, a newline after each
		bound := contextRunes + 1 + contextMessages
		if n := utf8.RuneCountInString(out) - utf8.RuneCountInString(contextHeader+contextEnd) - 1; n > bound {
			t.Fatalf("context of %d characters, bound %d", n, bound)
		}
	})
}
