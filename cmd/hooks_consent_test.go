package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An approved shell hook whose script then changed: refused without an
// accept switch, with today's message; with --accept-hooks it runs, the
// log names it as accepted, and its new hash is recorded, so the next run
// needs no switch.
func TestAcceptHooksTakesAChangedScript(t *testing.T) {
	home := t.TempDir()
	ran := filepath.Join(home, "ran")
	script := filepath.Join(home, "agent-hooks", "note.sh")
	os.MkdirAll(filepath.Dir(script), 0o700)
	os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\necho v1 >> "+ran+"\n"), 0o755)
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("hooks:\n  pre_llm_call:\n    - command: "+script+"\n"), 0o600)
	if code, out, errw := run(t, home, "", "hooks", "allow", "pre_llm_call", script); code != 0 {
		t.Fatalf("allow: %d\n%s%s", code, out, errw)
	}
	os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\necho v2 >> "+ran+"\n"), 0o755)

	_, _, errw := run(t, home, "", "chat", "-q", "hello")
	if !strings.Contains(errw, "changed since it was approved, so it is not trusted") {
		t.Fatalf("without the switch, the refusal is not logged:\n%s", errw)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a changed script ran without consent")
	}

	_, _, errw = run(t, home, "", "chat", "--accept-hooks", "-q", "hello")
	if !strings.Contains(errw, "changed since it was approved: accepted by the accept-hooks switch") || !strings.Contains(errw, script) {
		t.Fatalf("the acceptance is not logged with the script's name:\n%s", errw)
	}
	if b, _ := os.ReadFile(ran); string(b) != "v2\n" {
		t.Fatalf("the changed script did not run once: %q", b)
	}

	_, _, errw = run(t, home, "", "chat", "-q", "hello again")
	if strings.Contains(errw, "not trusted") {
		t.Fatalf("the new hash was not recorded:\n%s", errw)
	}
	if b, _ := os.ReadFile(ran); string(b) != "v2\nv2\n" {
		t.Fatalf("the accepted script did not run again: %q", b)
	}
}
