package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// persistentPy answers each request line: blocks `rm` commands, echoes the
// id; on "stale" it first writes an answer for another id; on "silent" it
// answers nothing; on "die" it exits.
const persistentPy = `#!/usr/bin/env python3
import json, sys, os
for line in sys.stdin:
    req = json.loads(line)
    cmd = (req.get("tool_input") or {}).get("command", "")
    if cmd == "silent":
        continue
    if cmd == "die":
        sys.exit(3)
    if cmd == "stale":
        print(json.dumps({"id": "999", "action": "block", "message": "stale"}), flush=True)
    ans = {"id": req["id"], "context": str(os.getpid())}
    if cmd.startswith("rm"):
        ans = {"id": req["id"], "action": "block", "message": "no rm"}
    print(json.dumps(ans), flush=True)
`

func persistentHook(t testing.TB, timeout time.Duration, n int) *Persistent {
	p := filepath.Join(t.TempDir(), "guard.py")
	if err := os.WriteFile(p, []byte(persistentPy), 0o755); err != nil {
		t.Fatal(err)
	}
	ph := NewPersistent(&ShellRunner{Environ: os.Environ()}, ShellSpec{Event: PreToolCallHook, Command: p, Timeout: timeout, Persistent: true}, n)
	t.Cleanup(ph.Close)
	return ph
}

func callTool(ph *Persistent, cmd string) (any, error) {
	return ph.Handler()(context.Background(), Event{Name: PreToolCallHook, Payload: &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": cmd}, SessionID: "s"}})
}

func TestPersistentHook(t *testing.T) {
	ph := persistentHook(t, 2*time.Second, 1)
	t.Run("decisions and one process", func(t *testing.T) {
		v, err := callTool(ph, "rm -rf /")
		if d, ok := v.(*ToolDecision); err != nil || !ok || d.Action != "block" || d.Message != "no rm" {
			t.Fatalf("v = %#v, %v", v, err)
		}
		pids := map[int]bool{}
		for i := 0; i < 5; i++ {
			res := ph.Call(context.Background(), []byte(`{"hook_event_name":"pre_tool_call","tool_input":{"command":"ls"}}`))
			var a struct{ Context string }
			if err := json.Unmarshal(res.Stdout, &a); err != nil || strings.Contains(string(res.Stdout), `"id"`) {
				t.Fatalf("answer %s: %v", res.Stdout, err)
			}
			var pid int
			fmt.Sscan(a.Context, &pid)
			pids[pid] = true
		}
		if len(pids) != 1 {
			t.Fatalf("served by %d processes, want 1", len(pids))
		}
	})
	t.Run("an answer for another id is dropped", func(t *testing.T) {
		v, err := callTool(ph, "stale")
		if err != nil || v != nil {
			t.Fatalf("took the stale answer: %#v, %v", v, err)
		}
	})
	t.Run("restarted after it dies", func(t *testing.T) {
		if _, err := callTool(ph, "die"); err == nil {
			t.Fatal("a hook that died without answering must fail")
		}
		v, err := callTool(ph, "rm x")
		if d, ok := v.(*ToolDecision); err != nil || !ok || d.Action != "block" {
			t.Fatalf("after restart: %#v, %v", v, err)
		}
	})
}

func TestPersistentHookSilentIsTimedOut(t *testing.T) {
	ph := persistentHook(t, 200*time.Millisecond, 1)
	for i := 0; i < 3; i++ { // the second miss replaces the process
		res := ph.Call(context.Background(), []byte(`{"tool_input":{"command":"silent"}}`))
		if !res.TimedOut {
			t.Fatalf("call %d: %+v", i, res)
		}
	}
	s := ph.spec
	s.FailClosed = true
	if _, err := s.Answer(&ShellRun{TimedOut: true}); err == nil {
		t.Fatal("a silent fail_closed hook must fail")
	}
	if v, err := callTool(ph, "rm x"); err != nil || v == nil {
		t.Fatalf("a replaced process answers again: %#v, %v", v, err)
	}
}

func TestPersistentHookConcurrency(t *testing.T) {
	ph := persistentHook(t, 5*time.Second, 3)
	var mu sync.Mutex
	pids := map[string]bool{}
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := ph.Call(context.Background(), []byte(`{"tool_input":{"command":"ls"}}`))
			var a struct{ Context string }
			if err := json.Unmarshal(res.Stdout, &a); err != nil {
				t.Errorf("answer %q: %v", res.Stdout, err)
			}
			mu.Lock()
			pids[a.Context] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(pids) > 3 {
		t.Fatalf("%d processes for concurrency 3", len(pids))
	}
}

// The two ten-line examples of docs/shell-hooks.md.
func TestPersistentDocExamples(t *testing.T) {
	for _, name := range []string{"persistent-guard.py", "persistent-guard.sh"} {
		t.Run(name, func(t *testing.T) {
			p, _ := filepath.Abs(filepath.Join("testdata", "shell", name))
			ph := NewPersistent(&ShellRunner{Environ: os.Environ()}, ShellSpec{Event: PreToolCallHook, Command: p, Timeout: 5 * time.Second, Persistent: true}, 1)
			defer ph.Close()
			for _, tc := range []struct {
				cmd   string
				block bool
			}{{"rm -rf /", true}, {"ls", false}, {"sudo rm -rf /home", true}} {
				v, err := callTool(ph, tc.cmd)
				d, _ := v.(*ToolDecision)
				if err != nil || (d != nil && d.Action == "block") != tc.block {
					t.Fatalf("%q: %#v, %v", tc.cmd, v, err)
				}
			}
		})
	}
}
