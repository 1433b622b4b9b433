package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzHookYAML reads a hook directory whose HOOK.yaml is the input (with
// an executable handler beside it): it never panics; a hook that loads has
// a name, events and a handler; every diagnostic names the directory's
// hook and leaves the gateway running.
func FuzzHookYAML(f *testing.F) {
	for _, s := range []string{
		"events: [command:*]\n",
		"name: guard\ndescription: d\nevents:\n  - agent:start\n  - agent:end\ntimeout: 2.5\n",
		"events: [pre_tool_call]\ncommand: [./handler, --flag]\nenv: [OPENAI_API_KEY]\n",
		"events: [x]\ncommand: \"sh -c 'echo {}'\"\nenv: {A: $HOME/x, B: ~}\ntimeout: 1m\n",
		"events: command:*\n", "events: [[a]]\n", "- a\n- b\n", "", "name: \"\"\nevents: []\n",
		"events: [a]\ntimeout: -1\n", "events: [a]\ncommand: \"'unterminated\"\n", "events: [a]\ncommand: []\n",
		"events: [a]\nenv: [1, {x: y}]\n", "&a [*a]\n", "events: !!binary aGVsbG8=\n", "\t:\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, manifest []byte) {
		dir := filepath.Join(t.TempDir(), "fz")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "HOOK.yaml"), manifest, 0o644)
		os.WriteFile(filepath.Join(dir, "handler"), []byte("#!/bin/sh\n"), 0o755)
		h, diags, ok := readHookDir(dir)
		for _, d := range diags {
			if d.Dir != dir || !strings.HasPrefix(d.Msg, "[hooks] ") {
				t.Fatalf("diagnostic not naming its directory: %+v", d)
			}
			// doctor prints Where and Reason alone
			if d.Reason == "" || !strings.Contains(d.Msg, d.Reason) || d.Line < 0 || (d.Line > 0) != strings.HasSuffix(d.Where(), fmt.Sprintf("HOOK.yaml:%d", d.Line)) {
				t.Fatalf("diagnostic without its reason or place: %+v (where %s)", d, d.Where())
			}
		}
		if !ok {
			if len(diags) == 0 || !diags[len(diags)-1].Skipped {
				t.Fatalf("skipped without saying why: %+v", diags)
			}
			return
		}
		if strings.TrimSpace(h.Name) == "" || len(h.Events) == 0 || h.Dir != dir || h.Timeout < 0 {
			t.Fatalf("loaded an incomplete hook: %+v", h)
		}
		for _, e := range h.Events {
			if strings.TrimSpace(e) != e || e == "" {
				t.Fatalf("event %q kept untrimmed", e)
			}
		}
		switch h.Kind {
		case "exec":
			if len(h.Argv) == 0 || h.Argv[0] == "" {
				t.Fatalf("exec hook without a command: %+v", h)
			}
		case "python":
		default:
			t.Fatalf("kind %q", h.Kind)
		}
	})
}
