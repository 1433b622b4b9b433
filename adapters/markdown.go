package adapters

import "strings"

// CodeFence reports whether lines[i] opens a ``` code fence that is
// closed further down: it returns the fence's language tag and the index
// of the closing line, or ok false (an unclosed fence is ordinary text).
// Adapters that turn Markdown into a platform's markup use it so that a
// fence's body is passed through, escaped, rather than formatted.
func CodeFence(lines []string, i int) (lang string, end int, ok bool) {
	t := strings.TrimSpace(lines[i])
	if !strings.HasPrefix(t, "```") {
		return "", -1, false
	}
	for j := i + 1; j < len(lines); j++ {
		if strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
			return strings.TrimSpace(strings.TrimPrefix(t, "```")), j, true
		}
	}
	return "", -1, false
}

// Heading reads a Markdown ATX heading ("## Title", indented or not):
// the line's indent and the heading's text; ok is false for any other
// line. Adapters whose platform has no headings show the text in bold.
func Heading(line string) (indent, text string, ok bool) {
	trimmed := strings.TrimLeft(line, " ")
	indent = line[:len(line)-len(trimmed)]
	n := 0
	for n < len(trimmed) && n < 6 && trimmed[n] == '#' {
		n++
	}
	if n == 0 || n >= len(trimmed) || trimmed[n] != ' ' {
		return indent, "", false
	}
	text = strings.TrimSpace(trimmed[n:])
	return indent, text, text != ""
}
