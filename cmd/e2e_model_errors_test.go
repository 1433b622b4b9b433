package cmd_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd"
)

// A model endpoint behind a proxy that answers 502 with an HTML page:
// herald chat says so in one line (the status, the URL, the page's gist)
// instead of printing the page once per attempt and again at exit.
func TestChatModelErrorPageIsOneLine(t *testing.T) {
	page := agenttest.Reply{Status: 502, ContentType: "text/html",
		Body: "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n"}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		code        int
	}{
		{"one turn", "", []string{"chat", "-q", "hello"}, 1},
		{"conversation", "hello\n", []string{"chat"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits out the retries' backoff
			model := agenttest.New(t)
			model.Default = page
			env := map[string]string{"OPENAI_BASE_URL": model.BaseURL(), "OPENAI_API_KEY": "sk-test-0123456789abcdefghij", "HERALD_MODEL": "m"}
			var out, errw bytes.Buffer
			code := cmd.Main(context.Background(), append([]string{"--home", t.TempDir()}, tc.args...),
				cmd.WithStdio(strings.NewReader(tc.stdin), &out, &errw), cmd.WithGetenv(func(k string) string { return env[k] }))
			want := "herald: agent: model call: the model endpoint " + model.BaseURL() + "/chat/completions answered 502 Bad Gateway: nginx/1.24.0\n"
			if code != tc.code || errw.String() != want || strings.Contains(out.String(), "<") {
				t.Fatalf("exit %d, want %d and stderr\n%s\ngot\n%s\nstdout:\n%s", code, tc.code, want, errw.String(), out.String())
			}
			if n := len(model.Requests()); n != 4 {
				t.Errorf("%d model calls, want 4 (a 502 is retried)", n)
			}
		})
	}
}
