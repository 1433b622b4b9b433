package teams

// format.go: the model's Markdown for Teams. Messages go out with
// textFormat "markdown", whose subset Teams renders as is: bold, italic,
// strikethrough, headings, lists, links, block quotes, inline code and
// fenced code blocks. What Teams does not render is converted:
//   - a table (a header row, a |---| separator, rows) becomes a fenced
//     code block holding the same lines, so its columns stay readable;
//   - a lone line break between two lines of text becomes a paragraph
//     break, since Teams joins such lines into one.
// Code fences are passed through untouched.

import (
	"strings"

	"github.com/heraldgw/herald/adapters"
)

// Format converts Markdown for a Teams message.
func Format(md string) string {
	lines := strings.Split(md, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if _, end, ok := adapters.CodeFence(lines, i); ok {
			out = append(out, lines[i:end+1]...)
			i = end
			continue
		}
		if n := tableRows(lines, i); n > 0 {
			out = append(out, "```")
			out = append(out, lines[i:i+n]...)
			out = append(out, "```")
			i += n - 1
			continue
		}
		if len(out) > 0 && proseLine(out[len(out)-1]) && proseLine(lines[i]) {
			out = append(out, "")
		}
		out = append(out, lines[i])
	}
	return strings.Join(out, "\n")
}

// tableRows is how many lines from i form a Markdown table (0: none).
func tableRows(lines []string, i int) int {
	if i+1 >= len(lines) || !tableLine(lines[i]) || !separatorLine(lines[i+1]) {
		return 0
	}
	n := 2
	for i+n < len(lines) && tableLine(lines[i+n]) {
		n++
	}
	return n
}

func tableLine(s string) bool {
	t := strings.TrimSpace(s)
	return len(t) > 1 && strings.HasPrefix(t, "|") && strings.Count(t, "|") >= 2
}

func separatorLine(s string) bool {
	t := strings.TrimSpace(s)
	return tableLine(t) && strings.Trim(t, "|-: ") == "" && strings.Contains(t, "-")
}

// proseLine reports whether a line is plain text that Teams would join
// to its neighbour: not blank, not a list item, heading, quote or rule.
func proseLine(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" || strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\t") {
		return false
	}
	switch t[0] {
	case '-', '*', '+', '#', '>', '|':
		return false
	}
	// "1. item", "2) item"
	j := 0
	for j < len(t) && t[j] >= '0' && t[j] <= '9' {
		j++
	}
	if j > 0 && j < len(t) && (t[j] == '.' || t[j] == ')') {
		return false
	}
	return !strings.HasPrefix(t, "```")
}
