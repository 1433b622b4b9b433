package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// persistentSh answers each request line: blocks `rm` commands, echoes
// the id; on "stale" it first writes an answer for another id; on
// "silent" it answers nothing; on "die" it exits. It is /bin/sh, so no
// test waits on an interpreter's start.
const persistentSh = `#!/bin/sh
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
  cmd=$(printf '%s\n' "$line" | sed -n 's/.*"command":"\([^"]*\)".*/\1/p')
  case "$cmd" in
    silent) continue ;;
    die) exit 3 ;;
    stale) printf '{"id":"999","action":"block","message":"stale"}\n' ;;
  esac
  case "$cmd" in
    rm*) printf '{"id":"%s","action":"block","message":"no rm"}\n' "$id" ;;
    *) printf '{"id":"%s","context":"%s"}\n' "$id" "$$" ;;
  esac
done
`

func persistentHook(t testing.TB, timeout time.Duration, n int) *Persistent {
	p := filepath.Join(t.TempDir(), "guard.sh")
	if err := os.WriteFile(p, []byte(persistentSh), 0o755); err != nil {
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
	ph := persistentHook(t, time.Minute, 1)
	// started under the spec's generous timeout: the short budgets below
	// time the answer, never a process start
	if res := ph.Call(context.Background(), []byte(`{"tool_input":{"command":"ls"}}`)); len(res.Stdout) == 0 {
		t.Fatalf("warm-up: %+v", res)
	}
	for i := 0; i < 3; i++ { // the second miss replaces the process
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		res := ph.Call(ctx, []byte(`{"tool_input":{"command":"silent"}}`))
		cancel()
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

// notReadingSh never reads its input until the file "good" exists beside
// it; then it is persistentSh. It says it started by creating "started".
const notReadingSh = `#!/bin/sh
dir=$(dirname "$0")
if [ -e "$dir/good" ]; then exec "$dir/guard.sh"; fi
: > "$dir/started"
exec sleep 600
`

func notReadingHook(t *testing.T, timeout time.Duration) (*Persistent, string) {
	dir := t.TempDir()
	for name, body := range map[string]string{"guard.sh": persistentSh, "hook.sh": notReadingSh} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ph := NewPersistent(&ShellRunner{Environ: os.Environ()}, ShellSpec{Event: PreToolCallHook, Command: filepath.Join(dir, "hook.sh"), Timeout: timeout, Persistent: true}, 1)
	t.Cleanup(ph.Close)
	return ph, dir
}

// bigRequest is a request larger than a pipe's buffer (64 KiB).
func bigRequest() []byte {
	return []byte(`{"tool_input":{"command":"ls","pad":"` + strings.Repeat("x", 200<<10) + `"}}`)
}

// callReturns runs Call and fails if it is still blocked long after
// every deadline involved (real processes: real time, generously).
func callReturns(t *testing.T, ph *Persistent, ctx context.Context, payload []byte) *ShellRun {
	t.Helper()
	done := make(chan *ShellRun, 1)
	go func() { done <- ph.Call(ctx, payload) }()
	select {
	case res := <-done:
		return res
	case <-time.After(30 * time.Second):
		t.Fatal("Call still blocked 30 s on: a hook that does not read its input holds the turn")
		return nil
	}
}

// A hook that never reads its input cannot hold a call past its deadline
// or its cancellation; it is killed and the next call gets a fresh one.
func TestPersistentHookNotReading(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		ph, dir := notReadingHook(t, time.Second)
		res := callReturns(t, ph, context.Background(), bigRequest())
		if !res.TimedOut {
			t.Fatalf("result %+v, want timed out", res)
		}
		os.WriteFile(filepath.Join(dir, "good"), nil, 0o644)
		ph.spec.Timeout = time.Minute // the replacement's start is not timed
		if v, err := callTool(ph, "rm x"); err != nil || v == nil {
			t.Fatalf("the replacement does not answer: %#v, %v", v, err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ph, dir := notReadingHook(t, time.Hour)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan *ShellRun, 1)
		go func() { done <- callReturns(t, ph, ctx, bigRequest()) }()
		waitFor(t, func() bool { _, err := os.Stat(filepath.Join(dir, "started")); return err == nil }, "the hook to start")
		cancel() // what /stop does
		res := <-done
		if res.SpawnErr == nil && !res.TimedOut {
			t.Fatalf("a canceled call succeeded: %+v", res)
		}
		os.WriteFile(filepath.Join(dir, "good"), nil, 0o644)
		if v, err := callTool(ph, "rm x"); err != nil || v == nil {
			t.Fatalf("the replacement does not answer: %#v, %v", v, err)
		}
	})
}

// A call waiting out the restart backoff holds no lock: Close is not
// kept waiting, and ends the wait.
func TestPersistentBackoffHoldsNoLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ph := NewPersistent(&ShellRunner{Environ: os.Environ()}, ShellSpec{Event: PreToolCallHook, Command: "/nonexistent/hook", Timeout: time.Minute, Persistent: true}, 1)
		for i := 0; i < 2; i++ { // two failed starts: the next waits 100 ms
			if res := ph.Call(t.Context(), []byte(`{}`)); res.SpawnErr == nil {
				t.Fatalf("start %d of a missing command: %+v", i, res)
			}
		}
		done := make(chan *ShellRun, 1)
		go func() { done <- ph.Call(context.Background(), []byte(`{}`)) }()
		synctest.Wait() // the call sleeps in the backoff
		start := time.Now()
		ph.Close()
		if waited := time.Since(start); waited != 0 {
			t.Fatalf("Close waited %s behind a restart backoff", waited)
		}
		res := <-done
		if !errors.Is(res.SpawnErr, errPersistentStopped) || time.Since(start) != 0 {
			t.Fatalf("the waiting call after Close: %+v after %s", res, time.Since(start))
		}
	})
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
			ph := NewPersistent(&ShellRunner{Environ: os.Environ()}, ShellSpec{Event: PreToolCallHook, Command: p, Timeout: time.Minute, Persistent: true}, 1) // a minute: Python may start slowly
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
