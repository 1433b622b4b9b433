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
	b.Grow(len(s))
	newInliner(s).convert(&b, 0, len(s))
	return b.String()
}

// inliner converts one line in time linear in its length: where a
// converter would scan the rest of the line for the close of every
// marker that might open (quadratic on 80,000 "_"), it looks each answer
// up in tables built once, backwards, over the line.
type inliner struct {
	s string
	// closes[k][p] is the first position >= p where spans[k] may close,
	// judged against the whole line; len(s) if none
	closes [][]int32
	// the first position >= p of a '`'; of a '[' or ']'; of a ')'; of a
	// byte a link's URL may not hold. len(s) if none.
	tick, bracket, paren, badURL []int32
}

func newInliner(s string) *inliner {
	n := len(s)
	in := &inliner{s: s, closes: make([][]int32, len(spans))}
	in.tick = nextOf(s, func(c byte) bool { return c == '`' })
	in.bracket = nextOf(s, func(c byte) bool { return c == '[' || c == ']' })
	in.paren = nextOf(s, func(c byte) bool { return c == ')' })
	in.badURL = nextOf(s, func(c byte) bool { return c == ' ' || c == '"' || c == '<' || c == '>' })
	for k, sp := range spans {
		next := make([]int32, n+1)
		next[n] = int32(n)
		for e := n - 1; e >= 0; e-- {
			next[e] = next[e+1]
			if mayClose(s, e, sp) && (!sp.word || e+len(sp.marker) >= n || !isWordByte(s[e+len(sp.marker)])) &&
				(len(sp.marker) > 1 || e+1 >= n || s[e+1] != sp.marker[0]) {
				next[e] = int32(e)
			}
		}
		in.closes[k] = next
	}
	return in
}

// mayClose reports whether sp's marker sits at e after a non-space: the
// part of a close that does not depend on what follows it.
func mayClose(s string, e int, sp span) bool {
	return e > 0 && s[e-1] != ' ' && strings.HasPrefix(s[e:], sp.marker)
}

func nextOf(s string, is func(byte) bool) []int32 {
	next := make([]int32, len(s)+1)
	next[len(s)] = int32(len(s))
	for p := len(s) - 1; p >= 0; p-- {
		next[p] = next[p+1]
		if is(s[p]) {
			next[p] = int32(p)
		}
	}
	return next
}

// convert writes s[lo:hi] converted to b, reading the region as a line of
// its own (as a span's inside or a link's text is read).
func (in *inliner) convert(b *strings.Builder, lo, hi int) {
	s := in.s
	for i := lo; i < hi; {
		c := s[i]
		if c == '`' {
			if j := int(in.tick[i+1]); j < hi && j > i+1 {
				b.WriteString("<code>")
				b.WriteString(html.EscapeString(s[i+1 : j]))
				b.WriteString("</code>")
				i = j + 1
				continue
			}
		}
		if c == '[' {
			if textEnd, url, n, ok := in.link(i, hi); ok {
				b.WriteString(`<a href="` + html.EscapeString(url) + `">`)
				in.convert(b, i+1, textEnd)
				b.WriteString("</a>")
				i += n
				continue
			}
		}
		if k, start, end, ok := in.span(i, lo, hi); ok {
			b.WriteString(spans[k].open)
			in.convert(b, start, end)
			b.WriteString(spans[k].close)
			i = end + len(spans[k].marker)
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
}

// span finds the first of spans that opens at i and closes before hi: its
// index and the bounds of its inside.
func (in *inliner) span(i, lo, hi int) (k, start, end int, ok bool) {
	s := in.s
	for k, sp := range spans {
		m := len(sp.marker)
		if i+m > hi || s[i:i+m] != sp.marker {
			continue
		}
		if sp.word && i > lo && isWordByte(s[i-1]) {
			continue
		}
		start := i + m
		if start >= hi || s[start] == ' ' {
			continue
		}
		end := int(in.closes[k][start+1])
		if end+m >= hi {
			// no close followed by text inside the region; a marker
			// ending the region closes whatever follows it in the line
			end = hi - m
			if end <= start || !mayClose(s[:hi], end, sp) {
				continue
			}
		}
		if int(in.tick[start]) < end {
			// code is never formatted across
			continue
		}
		return k, start, end, true
	}
	return 0, 0, 0, false
}

// link parses "[text](url)" at i, before hi: where the text ends, the
// URL, and the length of the whole.
func (in *inliner) link(i, hi int) (textEnd int, url string, n int, ok bool) {
	s := in.s
	// the text holds no bracket and ends at "]("
	b := int(in.bracket[i+1])
	if b+1 >= hi || s[b] != ']' || s[b+1] != '(' {
		return 0, "", 0, false
	}
	u := b + 2
	end := int(in.paren[u])
	if end >= hi || end == u || int(in.badURL[u]) < end {
		return 0, "", 0, false
	}
	url = s[u:end]
	if !(strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://") || strings.HasPrefix(url, "tg://") || strings.HasPrefix(url, "mailto:")) {
		return 0, "", 0, false
	}
	return b, url, end + 1 - i, true
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
