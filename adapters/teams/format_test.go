package teams

import "testing"

func TestFormat(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"prose lines become paragraphs", "one\ntwo", "one\n\ntwo"},
		{"lists stay", "intro:\n- a\n- b\n1. c", "intro:\n- a\n- b\n1. c"},
		{"markdown passes", "**bold** _it_ ~~s~~ `code` [l](https://x)", "**bold** _it_ ~~s~~ `code` [l](https://x)"},
		{"table fenced", "| a | b |\n|---|---|\n| 1 | 2 |\nafter", "```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\nafter"},
		{"fence untouched", "```go\nx := 1\ny := 2\n```", "```go\nx := 1\ny := 2\n```"},
		{"unclosed fence is text", "```\nx\ny", "```\nx\n\ny"},
		{"pipes without separator", "| a |\n| b |", "| a |\n| b |"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Format(c.in); got != c.want {
				t.Errorf("Format(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
