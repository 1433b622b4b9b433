package slack

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/formattest"
)

// The quadratic link search took 0.7 s on 200,000 "[", so over a minute
// on 2,000,000; the linear one takes milliseconds. The bound is generous
// for a loaded machine.
func TestToMrkdwnLinearOnPathologicalInput(t *testing.T) {
	formattest.Linear(t, 2_000_000, 2*time.Second, toMrkdwn, wellFormed)
}

// BenchmarkToMrkdwn at two sizes: ns/op grows 10× with the size.
func BenchmarkToMrkdwn(b *testing.B) {
	formattest.Bench(b, []int{20_000, 200_000}, []string{"open brackets", "links without paren"}, toMrkdwn)
}

var (
	mrkdwnLink   = regexp.MustCompile(`^<[^<>|]+\|[^<>|]*>`)
	mrkdwnEntity = regexp.MustCompile(`^&(amp|lt|gt);`)
)

// wellFormed checks that Slack reads out as intended: every < opens a
// <url|text> link, and every other &, < and > is escaped.
func wellFormed(out string) error {
	for i := 0; i < len(out); {
		switch out[i] {
		case '<':
			m := mrkdwnLink.FindString(out[i:])
			if m == "" {
				return fmt.Errorf("'<' that opens no link at %d: %.40q", i, out[i:])
			}
			i += len(m)
		case '>':
			return fmt.Errorf("unescaped '>' at %d: %.40q", i, out[i:])
		case '&':
			m := mrkdwnEntity.FindString(out[i:])
			if m == "" {
				return fmt.Errorf("unescaped '&' at %d: %.40q", i, out[i:])
			}
			i += len(m)
		default:
			i++
		}
	}
	return nil
}

func FuzzToMrkdwn(f *testing.F) {
	for _, s := range []string{
		"**bold** and __bold__, *it* _it_ ~~gone~~ `code` [x](https://e.x/?a=1&b=2)",
		"# Heading with *it*\n```go\nx := a < b && c\n```\n- snake_case 2*3*4\n* item",
		"**unclosed *nested _mixed ~~all",
		"[a](b c) [x|y](https://ok) [z](https://a|b) [w>](https://x>y)",
		"<script>&amp;</script> <@U123> <!channel>",
	} {
		f.Add(s)
	}
	formattest.Seeds(f)
	f.Fuzz(func(t *testing.T, md string) {
		got := toMrkdwn(md)
		if err := wellFormed(got); err != nil {
			t.Fatalf("toMrkdwn(%q) = %q: %v", md, got, err)
		}
		if len(md) > 4096 {
			return // the reference is quadratic
		}
		lk := newLinker(md)
		for i := range len(md) {
			if md[i] != '[' {
				continue
			}
			text, url, n, ok := lk.link(i)
			wtext, wurl, wn, wok := refLink(md[i:])
			if text != wtext || url != wurl || n != wn || ok != wok {
				t.Fatalf("link at %d of %q: %q %q %d %v; the reference: %q %q %d %v", i, md, text, url, n, ok, wtext, wurl, wn, wok)
			}
		}
	})
}
