package gateway

// split.go: cutting a reply into parts that fit a platform's limit.

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heraldgw/herald/adapters"
)

// Split cuts text into parts that each fit lim, measured by lim's rule
// (Telegram counts UTF-16 units). It prefers to break at a newline (if one
// falls in the second half of a part), then at a space, and otherwise
// between runes, never inside a UTF-8 sequence and not inside an emoji
// sequence (joiners, variation selectors, skin tones); a ``` code fence
// open at a cut is closed at the end of the part and reopened (with its
// language) at the start of the next. When there is more than one part,
// each ends with " (i/N)". It runs in time linear in len(text).
func Split(text string, lim adapters.Limits) []string {
	max := lim.MaxLength
	if max <= 0 || lim.Len(text) <= max {
		return []string{text}
	}
	const closeFence = "\n```"
	// " (i/N)": each part is at least half its budget (cuts prefer the
	// second half), so N is at most 2·len/budget + 1
	est := 2*lim.Len(text)/(max/2+1) + 1
	suffixRoom := 4 + 2*len(strconv.Itoa(est))
	var parts []string
	rest := text
	fence := "" // the open fence line ("```go") carried into the next part
	for rest != "" {
		prefix := ""
		if fence != "" {
			prefix = fence + "\n"
		}
		budget := max - suffixRoom - lim.Len(prefix) - len(closeFence)
		if budget < 8 {
			budget = 8
		}
		cut, sep := cutPoint(rest, budget, lim)
		chunk := rest[:cut]
		rest = rest[cut+sep:]
		body := prefix + chunk
		if open := openFence(chunk, fence); open != "" && rest != "" {
			body = strings.TrimRight(body, "\n") + closeFence
			fence = open
		} else {
			fence = ""
		}
		if rest == "" {
			body = strings.TrimRight(body, " \n")
		}
		parts = append(parts, body)
	}
	if len(parts) > 1 {
		for i := range parts {
			p := strings.TrimRight(parts[i], " \n")
			if strings.HasSuffix(p, "```") {
				// text after a closing fence would make it an opening one
				parts[i] = p + fmt.Sprintf("\n(%d/%d)", i+1, len(parts))
			} else {
				parts[i] = p + fmt.Sprintf(" (%d/%d)", i+1, len(parts))
			}
		}
	}
	return parts
}

// cutPoint returns where to cut s so that s[:cut] measures at most budget
// (all of s when it fits), and how many separator bytes (a newline or a
// space cut at) to drop after it.
func cutPoint(s string, budget int, lim adapters.Limits) (cut, sep int) {
	n, end := 0, 0
	lastNL, lastSP := -1, -1
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
		switch r {
		case '\n':
			lastNL = i
		case ' ':
			lastSP = i
		}
	}
	if end >= len(s) {
		return len(s), 0
	}
	if end == 0 { // one rune wider than the budget: send it alone
		_, sz := utf8.DecodeRuneInString(s)
		return sz, 0
	}
	if lastNL >= end/2 {
		return lastNL, 1
	}
	if lastSP >= end/2 {
		return lastSP, 1
	}
	// hard cut: step back out of an emoji sequence
	c := end
	for c > 0 {
		next, _ := utf8.DecodeRuneInString(s[c:])
		prev, psz := utf8.DecodeLastRuneInString(s[:c])
		if !joins(next) && prev != '\u200d' {
			break
		}
		c -= psz
	}
	if c*2 < end { // a very long sequence: cut between runes after all
		c = end
	}
	return c, 0
}

// joins reports whether r attaches to the rune before it.
func joins(r rune) bool {
	switch {
	case r == '\u200d', r >= '\ufe00' && r <= '\ufe0f', r >= 0x1f3fb && r <= 0x1f3ff, r >= 0xe0020 && r <= 0xe007f:
		return true
	}
	return unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r)
}

// openFence returns the fence line still open at the end of chunk, given
// the one open at its start ("" for none).
func openFence(chunk, open string) string {
	for len(chunk) > 0 {
		line := chunk
		if i := strings.IndexByte(chunk, '\n'); i >= 0 {
			line, chunk = chunk[:i], chunk[i+1:]
		} else {
			chunk = ""
		}
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") {
			if open == "" {
				open = t
			} else {
				open = ""
			}
		}
	}
	return open
}
