package hooks

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Hermes checklist items 1–5: discovery rules and their diagnostics.
func TestDiscoverDir(t *testing.T) {
	const py = "def handle(event_type, context):\n    pass\n"
	tests := []struct {
		name  string
		files map[string]map[string]string // dir → files
		want  []string                     // loaded "name:kind:events"
		diags []string                     // substrings, one per expected diagnostic
	}{
		{name: "nonexistent hooks dir", files: nil},
		{name: "empty hooks dir", files: map[string]map[string]string{}},
		{
			name:  "valid hook loads with name and events",
			files: map[string]map[string]string{"my-hook": {"HOOK.yaml": "name: my-hook\ndescription: d\nevents:\n  - agent:start\n  - agent:end\n", "handler.py": py}},
			want:  []string{"my-hook:python:agent:start,agent:end"},
		},
		{
			name:  "Claude Code event names are aliases",
			files: map[string]map[string]string{"claude": {"HOOK.yaml": "events: [PreToolUse, post_tool_use]\n", "handler.py": py}},
			want:  []string{"claude:python:pre_tool_call,post_tool_call"},
		},
		{
			name:  "name defaults to the directory",
			files: map[string]map[string]string{"dirname": {"HOOK.yaml": "events: [session:start]\n", "handler.py": py}},
			want:  []string{"dirname:python:session:start"},
		},
		{
			name:  "missing HOOK.yaml",
			files: map[string]map[string]string{"x": {"handler.py": py}},
			diags: []string{"Skipping x: no HOOK.yaml"},
		},
		{
			name:  "missing handler",
			files: map[string]map[string]string{"x": {"HOOK.yaml": "events: [agent:start]\n"}},
			diags: []string{"Skipping x: no handler.py, no executable handler and no command:"},
		},
		{
			name:  "handler not executable",
			files: map[string]map[string]string{"x": {"HOOK.yaml": "events: [agent:start]\n", "handler.rb": "puts 1\n"}},
			diags: []string{"Skipping x: handler.rb is not executable"},
		},
		{
			name:  "no events",
			files: map[string]map[string]string{"x": {"HOOK.yaml": "name: quiet\n", "handler.py": py}},
			diags: []string{"Skipping quiet: no events declared"},
		},
		{
			name:  "empty events list",
			files: map[string]map[string]string{"x": {"HOOK.yaml": "events: []\n", "handler.py": py}},
			diags: []string{"Skipping x: no events declared"},
		},
		{
			name:  "events as a string is refused, not iterated",
			files: map[string]map[string]string{"x": {"HOOK.yaml": "events: agent:start\n", "handler.py": py}},
			diags: []string{"Skipping x: events: must be a list"},
		},
		{
			name:  "invalid YAML",
			files: map[string]map[string]string{"x": {"HOOK.yaml": "events: [agent:start\n", "handler.py": py}},
			diags: []string{"Skipping x: invalid HOOK.yaml"},
		},
		{
			name:  "HOOK.yaml not a mapping",
			files: map[string]map[string]string{"x": {"HOOK.yaml": "- a\n- b\n", "handler.py": py}},
			diags: []string{"Skipping x: invalid HOOK.yaml"},
		},
		{
			name:  "empty HOOK.yaml",
			files: map[string]map[string]string{"x": {"HOOK.yaml": "", "handler.py": py}},
			diags: []string{"Skipping x: invalid HOOK.yaml"},
		},
		{
			name:  "command not found",
			files: map[string]map[string]string{"x": {"HOOK.yaml": "events: [agent:start]\ncommand: ./nope.sh\n"}},
			diags: []string{"nope.sh: not found"},
		},
		{
			name: "several hooks load in alphabetical order; a bad one does not stop the rest",
			files: map[string]map[string]string{
				"b-exec": {"HOOK.yaml": "events: [command:*]\n", "handler": "#!/bin/sh\n"},
				"a-py":   {"HOOK.yaml": "events: [agent:end]\n", "handler.py": py},
				"c-bad":  {"HOOK.yaml": ": : :\n"},
				"d-cmd":  {"HOOK.yaml": "events: [agent:step]\ncommand: [run.sh, x]\ntimeout: 5s\n", "run.sh": "#!/bin/sh\n"},
			},
			want:  []string{"a-py:python:agent:end", "b-exec:exec:command:*", "d-cmd:exec:agent:step"},
			diags: []string{"c-bad"},
		},
		{
			name:  "handler.py wins over other handlers",
			files: map[string]map[string]string{"x": {"HOOK.yaml": "events: [agent:end]\n", "handler.py": py, "handler": "#!/bin/sh\n"}},
			want:  []string{"x:python:agent:end"},
		},
		{
			name:  "bad timeout keeps the hook with the default",
			files: map[string]map[string]string{"x": {"HOOK.yaml": "events: [agent:end]\ntimeout: soon\n", "handler.py": py}},
			want:  []string{"x:python:agent:end"},
			diags: []string{`x: timeout "soon"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "hooks")
			if tc.files != nil {
				os.MkdirAll(root, 0o755)
			}
			for dir, files := range tc.files {
				writeHook(t, root, dir, files)
			}
			hooks, diags := DiscoverDir(root)
			var got []string
			for _, h := range hooks {
				got = append(got, h.Name+":"+h.Kind+":"+strings.Join(h.Events, ","))
				if h.Dir != filepath.Join(root, filepath.Base(h.Dir)) {
					t.Errorf("Dir %q", h.Dir)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("loaded %q, want %q", got, tc.want)
			}
			if len(diags) != len(tc.diags) {
				t.Fatalf("diagnostics %q, want %d like %q", diags, len(tc.diags), tc.diags)
			}
			for i, want := range tc.diags {
				if !strings.Contains(diags[i].Msg, want) || diags[i].Dir == "" {
					t.Errorf("diagnostic %q, want it to contain %q and name the directory", diags[i].Msg, want)
				}
			}
		})
	}
}

func TestDiscoverDirTimeout(t *testing.T) {
	root := t.TempDir()
	writeHook(t, root, "a", map[string]string{"HOOK.yaml": "events: [agent:end]\ntimeout: 5\n", "handler": "#!/bin/sh\n"})
	writeHook(t, root, "b", map[string]string{"HOOK.yaml": "events: [agent:end]\ntimeout: 1.5s\n", "handler": "#!/bin/sh\n"})
	hooks, _ := DiscoverDir(root)
	if len(hooks) != 2 || hooks[0].Timeout != 5*time.Second || hooks[1].Timeout != 1500*time.Millisecond {
		t.Fatalf("%+v", hooks)
	}
}

// Loading subscribes every hook with its events; problems are logged
// naming the directory and never stop the others.
func TestDirHooksLoadLogs(t *testing.T) {
	root := t.TempDir()
	writeHook(t, root, "good", map[string]string{"HOOK.yaml": "events: [agent:start, agent:typo]\n", "handler": "#!/bin/sh\n"})
	writeHook(t, root, "bad", map[string]string{"HOOK.yaml": "events: agent:start\n", "handler": "#!/bin/sh\n"})
	reg, _, lr := startDir(t, root, DirOptions{})
	if !reg.Has(AgentStartEv) {
		t.Fatal("good hook not subscribed")
	}
	subs := reg.Subscribers()
	if len(subs) != 1 || subs[0].Name != "good" || subs[0].Attach != AttachDir || subs[0].Timeout != DefaultDirTimeout {
		t.Fatalf("subscribers: %+v", subs)
	}
	if lr.count("Loaded hook 'good' for events: [agent:start agent:typo]") != 1 {
		t.Fatalf("log:\n%s", lr)
	}
	if lr.count("Skipping bad", "dir=") != 1 {
		t.Fatalf("log:\n%s", lr)
	}
	if lr.count(`unknown event "agent:typo"`, `did you mean "agent:step"?`) != 1 {
		t.Fatalf("log:\n%s", lr)
	}
}

// A FIFO or an oversized file as HOOK.yaml is refused, naming the
// directory, instead of stalling the scan (and with it hot reload and
// shutdown).
func TestHookYAMLNotRegular(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "fifo")
	os.Mkdir(fifo, 0o755)
	if err := syscall.Mkfifo(filepath.Join(fifo, "HOOK.yaml"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	big := writeHook(t, root, "big", map[string]string{"handler": "#!/bin/sh\n"})
	os.WriteFile(filepath.Join(big, "HOOK.yaml"), []byte("events: [command:*]\n#"+strings.Repeat("x", maxManifest)), 0o644)
	type found struct {
		hooks []DirHook
		diags []DirDiagnostic
	}
	done := make(chan found, 1)
	go func() { h, d := DiscoverDir(root); done <- found{h, d} }()
	var got found
	select {
	case got = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a FIFO as HOOK.yaml stalls the scan")
	}
	if len(got.hooks) != 0 || len(got.diags) != 2 {
		t.Fatalf("hooks %+v, diagnostics %+v", got.hooks, got.diags)
	}
	for i, want := range []string{"big: HOOK.yaml is over", "fifo/HOOK.yaml is a named pipe"} {
		if d := got.diags[i]; !d.Skipped || !strings.Contains(d.Msg, want) {
			t.Errorf("diagnostic %d = %+v, want %q", i, d, want)
		}
	}
}
