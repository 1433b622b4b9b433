package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// herald hooks list/allow/test/doctor/revoke on one configured shell hook,
// then the hook guarding a real chat turn.
func TestHooksShellCLI(t *testing.T) {
	home := t.TempDir()
	script := filepath.Join(home, "agent-hooks", "guard.sh")
	os.MkdirAll(filepath.Dir(script), 0o700)
	os.WriteFile(script, []byte("#!/bin/sh\nif grep -q 'rm -rf'; then echo '{\"action\":\"block\",\"message\":\"no rm -rf here\"}'; else echo '{}'; fi\n"), 0o755)
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("hooks:\n  pre_tool_call:\n    - matcher: terminal\n      command: "+script+"\n      timeout: 5\n"), 0o600)

	steps := []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"list unapproved", []string{"hooks", "list"}, 0, []string{"Configured shell hooks (1 total):", "  [pre_tool_call]", script + ` matcher="terminal" (timeout=5s, ✗ not allowlisted)`}},
		{"doctor finds it unapproved", []string{"hooks", "doctor"}, 1, []string{"✗ not allowlisted", "JSON smoke test skipped", "1 issue(s) found."}},
		{"allow", []string{"hooks", "allow", "pre_tool_call", script}, 0, []string{"Approved shell hook for pre_tool_call"}},
		{"list approved", []string{"hooks", "ls"}, 0, []string{"✓ allowed", "approved_at: "}},
		{"test", []string{"hooks", "test", "pre_tool_call", "--for-tool", "terminal", "--payload-file", filepath.Join(home, "p.json")}, 0, []string{"exit=0", `parsed (herald wire shape): {"action":"block","message":"no rm -rf here"}`}},
		{"test other tool", []string{"hooks", "test", "pre_tool_call", "--for-tool", "read_file"}, 0, []string{"No shell hooks configured for pre_tool_call."}},
		{"test unknown event", []string{"hooks", "test", "pre_tool_cal"}, 2, nil},
		{"doctor healthy", []string{"hooks", "doctor"}, 0, []string{"✓ executable", "✓ allowlisted", "✓ smoke test", "All shell hooks look healthy."}},
		{"chat blocked", []string{"chat", "-q", "run: rm -rf /nonexistent-herald-test"}, 0, []string{"no rm -rf here"}},
		{"revoke", []string{"hooks", "revoke", script}, 0, []string{"Removed 1 allowlist entry for: " + script}},
		{"revoke again", []string{"hooks", "rm", script}, 0, []string{"No allowlist entry found for command: " + script}},
	}
	os.WriteFile(filepath.Join(home, "p.json"), []byte(`{"args":{"command":"rm -rf /"}}`), 0o600)
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
		})
	}
	// an edited script is no longer trusted
	run(t, home, "", "hooks", "allow", "pre_tool_call", script)
	os.WriteFile(script, []byte("#!/bin/sh\necho '{}'\n"), 0o755)
	if code, out, _ := run(t, home, "", "hooks", "doctor"); code != 1 || !strings.Contains(out, "script modified since approval") {
		t.Fatalf("doctor after edit: %d\n%s", code, out)
	}
}
