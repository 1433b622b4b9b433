package cmd_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// herald hooks list/doctor/allow/test on an http entry and a prompt entry.
func TestHooksTypedCLI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "rm -rf") {
			io.WriteString(w, `{"decision":"block","reason":"the policy service says no"}`)
			return
		}
		io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte(fmt.Sprintf(`hooks:
  pre_tool_call:
    - type: http
      url: %s/check
      allow_private: true
      priority: 100
      matcher: "term*"
    - type: prompt
      prompt: "Refuse writes outside /srv/app. $ARGUMENTS"
`, srv.URL)), 0o600)
	os.WriteFile(filepath.Join(home, "p.json"), []byte(`{"args":{"command":"rm -rf /"}}`), 0o600)
	key := "http:" + srv.URL + "/check"
	steps := []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"list", []string{"hooks", "list"}, 0, []string{
			"Configured shell hooks (2 total):",
			"- http " + srv.URL + `/check matcher="term*" (timeout=30s, ✗ not allowlisted)`,
			`type=http priority=100 matcher="term*" allow_private`,
			fmt.Sprintf("allow with: herald hooks allow pre_tool_call %q", key),
			`type=prompt priority=0 matcher="" model=(the gateway's)`,
			`allow with: herald hooks allow pre_tool_call "prompt:sha256:`,
		}},
		{"doctor", []string{"hooks", "doctor"}, 1, []string{"✓ url is http(s) with a host", "✗ no model to ask (no model endpoint is configured)", "✗ not allowlisted"}},
		{"allow", []string{"hooks", "allow", "pre_tool_call", key}, 0, []string{"Approved shell hook for pre_tool_call: " + key}},
		{"list approved", []string{"hooks", "list"}, 0, []string{`(timeout=30s, ✓ allowed)`}},
		{"test", []string{"hooks", "test", "pre_tool_call", "--for-tool", "terminal", "--payload-file", filepath.Join(home, "p.json")}, 0, []string{
			"── http " + srv.URL + "/check [type http, priority 100]",
			`parsed (herald wire shape): {"action":"block","message":"the policy service says no"}`,
			"error: no model to ask (no model endpoint is configured)",
		}},
		{"test other tool", []string{"hooks", "test", "pre_tool_call", "--for-tool", "read_file"}, 0, []string{"── prompt"}},
		{"doctor smoke", []string{"hooks", "doctor"}, 1, []string{"✓ allowlisted", "✓ smoke test: answered in"}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			code, out, errw := run(t, home, "", st.args...)
			if code != st.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, st.code, out, errw)
			}
			for _, w := range st.wants {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s\n%s", w, out, errw)
				}
			}
			if st.name == "test other tool" && strings.Contains(out, "── http") {
				t.Errorf("the http hook's matcher takes terminal only:\n%s", out)
			}
		})
	}
}

// A HOOK.yaml of type prompt: listed with its type and priority; doctor
// says it cannot load without a model.
func TestHooksTypedDirCLI(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "hooks", "judge")
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "HOOK.yaml"), []byte("name: judge\nevents: [pre_tool_call]\ntype: prompt\nprompt: \"Is this fine? $ARGUMENTS\"\npriority: 3\nmatcher: \"term*\"\n"), 0o600)
	code, out, errw := run(t, home, "", "hooks", "list")
	if code != 0 || !strings.Contains(out, `runs: prompt hook: "Is this fine? $ARGUMENTS"`) || !strings.Contains(out, `type=prompt priority=3 matcher="term*"`) {
		t.Fatalf("list: %d\n%s\n%s", code, out, errw)
	}
	code, out, errw = run(t, home, "", "hooks", "doctor")
	if code != 1 || !strings.Contains(out, "✗ prompt hook: no model to ask (no model endpoint is configured): not loaded") {
		t.Fatalf("doctor: %d\n%s\n%s", code, out, errw)
	}
}
