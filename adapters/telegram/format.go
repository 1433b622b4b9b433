package telegram

// format.go converts the Markdown models write into the HTML subset
// Telegram accepts with parse_mode=HTML. HTML is the safer target: only
// <, > and & need escaping, where MarkdownV2 needs eighteen characters
// escaped and refuses the whole message over one stray '.'. Markup that
// does not close is left as literal text, so the output always parses.

import (
	"github.com/heraldgw/herald/adapters"
	"html"
	"strings"
)

// toHTML converts Markdown: ``` fences, `code`, **bold**, __bold__,
// *italic*, _italic_, ~~strike~~, [text](url) and # headings (bold).
func toHTML(md string) string {
	var b strings.Builder
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if lang, end, ok := adapters.CodeFence(lines, i); ok {
			if lang != "" && !strings.ContainsAny(lang, " \"<>&") {
				b.WriteString(`<pre><code class="language-` + lang + `">`)
			} else {
				b.WriteString("<pre><code>")
			}
			b.WriteString(html.EscapeString(strings.Join(lines[i+1:end], "\n")))
			b.WriteString("</code></pre>")
			i = end
			if i < len(lines)-1 {
				b.WriteByte('\n')
			}
			continue
		}
		if h := heading(line); h != "" {
			b.WriteString("<b>" + inline(h) + "</b>")
		} else {
			b.WriteString(inline(line))
		}
		if i < len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func heading(line string) string {
	t := strings.TrimLeft(line, " ")
	n := 0
	for n < len(t) && n < 6 && t[n] == '#' {
		n++
	}
	if n == 0 || n >= len(t) || t[n] != ' ' {
		return ""
	}
	return strings.TrimSpace(t[n:])
}

type span struct {
	marker, open, close string
	// word: the marker must not sit inside a word (snake_case, 2*3*4)
	word bool
}

var spans = []span{
	{"**", "<b>", "</b>", false},
	{"__", "<b>", "</b>", true},
	{"~~", "<s>", "</s>", false},
	{"*", "<i>", "</i>", true},
	{"_", "<i>", "</i>", true},
}

// inline converts one line's inline markup.
func inline(s string) string {
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
			if text, url, n, ok := link(s[i:]); ok {
				b.WriteString(`<a href="` + html.EscapeString(url) + `">` + inline(text) + "</a>")
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
			end := closing(s, start, sp)
			if end < 0 {
				continue
			}
			b.WriteString(sp.open + inline(s[start:end]) + sp.close)
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

// closing finds the closing marker of sp from start, or -1.
func closing(s string, start int, sp span) int {
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

// link parses "[text](url)" at the start of s.
func link(s string) (text, url string, n int, ok bool) {
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

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
