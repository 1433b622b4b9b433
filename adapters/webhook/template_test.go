package webhook

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func payloadOf(t testing.TB, s string) any {
	t.Helper()
	p, err := decodePayload("application/json", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTemplates(t *testing.T) {
	p := `{"pull_request":{"title":"Fix it","number":1234567,"labels":["a","b"],"merged":false,"body":null},
		"sender":{"login":"octocat"},"commits":[{"id":"c0"},{"id":"c1"}],"n":null}`
	for _, tc := range []struct{ name, src, want string }{
		{"go field", "PR {{.pull_request.title}} by {{.sender.login}}", "PR Fix it by octocat"},
		{"go number stays as sent", "#{{.pull_request.number}}", "#1234567"},
		{"go missing key", "[{{.nope}}][{{.pull_request.nope}}][{{.nope.deeper}}]", "[][][]"},
		{"go null key", "[{{.n}}][{{.n.x}}][{{.pull_request.body}}]", "[][][]"},
		{"go range and if", "{{range .commits}}{{.id}} {{end}}{{if .pull_request.merged}}merged{{else}}open{{end}}", "c0 c1 open"},
		{"go json", "{{json .pull_request.labels}}", "[\n  \"a\",\n  \"b\"\n]"},
		{"hermes field", "PR {pull_request.title} by {sender.login}", "PR Fix it by octocat"},
		{"hermes missing key", "[{nope}][{pull_request.nope}][{nope.deeper}][{sender.login.x}]", "[][][][]"},
		{"hermes null", "[{n}][{pull_request.body}]", "[][]"},
		{"hermes list index", "{commits.1.id}", "c1"},
		{"hermes nested is json", "{pull_request.labels}", "[\n  \"a\",\n  \"b\"\n]"},
		{"hermes bool", "{pull_request.merged}", "false"},
		{"hermes braces stay text", "{ not a field } {a b} }{ {}", "{ not a field } {a b} }{ {}"},
		{"hermes go-looking text", "it costs $5 }} and {x-y}", "it costs $5 }} and {x-y}"},
		{"hermes raw", "{__raw__}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm, err := ParseTemplate(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tm.Render(payloadOf(t, p))
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "hermes raw" {
				if !strings.Contains(got, `"login": "octocat"`) {
					t.Errorf("raw = %q", got)
				}
				return
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// A template that fails on a payload's shape is an error, not a panic;
// one that writes without end is cut at the bound.
func TestTemplateBounds(t *testing.T) {
	tm, _ := ParseTemplate("{{.s.field}}")
	if _, err := tm.Render(payloadOf(t, `{"s":"text"}`)); err == nil {
		t.Error("field of a string: no error")
	}
	big := `{"s":"` + strings.Repeat("é", 40000) + `","l":[` + strings.Repeat(`"ab",`, 20000) + `"z"]}`
	for _, src := range []string{"{{.s}}{{.s}}", "{s}{s}{s}", "{{range .l}}{{.}}{{end}}", "{{range .l}}{{$.s}}{{end}}"} {
		tm, err := ParseTemplate(src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tm.Render(payloadOf(t, big))
		if err != nil || len(got) > maxRendered || len(got) < maxRendered-20 || !strings.HasSuffix(got, truncatedMark) || !utf8.ValidString(got) {
			t.Errorf("%s: %d bytes, %v", src, len(got), err)
		}
	}
	if _, err := ParseTemplate("{{.a"); err == nil {
		t.Error("a broken Go template parsed")
	}
}

func TestDefaultPrompt(t *testing.T) {
	got := defaultPrompt("ci", "push", payloadOf(t, `{"ref":"main"}`))
	if !strings.Contains(got, "Webhook event 'push' on route 'ci'") || !strings.Contains(got, `"ref": "main"`) {
		t.Errorf("default prompt = %q", got)
	}
	long := payloadOf(t, `{"s":"`+strings.Repeat("x", 10000)+`"}`)
	if got := defaultPrompt("ci", "push", long); len(got) > maxRaw+200 {
		t.Errorf("default prompt of a long payload is %d bytes", len(got))
	}
}
