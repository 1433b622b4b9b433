package discord

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldgw/herald/adapters"
)

// discordNameRE is Discord's documented rule for a chat command's name
// (letters must also be lower case).
var discordNameRE = regexp.MustCompile(`^[-_'\p{L}\p{N}\p{Devanagari}\p{Thai}]{1,32}$`)

// FuzzSetCommands: whatever names and descriptions the catalogue holds,
// what SetCommands keeps is a list Discord takes: valid lower-case
// names, each once, descriptions of 1–100 characters, at most 100
// commands, each with the optional args option.
func FuzzSetCommands(f *testing.F) {
	f.Add("status", "Show the session's status", "new", strings.Repeat("long ", 40))
	f.Add("Model", "", "model", "dup")
	f.Add("/approve", " \t\n", "İstanbul", "ǅ titlecase")
	f.Add("a b", "x", strings.Repeat("n", 33), "\xff\xfe")
	f.Fuzz(func(t *testing.T, name1, desc1, name2, desc2 string) {
		a := New(Config{})
		var cmds []adapters.Command
		for i := range 60 {
			if i%2 == 0 {
				cmds = append(cmds, adapters.Command{Name: name1 + strings.Repeat("x", i/2), Description: desc1})
			} else {
				cmds = append(cmds, adapters.Command{Name: name2 + strings.Repeat("y", i/2), Description: desc2})
			}
		}
		a.SetCommands(cmds)
		if len(a.commands) > maxCommands {
			t.Fatalf("%d commands", len(a.commands))
		}
		seen := map[string]bool{}
		for _, c := range a.commands {
			if !discordNameRE.MatchString(c.Name) || c.Name != strings.ToLower(c.Name) {
				t.Errorf("name %q is not one Discord takes", c.Name)
			}
			if seen[c.Name] {
				t.Errorf("name %q twice", c.Name)
			}
			seen[c.Name] = true
			if n := utf8.RuneCountInString(c.Description); n < 1 || n > 100 {
				t.Errorf("/%s description has %d characters", c.Name, n)
			}
			if len(c.Options) != 1 || c.Options[0].Name != ArgsOption || c.Options[0].Required {
				t.Errorf("/%s options %+v", c.Name, c.Options)
			}
		}
	})
}
