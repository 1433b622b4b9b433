package telegram

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/formattest"
)

// At 200,000 bytes a quadratic converter takes minutes (80,000 "_" took
// 8 s); a linear one takes milliseconds. The bound is generous for a
// loaded machine.
func TestToHTMLLinearOnPathologicalInput(t *testing.T) {
	formattest.Linear(t, 200_000, 2*time.Second, toHTML, wellFormed)
}

// BenchmarkToHTML at two sizes: ns/op grows 10× with the size.
func BenchmarkToHTML(b *testing.B) {
	formattest.Bench(b, []int{20_000, 200_000}, []string{"underscores", "stars"}, toHTML)
}

var (
	htmlTag    = regexp.MustCompile(`^<(/?)(b|i|s|code|pre|a)(?: (href|class)="([^"<>]*)")?>`)
	htmlEntity = regexp.MustCompile(`^&(lt|gt|amp|quot|#[0-9]+);`)
)

// wellFormed checks that out is the HTML Telegram accepts: only its tags,
// each closed in order, attributes only where allowed, and every <, >
// and & in text escaped.
func wellFormed(out string) error {
	var stack []string
	for i := 0; i < len(out); {
		switch out[i] {
		case '<':
			m := htmlTag.FindStringSubmatch(out[i:])
			if m == nil {
				return fmt.Errorf("stray '<' or unknown tag at %d: %.40q", i, out[i:])
			}
			closing, name, attr, val := m[1] == "/", m[2], m[3], m[4]
			switch {
			case closing && attr != "":
				return fmt.Errorf("closing tag with an attribute at %d", i)
			case closing:
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return fmt.Errorf("</%s> at %d closes %v", name, i, stack)
				}
				stack = stack[:len(stack)-1]
			default:
				if (name == "a") != (attr == "href") && !(name == "code" && attr == "class") {
					return fmt.Errorf("<%s> with attribute %q at %d", name, attr, i)
				}
				if name == "a" && strings.ContainsAny(strings.ReplaceAll(val, "&amp;", ""), "&") && !htmlEntity.MatchString(val[strings.IndexByte(val, '&'):]) {
					return fmt.Errorf("unescaped & in href at %d", i)
				}
				stack = append(stack, name)
			}
			i += len(m[0])
		case '>':
			return fmt.Errorf("unescaped '>' at %d: %.40q", i, out[i:])
		case '&':
			m := htmlEntity.FindString(out[i:])
			if m == "" {
				return fmt.Errorf("unescaped '&' at %d: %.40q", i, out[i:])
			}
			i += len(m)
		default:
			i++
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("unclosed %v", stack)
	}
	return nil
}

func FuzzToHTML(f *testing.F) {
	for _, s := range []string{
		"**bold** and __bold__, *it* _it_ ~~gone~~ `code` [x](https://e.x/?a=1&b=2)",
		"# Heading with *it*\n```go\nx := a < b && c\n```\n- snake_case 2*3*4",
		"**unclosed *nested _mixed ~~all",
		"[a](b c) [x](javascript:alert(1)) [y](https://ok)",
		"<script>&amp;</script>",
		"*a`b*` _x_y_ **a **b** c**",
	} {
		f.Add(s)
	}
	formattest.Seeds(f)
	f.Fuzz(func(t *testing.T, md string) {
		got := toHTML(md)
		if err := wellFormed(got); err != nil {
			t.Fatalf("toHTML(%q) = %q: %v", md, got, err)
		}
		if len(md) > 300 {
			return // the reference is cubic in the worst case
		}
		for _, line := range strings.Split(md, "\n") {
			if got, want := inline(line), refInline(line); got != want {
				t.Fatalf("inline(%q)\n got %q\nwant %q (the reference converter)", line, got, want)
			}
		}
	})
}
