package cmd

import (
	"regexp"
	"strings"
	"testing"
)

var unitSuffixRE = regexp.MustCompile(`^-([a-z0-9]+(-[a-z0-9]+)*-)?[0-9a-f]{8}$`)

// FuzzServiceSuffix: whatever a home is called, its unit's suffix is a
// short run of [a-z0-9-] (safe in a systemd unit name and a launchd
// label) ending in the path's hash, and two homes differ in it.
func FuzzServiceSuffix(f *testing.F) {
	for _, home := range []string{"/srv/bots/Work Bot", "/home/ada/.herald-2", "/x/ééé", "/", "/a/--b--/", "/tmp/" + strings.Repeat("long", 20)} {
		f.Add(home)
	}
	f.Fuzz(func(t *testing.T, home string) {
		got := serviceSuffix(home, "/home/ada/.herald")
		if home == "/home/ada/.herald" {
			if got != "" {
				t.Fatalf("the default home got %q", got)
			}
			return
		}
		if !unitSuffixRE.MatchString(got) || len(got) > 1+24+1+8 {
			t.Fatalf("serviceSuffix(%q) = %q", home, got)
		}
		if other := serviceSuffix(home+"x", "/home/ada/.herald"); other == got {
			t.Fatalf("%q and %q share the suffix %q", home, home+"x", got)
		}
	})
}

// FuzzSystemdQuote: a quoted word never leaves a lone % or $ for systemd
// to expand, and is either bare (no space, quote or backslash) or one
// double-quoted string whose quotes inside are escaped.
func FuzzSystemdQuote(f *testing.F) {
	for _, s := range []string{"/usr/bin/herald", "/home/ada/my bots", `a"b\c`, "50%/$HOME", "", "\n\t;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := systemdQuote(s)
		unq := q
		if strings.HasPrefix(q, `"`) {
			if len(q) < 2 || !strings.HasSuffix(q, `"`) {
				t.Fatalf("systemdQuote(%q) = %s: unbalanced", s, q)
			}
			inner := q[1 : len(q)-1]
			var b strings.Builder
			for i := 0; i < len(inner); i++ {
				c := inner[i]
				if c == '"' {
					t.Fatalf("systemdQuote(%q) = %s: an unescaped quote inside", s, q)
				}
				if c == '\\' {
					i++
					if i == len(inner) {
						t.Fatalf("systemdQuote(%q) = %s: a trailing backslash", s, q)
					}
					switch inner[i] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					default:
						b.WriteByte(inner[i])
					}
					continue
				}
				b.WriteByte(c)
			}
			unq = b.String()
		} else if strings.ContainsAny(q, " \t\n\"'\\;") || q == "" {
			t.Fatalf("systemdQuote(%q) = %s: bare but special", s, q)
		}
		if got := strings.NewReplacer("%%", "%", "$$", "$").Replace(unq); got != s {
			t.Fatalf("systemdQuote(%q) = %s reads back as %q", s, q, got)
		}
	})
}
