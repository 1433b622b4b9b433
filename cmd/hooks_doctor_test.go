package cmd_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const doctorHandler = "def handle(event_type, context):\n    return None\n"

// `herald hooks doctor` checks directory hooks as well as shell hooks:
// HOOK.yaml problems with file:line, unknown events, the handler, Python,
// and consent with the command that gives it. An allowlist entry Hermes
// wrote, without a hash, is approved, not an issue.
func TestHooksDoctorDirectoryHooks(t *testing.T) {
	home := t.TempDir()
	hd := filepath.Join(home, "hooks")
	writeFiles(t, filepath.Join(hd, "good"), map[string]string{"HOOK.yaml": "name: good\nevents: [command:*]\n", "handler.py": doctorHandler})
	writeFiles(t, filepath.Join(hd, "edited"), map[string]string{"HOOK.yaml": "events: [agent:start]\n", "handler.py": doctorHandler})
	writeFiles(t, filepath.Join(hd, "fresh"), map[string]string{"HOOK.yaml": "events: [agent:end]\n", "handler": "#!/bin/sh\ncat >/dev/null\n"})
	writeFiles(t, filepath.Join(hd, "broken"), map[string]string{"HOOK.yaml": "name: broken\nevents:\n  - agent:start\n - oops: [\n", "handler.py": doctorHandler})
	writeFiles(t, filepath.Join(hd, "typo"), map[string]string{"HOOK.yaml": "events: [agent:strat]\ntimeout: soon\n", "handler.py": doctorHandler})
	for _, name := range []string{"good", "edited", "typo"} {
		allowDir(t, home, name)
	}
	os.WriteFile(filepath.Join(hd, "edited", "handler.py"), []byte(doctorHandler+"# edited\n"), 0o644)

	code, out, errw := run(t, home, "", "hooks", "doctor")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errw)
	}
	for _, want := range []string{
		"No shell hooks configured in config.yaml.",
		"Directory hooks in " + hd + " (5):",
		"good [directory hook]\n  ✓ HOOK.yaml: events command:*\n  ✓ handler.py (python worker)\n  ✓ python: ",
		"  ✓ approved, code unchanged since approval",
		"edited [directory hook]",
		"  ✗ changed since it was approved: not loaded; review it, then: herald hooks allow edited",
		"fresh [directory hook]\n  ✓ HOOK.yaml: events agent:end\n  ✓ executable: " + filepath.Join(hd, "fresh", "handler"),
		"  ✗ not approved: not loaded (herald hooks allow fresh)",
		"broken [directory hook]\n  ✗ " + filepath.Join(hd, "broken", "HOOK.yaml") + ":3: invalid HOOK.yaml: did not find expected key",
		"  ℹ not loaded, so consent is not checked",
		"  ⚠ " + filepath.Join(hd, "typo", "HOOK.yaml") + `:2: timeout "soon" is not a number of seconds or a duration`,
		`  ⚠ unknown event "agent:strat" (did you mean "agent:start"?)`,
		"5 issue(s) found.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// Healthy: the good hook, and a shell hook approved by Hermes (no hash).
	for _, name := range []string{"edited", "fresh", "broken", "typo"} {
		os.RemoveAll(filepath.Join(hd, name))
	}
	script := filepath.Join(home, "agent-hooks", "ok.sh")
	writeFiles(t, filepath.Dir(script), map[string]string{"ok.sh": "#!/bin/sh\ncat >/dev/null\necho '{}'\n"})
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("hooks:\n  pre_llm_call:\n    - command: "+script+"\n"), 0o600)
	os.WriteFile(filepath.Join(home, "shell-hooks-allowlist.json"), []byte(`{"approvals": [{"event": "pre_llm_call", "command": `+strconv.Quote(script)+`, "approved_at": "2026-04-20T12:00:00.123456Z", "script_mtime_at_approval": null}]}`), 0o600)
	code, out, errw = run(t, home, "", "hooks", "doctor")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s%s", code, out, errw)
	}
	for _, want := range []string{
		"✓ allowlisted, hash not yet recorded (a Hermes entry; herald hooks allow pre_llm_call",
		"✓ smoke test",
		"All shell hooks look healthy.",
		"All directory hooks look healthy.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	// No interpreter for handler.py.
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("hooks:\n  python: "+filepath.Join(home, "no-python")+"\n"), 0o600)
	code, out, _ = run(t, home, "", "hooks", "doctor")
	if code != 1 || !strings.Contains(out, "  ✗ hooks.python \""+filepath.Join(home, "no-python")+"\" cannot be run") || !strings.Contains(out, "1 issue(s) found.") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}
