package slack

import (
	"strings"
	"testing"

	"github.com/heraldgw/herald/adapters"
)

// FuzzSections cuts arbitrary text for section blocks of a small size:
// every piece fits, and nothing but white space (and, with fences, the
// ``` added to close and reopen a block) is lost or added.
func FuzzSections(f *testing.F) {
	f.Add("one line\nanother line that is a bit longer than the others\nend", uint8(20), true)
	f.Add("```\ncode line 1\ncode line 2\ncode line 3\n```\nafter", uint8(16), true)
	f.Add(strings.Repeat("x", 100)+" &amp;&lt;&gt; "+strings.Repeat("y", 50), uint8(17), false)
	f.Add("😀😀😀😀😀😀😀😀😀😀😀😀 é\xff\xfe", uint8(16), true)
	f.Fuzz(func(t *testing.T, text string, size uint8, fences bool) {
		max := 16 + int(size)
		pieces := sections(text, max, fences)
		for i, p := range pieces {
			if n := adapters.UTF16Len(p); n > max {
				t.Fatalf("piece %d has %d units, more than %d: %q", i, n, max, p)
			}
		}
		squeeze := func(s string) string {
			if fences {
				s = strings.ReplaceAll(s, "```", "")
			}
			return strings.Join(strings.Fields(s), "")
		}
		if got, want := squeeze(strings.Join(pieces, "\n")), squeeze(text); got != want {
			t.Fatalf("pieces %q do not hold %q", pieces, text)
		}
	})
}
