package telegram

// format_ref_test.go keeps the first, quadratic inline converter as the
// reference the linear one is checked against (FuzzToHTML compares them).

import (
	"html"
	"strings"
)

// refInline is inline as first written: correct, but quadratic on
// unclosed markup (80,000 "_" took 8 s).
func refInline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c == '`' {
			if j := strings.IndexByte(s[i+1:], '`'); j > 0 {
				b.WriteString("<code>" + html.EscapeString(s[i+1:i+1+j]) + "</code>")
				i += j + 2
				continue
			}
		}
		if c == '[' {
			if text, url, n, ok := refLink(s[i:]); ok {
				b.WriteString(`<a href="` + html.EscapeString(url) + `">` + refInline(text) + "</a>")
				i += n
				continue
			}
		}
		matched := false
		for _, sp := range spans {
			if !strings.HasPrefix(s[i:], sp.marker) {
				continue
			}
			if sp.word && i > 0 && isWordByte(s[i-1]) {
				continue
			}
			start := i + len(sp.marker)
			if start >= len(s) || s[start] == ' ' {
				continue
			}
			end := refClosing(s, start, sp)
			if end < 0 {
				continue
			}
			b.WriteString(sp.open + refInline(s[start:end]) + sp.close)
			i = end + len(sp.marker)
			matched = true
			break
		}
		if matched {
			continue
		}
		switch c {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteByte(c)
		}
		i++
	}
	return b.String()
}

// refClosing finds the closing marker of sp from start, or -1.
func refClosing(s string, start int, sp span) int {
	for k := start; k < len(s); {
		j := strings.Index(s[k:], sp.marker)
		if j < 0 {
			return -1
		}
		end := k + j
		after := end + len(sp.marker)
		okBefore := end > start && s[end-1] != ' '
		okAfter := !sp.word || after >= len(s) || !isWordByte(s[after])
		// "**" must not be read as two "*"
		if len(sp.marker) == 1 && after < len(s) && s[after] == sp.marker[0] {
			okAfter = false
		}
		if okBefore && okAfter && !strings.Contains(s[start:end], "`") {
			return end
		}
		k = end + 1
	}
	return -1
}

// refLink parses "[text](url)" at the start of s.
func refLink(s string) (text, url string, n int, ok bool) {
	close := strings.Index(s, "](")
	if close < 1 || strings.ContainsAny(s[1:close], "[]") {
		return "", "", 0, false
	}
	rest := s[close+2:]
	end := strings.IndexByte(rest, ')')
	if end < 1 {
		return "", "", 0, false
	}
	url = rest[:end]
	if strings.ContainsAny(url, " \"<>") || !(strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "tg://") || strings.HasPrefix(url, "mailto:")) {
		return "", "", 0, false
	}
	return s[1:close], url, close + 2 + end + 1, true
}
