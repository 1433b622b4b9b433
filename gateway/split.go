package gateway

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/heraldgw/herald/adapters"
)

// Split cuts text into parts that each fit lim, preferring to break at a
// newline (if one falls in the second half of a part), then at a space,
// never inside a UTF-8 sequence; a ``` code fence open at a cut is closed
// at the end of the part and reopened (with its language) at the start of
// the next. When there is more than one part, each ends with " (i/N)".
func Split(text string, lim adapters.Limits) []string {
	max := lim.MaxLength
	if max <= 0 || lim.Len(text) <= max {
		return []string{text}
	}
	// room for " (ii/NN)" and a fence reopen/close
	const suffixRoom = 10
	var parts []string
	rest := text
	fence := "" // the open fence line ("```go") carried into the next part
	for rest != "" {
		prefix := ""
		if fence != "" {
			prefix = fence + "\n"
		}
		budget := max - suffixRoom - lim.Len(prefix)
		if fence != "" {
			budget -= 4 // "\n```"
		}
		if budget < 16 {
			budget = 16
		}
		chunk := rest
		if lim.Len(prefix+rest) > max-suffixRoom {
			cut := cutPoint(rest, budget, lim)
			chunk = rest[:cut]
		}
		rest = strings.TrimLeft(rest[len(chunk):], " ")
		if strings.HasPrefix(rest, "\n") && !strings.HasSuffix(chunk, "\n") {
			rest = rest[1:]
		}
		body := prefix + chunk
		open := openFence(body)
		if open != "" && rest != "" {
			body = strings.TrimRight(body, "\n") + "\n```"
			fence = open
		} else {
			fence = ""
		}
		parts = append(parts, strings.TrimRight(body, " \n"))
	}
	if len(parts) > 1 {
		for i := range parts {
			parts[i] += fmt.Sprintf(" (%d/%d)", i+1, len(parts))
		}
	}
	return parts
}

// cutPoint returns a byte index into s at which the prefix measures at
// most budget.
func cutPoint(s string, budget int, lim adapters.Limits) int {
	// largest prefix within budget, on a rune boundary
	n, end := 0, 0
	for i, r := range s {
		w := 1
		if lim.Count != nil {
			w = lim.Count(string(r))
		}
		if n+w > budget {
			break
		}
		n += w
		end = i + utf8.RuneLen(r)
	}
	if end == 0 {
		_, sz := utf8.DecodeRuneInString(s)
		return sz
	}
	if end >= len(s) {
		return len(s)
	}
	window := s[:end]
	if i := strings.LastIndexByte(window, '\n'); i >= end/2 {
		return i + 1
	}
	if i := strings.LastIndexByte(window, ' '); i >= end/2 {
		return i + 1
	}
	return end
}

// openFence returns the opening line of a ``` fence left open at the end
// of s, or "".
func openFence(s string) string {
	open := ""
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			if open == "" {
				open = t
			} else {
				open = ""
			}
		}
	}
	return open
}
