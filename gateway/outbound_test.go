package gateway

import (
	"strings"
	"testing"
)

// FuzzSplitMediaLines: the text left holds no MEDIA: line outside a code
// fence, every path taken is non-empty, and nothing but those lines is
// removed.
func FuzzSplitMediaLines(f *testing.F) {
	for _, s := range []string{"Here.\nMEDIA:/tmp/a.png", "```\nMEDIA:/x\n```", "MEDIA:", "MEDIA: `a b`\n  MEDIA:'c'", "no media here", "```\nMEDIA:/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		rest, paths := splitMediaLines(text)
		for _, p := range paths {
			if strings.TrimSpace(p) == "" {
				t.Fatalf("empty path from %q", text)
			}
		}
		fenced := false
		for _, l := range strings.Split(rest, "\n") {
			tl := strings.TrimSpace(l)
			if strings.HasPrefix(tl, "```") {
				fenced = !fenced
			}
			if !fenced && strings.HasPrefix(tl, MediaLinePrefix) && strings.TrimSpace(strings.Trim(strings.TrimSpace(tl[len(MediaLinePrefix):]), "`\"'")) != "" {
				t.Fatalf("MEDIA: line left in %q (from %q)", rest, text)
			}
		}
		if len(paths) == 0 && rest != text {
			t.Fatalf("text changed with no MEDIA: line: %q → %q", text, rest)
		}
	})
}
