package hooks

import (
	"strings"
	"testing"
	"unicode"

	"github.com/heraldgw/herald"
)

// A name RegisterCommand takes is reachable: typed after a slash, the
// command word reads back as the same name; and normalising is stable.
func FuzzCommandName(f *testing.F) {
	for _, s := range []string{"weather", "/My Cmd", "snake_case", " \t/Ünïcode  Name ", "a@b", "İstanbul", "x\u00a0y", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		name := NormalizeCommandName(raw)
		if name == "" || strings.ContainsAny(name, "/@") {
			return // refused by RegisterCommand
		}
		if again := NormalizeCommandName(name); again != name {
			t.Fatalf("%q: normalised %q, then %q", raw, name, again)
		}
		if strings.IndexFunc(name, unicode.IsSpace) >= 0 {
			t.Fatalf("%q: name %q holds white space", raw, name)
		}
		word, bot, args := herald.SplitCommand("/" + name + " some args")
		if bot != "" || args != "some args" || NormalizeCommandName(word) != name {
			t.Fatalf("%q: /%s reads as %q@%q %q", raw, name, word, bot, args)
		}
	})
}
