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
