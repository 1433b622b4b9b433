package whatsapp

import "testing"

func TestToWhatsApp(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"**bold** and __bold__", "*bold* and *bold*"},
		{"*italic* and _italic_", "_italic_ and _italic_"},
		{"~~gone~~", "~gone~"},
		{"# Title\n## **Sub**", "*Title*\n*Sub*"},
		{"see [the docs](https://example.com/a_b)", "see the docs (https://example.com/a_b)"},
		{"`**not bold**` and **bold `code`**", "`**not bold**` and *bold `code`*"},
		{"```go\nx := **y**\n```\n**after**", "```go\nx := **y**\n```\n*after*"},
		{"- item\n* item\n> quote\n1. one", "- item\n* item\n> quote\n1. one"},
		{"2 * 3 * 4 and a ** b", "2 * 3 * 4 and a ** b"},
		{"unclosed **bold and [link](", "unclosed **bold and [link]("},
		{"**bold with *italic* inside**", "*bold with _italic_ inside*"},
	} {
		got := toWhatsApp(tc.in)
		if got != tc.want {
			t.Errorf("toWhatsApp(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if len([]rune(got)) > len([]rune(tc.in)) {
			t.Errorf("toWhatsApp(%q) grew to %q", tc.in, got)
		}
	}
}

// The conversion never panics and never makes text longer, so the
// gateway's split by the Markdown's length holds.
func FuzzToWhatsApp(f *testing.F) {
	for _, s := range []string{"**b** *i* ~~s~~ [t](u) `c`", "# h\n```\n**x**\n```", "*** ** * __ _ ~~~", "[a](b)(c)[d]("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if out := toWhatsApp(s); len([]rune(out)) > len([]rune(s)) {
			t.Fatalf("%q grew to %q", s, out)
		}
	})
}
