package whatsapp

// format.go converts the Markdown models write into WhatsApp's own
// markup: **bold** and __bold__ become *bold*, *italic* becomes _italic_,
// ~~strike~~ becomes ~strike~, # headings become bold lines, and
// [text](url) becomes "text (url)". Code spans and ``` blocks, lists and
// > quotes are WhatsApp's too and stay as they are; markup that does not
// close stays literal. The result is never longer than the Markdown, so
// the gateway's split by the Markdown's length holds.

import (
	"strings"

	"github.com/heraldgw/herald/adapters"
)

// toWhatsApp converts Markdown to WhatsApp markup.
func toWhatsApp(md string) string {
	lines := strings.Split(md, "\n")
	var b strings.Builder
	for i := 0; i < len(lines); i++ {
		if i > 0 {
			b.WriteByte('\n')
		}
		if _, end, ok := adapters.CodeFence(lines, i); ok {
			b.WriteString(strings.Join(lines[i:end+1], "\n"))
			i = end
			continue
		}
		b.WriteString(convertLine(lines[i]))
	}
	return b.String()
}

func convertLine(line string) string {
	if indent, h, ok := adapters.Heading(line); ok {
		if h := strings.Trim(inline(h), "*"); h != "" {
			return indent + "*" + h + "*"
		}
	}
	return inline(line)
}

// inline converts one line's inline markup outside code spans.
func inline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '`':
			if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
				b.WriteString(s[i : i+j+2])
				i += j + 2
				continue
			}
		case strings.HasPrefix(s[i:], "**"), strings.HasPrefix(s[i:], "__"):
			if inner, next, ok := delimited(s, i, s[i:i+2]); ok {
				b.WriteString("*" + strings.Trim(inline(inner), "*") + "*")
				i = next
				continue
			}
		case strings.HasPrefix(s[i:], "~~"):
			if inner, next, ok := delimited(s, i, "~~"); ok {
				b.WriteString("~" + inline(inner) + "~")
				i = next
				continue
			}
		case s[i] == '*':
			if inner, next, ok := delimited(s, i, "*"); ok {
				b.WriteString("_" + inline(inner) + "_")
				i = next
				continue
			}
		case s[i] == '[':
			if text, url, next, ok := link(s, i); ok {
				b.WriteString(inline(text) + " (" + url + ")")
				i = next
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// delimited finds the span opened by delim at s[i]: its inner text (not
// empty, not starting or ending with a space) and the index after the
// closing delim.
func delimited(s string, i int, delim string) (inner string, next int, ok bool) {
	start := i + len(delim)
	j := strings.Index(s[start:], delim)
	if j <= 0 {
		return "", 0, false
	}
	inner = s[start : start+j]
	if strings.TrimSpace(inner) != inner || (delim == "*" && strings.HasPrefix(s[start+j:], "**")) {
		return "", 0, false
	}
	return inner, start + j + len(delim), true
}

// link reads [text](url) at s[i].
func link(s string, i int) (text, url string, next int, ok bool) {
	close := strings.Index(s[i:], "](")
	if close <= 1 {
		return "", "", 0, false
	}
	end := strings.IndexByte(s[i+close+2:], ')')
	if end <= 0 {
		return "", "", 0, false
	}
	text, url = s[i+1:i+close], s[i+close+2:i+close+2+end]
	if strings.ContainsAny(url, " \t") || strings.Contains(text, "]") {
		return "", "", 0, false
	}
	return text, url, i + close + 2 + end + 1, true
}
