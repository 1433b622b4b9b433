package slack

// format.go converts the Markdown models write into Slack's mrkdwn:
// *bold*, _italic_, ~strike~, `code`, ``` blocks, <url|text> links, with
// &, < and > escaped everywhere (Slack reads them as control characters).
// Markup that does not close is left as literal text.

import (
	"strings"

	"github.com/heraldgw/herald/adapters"
)

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escape makes text safe to send as plain text.
func escape(s string) string { return escaper.Replace(s) }

// toMrkdwn converts Markdown: ``` fences (the language tag is dropped,
// Slack would show it), `code`, **bold**, __bold__, *italic*, _italic_,
// ~~strike~~, [text](url) (a "|" in the URL is written %7C, or Slack
// would end the URL there), # headings (bold) and "* "/"- " bullets.
func toMrkdwn(md string) string {
	var b strings.Builder
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if _, end, ok := adapters.CodeFence(lines, i); ok {
			b.WriteString("```\n")
			b.WriteString(escape(strings.Join(lines[i+1:end], "\n")))
			b.WriteString("\n```")
			i = end
			if i < len(lines)-1 {
				b.WriteByte('\n')
			}
			continue
		}
		b.WriteString(convertLine(line))
		if i < len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func convertLine(line string) string {
	if indent, h, ok := adapters.Heading(line); ok {
		return indent + "*" + strings.Trim(inline(h), "*") + "*"
	}
	trimmed := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(trimmed)]
	if strings.HasPrefix(trimmed, "* ") || strings.HasPrefix(trimmed, "- ") {
		return indent + "• " + inline(trimmed[2:])
	}
	return inline(line)
}

// inline converts one line's inline markup. Spans nest only a few deep
// (a span's inside cannot hold its own delimiter), and links are found
// with seekers, so the time is linear in the line's length.
func inline(s string) string {
	var b strings.Builder
	lk := newLinker(s)
	for i := 0; i < len(s); {
		rest := s[i:]
		switch {
		case rest[0] == '`':
			if j := strings.IndexByte(rest[1:], '`'); j >= 0 {
				b.WriteString("`" + escape(rest[1:1+j]) + "`")
				i += j + 2
				continue
			}
		case strings.HasPrefix(rest, "**") || strings.HasPrefix(rest, "__"):
			if inner, n, ok := span(rest, rest[:2]); ok {
				b.WriteString("*" + inline(inner) + "*")
				i += n
				continue
			}
		case strings.HasPrefix(rest, "~~"):
			if inner, n, ok := span(rest, "~~"); ok {
				b.WriteString("~" + inline(inner) + "~")
				i += n
				continue
			}
		case rest[0] == '*' || (rest[0] == '_' && (i == 0 || !isWord(s[i-1]))):
			if inner, n, ok := span(rest, rest[:1]); ok && (rest[0] == '*' || n == len(rest) || !isWord(rest[n])) {
				b.WriteString("_" + inline(inner) + "_")
				i += n
				continue
			}
		case rest[0] == '[':
			if text, url, n, ok := lk.link(i); ok {
				b.WriteString("<" + strings.ReplaceAll(escape(url), "|", "%7C") + "|" + strings.NewReplacer("|", "/", ">", "›").Replace(escape(text)) + ">")
				i += n
				continue
			}
		}
		b.WriteString(escape(rest[:1]))
		i++
	}
	return b.String()
}

// span finds delim…delim at the start of s with non-blank content that
// does not start or end with a space; n is the length consumed.
func span(s, delim string) (inner string, n int, ok bool) {
	body := s[len(delim):]
	j := strings.Index(body, delim)
	if j <= 0 {
		return "", 0, false
	}
	inner = body[:j]
	if strings.TrimSpace(inner) != inner {
		return "", 0, false
	}
	return inner, len(delim) + j + len(delim), true
}

// linker reads links in one line. Its seekers only move forward, as
// the conversion does, so each byte is looked at once per seeker: a line
// of 200,000 "[" is not rescanned 200,000 times.
type linker struct {
	s                    string
	close, paren, badURL seeker
}

func newLinker(s string) *linker {
	return &linker{s: s, close: newSeeker(s, "]"), paren: newSeeker(s, ")"), badURL: newSeeker(s, " \t")}
}

// link reads [text](url) at i: the text holds no ']' and ends at "](",
// the URL is not empty and holds no blank.
func (lk *linker) link(i int) (text, url string, n int, ok bool) {
	s := lk.s
	close := lk.close.next(i + 1)
	if close+1 >= len(s) || s[close+1] != '(' {
		return "", "", 0, false
	}
	end := lk.paren.next(close + 2)
	if end >= len(s) || end == close+2 || lk.badURL.next(close+2) < end {
		return "", "", 0, false
	}
	return s[i+1 : close], s[close+2 : end], end + 1 - i, true
}

// seeker finds the next byte of a set in s at or after a position that
// never goes back.
type seeker struct {
	s, set   string
	from, at int // the last answer: at is the first match >= from
}

func newSeeker(s, set string) seeker { return seeker{s: s, set: set, from: len(s) + 1} }

// next returns the first position >= from holding a byte of the set, or
// len(s).
func (k *seeker) next(from int) int {
	if from >= len(k.s) {
		return len(k.s)
	}
	if k.from <= from && from <= k.at {
		return k.at
	}
	k.from, k.at = from, len(k.s)
	if j := strings.IndexAny(k.s[from:], k.set); j >= 0 {
		k.at = from + j
	}
	return k.at
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
