package webhook

// template.go renders a route's prompt from a payload. A prompt with "{{"
// is a Go text/template ({{.pull_request.title}}); any other is Hermes'
// form ({pull_request.title}, {__raw__}), translated into a Go template
// once, at start. Either way a missing key renders empty, nothing panics,
// and the text is bounded.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"unicode/utf8"
)

// Bounds of rendered text, in bytes. Hermes cuts a payload dump at 4000
// characters and a nested value at 2000.
const (
	maxRendered = 32 << 10
	maxRaw      = 4000
	maxNested   = 2000
)

// truncatedMark ends text that was cut to a bound.
const truncatedMark = "…[truncated]"

// hermesField is one Hermes placeholder: {a.b.c}.
var hermesField = regexp.MustCompile(`\{([a-zA-Z0-9_.]+)\}`)

// Template is a compiled prompt template.
type Template struct {
	t *template.Template
	// goForm is set for a template written in Go's form, whose missing
	// keys print as "<no value>"
	goForm bool
}

// funcs are the functions a template may call: field and raw are what
// Hermes' placeholders become; json prints any value as JSON.
var funcs = template.FuncMap{
	"field": field,
	"raw":   func(v any) string { return jsonText(v, maxRaw) },
	"json":  func(v any) string { return jsonText(v, maxNested) },
}

// ParseTemplate compiles src, Go's form when it holds "{{", else Hermes'.
func ParseTemplate(src string) (*Template, error) {
	goForm := strings.Contains(src, "{{")
	if !goForm {
		src = TranslateHermes(src)
	}
	t, err := template.New("prompt").Option("missingkey=default").Funcs(funcs).Parse(src)
	if err != nil {
		return nil, err
	}
	return &Template{t: t, goForm: goForm}, nil
}

// TranslateHermes turns Hermes' template form into Go's: {a.b} becomes
// {{field $ "a.b"}}, {__raw__} {{raw $}}, and literal text that holds a
// brace is quoted so that it stays text.
func TranslateHermes(src string) string {
	var b strings.Builder
	literal := func(s string) {
		if s == "" {
			return
		}
		if strings.ContainsAny(s, "{}") {
			b.WriteString("{{" + strconv.Quote(s) + "}}")
			return
		}
		b.WriteString(s)
	}
	last := 0
	for _, m := range hermesField.FindAllStringSubmatchIndex(src, -1) {
		literal(src[last:m[0]])
		key := src[m[2]:m[3]]
		if key == "__raw__" {
			b.WriteString("{{raw $}}")
		} else {
			b.WriteString("{{field $ " + strconv.Quote(key) + "}}")
		}
		last = m[1]
	}
	literal(src[last:])
	return b.String()
}

// Render fills the template from payload (as decoded by decodePayload).
// The text is cut at maxRendered bytes.
func (t *Template) Render(payload any) (out string, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("template panicked: %v", x)
		}
	}()
	w := &boundedWriter{max: maxRendered}
	err = t.t.Execute(w, payload)
	if err != nil && !errors.Is(err, errFull) {
		return "", err
	}
	s := w.b.String()
	if t.goForm {
		// missingkey=default prints a missing key as "<no value>"
		s = strings.ReplaceAll(s, "<no value>", "")
	}
	if w.full {
		s = cut(s, maxRendered)
	}
	return s, nil
}

// errFull stops a template whose text reached the bound.
var errFull = errors.New("rendered text too long")

// boundedWriter keeps at most max bytes and then fails.
type boundedWriter struct {
	b    bytes.Buffer
	max  int
	full bool
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); len(p) > room {
		w.b.Write(p[:max(room, 0)])
		w.full = true
		return max(room, 0), errFull
	}
	return w.b.Write(p)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the
// cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cut(s, n)
}

// cut is s cut to leave room for the mark within n bytes, and the mark.
func cut(s string, n int) string {
	at := min(max(n-len(truncatedMark), 0), len(s))
	for at > 0 && at < len(s) && !utf8.RuneStart(s[at]) {
		at--
	}
	return s[:at] + truncatedMark
}

// field resolves a Hermes dot path in v: map keys, and list indexes by
// number. What is missing is "", a nested map or list is JSON.
func field(v any, path string) string {
	for _, part := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			x, ok := c[part]
			if !ok {
				return ""
			}
			v = x
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return ""
			}
			v = c[i]
		default:
			return ""
		}
	}
	return scalarText(v)
}

// scalarText prints a payload value as a template shows it.
func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case map[string]any, []any:
		return jsonText(x, maxNested)
	}
	return fmt.Sprint(v)
}

// jsonText is v as indented JSON, cut at n bytes.
func jsonText(v any, n int) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return ""
	}
	return truncate(string(b), n)
}

// defaultPrompt is the prompt of a route without a template, in Hermes'
// words: the event, the route and the payload.
func defaultPrompt(route, event string, payload any) string {
	return fmt.Sprintf("Webhook event '%s' on route '%s':\n\n```json\n%s\n```", event, route, jsonText(payload, maxRaw))
}
