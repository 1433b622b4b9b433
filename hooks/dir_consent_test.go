package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeHookDir(t *testing.T, dir, handler string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "name: zz\nevents: [pre_gateway_dispatch]\nenv: [OPENAI_API_KEY]\n"
	if err := os.WriteFile(filepath.Join(dir, "HOOK.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "handler.py"), []byte(handler), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDirConsent(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "hooks", "zz")
	writeHookDir(t, dir, "def handle(event_type, context):\n    return None\n")
	list := Allowlist{Path: filepath.Join(home, DirAllowlistFile)}
	c := &DirConsent{List: list}
	h, _, ok := readHookDir(dir)
	if !ok {
		t.Fatal("hook directory not read")
	}

	v := c.Check(h)
	if v.OK || !strings.Contains(v.Msg, "is new") || !strings.Contains(v.Msg, "OPENAI_API_KEY") || !strings.Contains(v.Msg, "herald hooks allow "+dir) {
		t.Fatalf("new hook: %+v", v)
	}
	if _, err := list.ApproveDir(dir); err != nil {
		t.Fatal(err)
	}
	if v := c.Check(h); !v.OK || v.Msg != "" {
		t.Fatalf("approved hook: %+v", v)
	}

	// What a hook writes as it runs does not un-approve it.
	os.WriteFile(filepath.Join(dir, "activity.log"), []byte("x\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "state.json"), []byte("{}"), 0o644)
	os.MkdirAll(filepath.Join(dir, "__pycache__"), 0o755)
	os.WriteFile(filepath.Join(dir, "__pycache__", "handler.cpython-311.pyc"), []byte("bytecode"), 0o644)
	if v := c.Check(h); !v.OK {
		t.Fatalf("hook with state files: %+v", v)
	}

	// Any change to its code does: the handler, a module it imports, an
	// executable beside it.
	for name, change := range map[string]func(){
		"handler": func() { writeHookDir(t, dir, "def handle(e, c):\n    return {'action': 'skip'}\n") },
		"module":  func() { os.WriteFile(filepath.Join(dir, "helper.py"), []byte("X = 1\n"), 0o644) },
		"exec":    func() { os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755) },
	} {
		if _, err := list.ApproveDir(dir); err != nil {
			t.Fatal(err)
		}
		change()
		if v := c.Check(h); v.OK || !strings.Contains(v.Msg, "changed since it was approved") {
			t.Errorf("%s changed: %+v", name, v)
		}
	}

	// The accept switch approves shell hooks only: a changed directory
	// hook stays refused, the refusal says why, and nothing is recorded.
	acc := &DirConsent{List: list, AcceptSwitch: true}
	if v := acc.Check(h); v.OK || !strings.Contains(v.Msg, "changed since it was approved") || !strings.Contains(v.Msg, "approves shell hooks only") {
		t.Fatalf("accept switch on a changed hook: %+v", v)
	}
	if v := c.Check(h); v.OK {
		t.Fatalf("the accept switch recorded an approval: %+v", v)
	}
	if _, err := list.ApproveDir(dir); err != nil {
		t.Fatal(err)
	}
	if v := c.Check(h); !v.OK {
		t.Fatalf("approved again: %+v", v)
	}
	if n, err := list.RevokeDir(dir); err != nil || n != 1 {
		t.Fatalf("RevokeDir = %d, %v", n, err)
	}
	if v := c.Check(h); v.OK {
		t.Fatal("revoked hook still approved")
	}
}
