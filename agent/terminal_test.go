package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/hooks"
)

// runTerminal runs one terminal call through Agent.Run (so hooks,
// approvals and the redactor apply) and returns the decoded result.
func runTerminal(t *testing.T, term *Terminal, reg *hooks.Registry, args map[string]any) terminalResult {
	t.Helper()
	m := toolThenText("terminal", args)
	a := newAgent(m, reg, term)
	a.Redactor = herald.NewRedactor("hunter2-the-secret-value")
	a.ApprovalMode = ModeYolo
	if _, err := a.Run(context.Background(), "go", Options{Turn: Turn{SessionID: "s"}}); err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	raw := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	var r terminalResult
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("terminal result %q: %v", raw, err)
	}
	return r
}

func TestTerminalOutput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		command string
		want    string
		code    int
	}{
		{"stdout and stderr", "echo out; echo err >&2", "out\nerr\n", 0},
		{"exit code", "echo x; exit 3", "x\n", 3},
		{"ansi stripped", `printf '\033[31mred\033[0m \033]0;title\007plain\n'`, "red plain\n", 0},
		{"secrets redacted", "echo key=sk-abcdefghijklmnopqrstuvwxyz012345 pw hunter2-the-secret-value", "key=[REDACTED] pw [REDACTED]\n", 0},
		{"runs in the workdir", "pwd", dir + "\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runTerminal(t, &Terminal{Paths: &Paths{Workdir: dir}}, hooks.NewRegistry(nil), map[string]any{"command": tc.command})
			if r.Output != tc.want || r.ExitCode != tc.code || r.Error != nil {
				t.Errorf("got %q code %d err %v", r.Output, r.ExitCode, r.Error)
			}
		})
	}
}

func TestTerminalCut(t *testing.T) {
	dir := t.TempDir()
	r := runTerminal(t, &Terminal{Paths: &Paths{Workdir: dir}}, hooks.NewRegistry(nil), map[string]any{"command": "seq 1 40000"})
	out := r.Output
	if len(out) > MaxTerminalOutput {
		t.Errorf("output %d bytes", len(out))
	}
	if !strings.HasPrefix(out, "1\n2\n3\n") || !strings.HasSuffix(out, "39999\n40000\n") {
		t.Errorf("head or tail lost: %q … %q", out[:20], out[len(out)-20:])
	}
	i := strings.Index(out, "[… ")
	j := strings.Index(out, " …]")
	if i < 0 || j < 0 {
		t.Fatal("no cut note")
	}
	head, tail := i, len(out)-j
	if ratio := float64(head) / float64(head+tail); ratio < 0.38 || ratio > 0.42 {
		t.Errorf("head is %.2f of the kept output, want 0.40", ratio)
	}
}

func TestCutMiddle(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		max  int
	}{
		{"fits", "short", 100},
		{"ascii", strings.Repeat("a", 1000), 300},
		{"utf8", strings.Repeat("é✓", 500), 301},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := CutMiddle(tc.in, tc.max)
			if len(out) > tc.max {
				t.Errorf("%d bytes > %d", len(out), tc.max)
			}
			if !strings.ContainsRune(out, '\uFFFD') && !json.Valid([]byte(strconv.Quote(out))) {
				t.Error("invalid")
			}
			for _, r := range out {
				if r == '\uFFFD' {
					t.Fatal("cut inside a rune")
				}
			}
			if len(tc.in) <= tc.max && out != tc.in {
				t.Error("changed a string that fits")
			}
		})
	}
}

func TestTransformTerminalOutput(t *testing.T) {
	dir := t.TempDir()
	reg := hooks.NewRegistry(nil)
	var seen *hooks.TerminalOutput
	reg.Subscribe(hooks.Subscription{Name: "tx", Events: []string{hooks.TransformTerminalOutputHook},
		Handler: hooks.Func(func(ctx context.Context, p *hooks.TerminalOutput) any {
			cp := *p
			seen = &cp
			// the replacement is still stripped, redacted and cut
			return "\x1b[1mbold\x1b[0m sk-abcdefghijklmnopqrstuvwxyz012345 " + strings.Repeat("x", 200_000)
		})})
	r := runTerminal(t, &Terminal{Paths: &Paths{Workdir: dir}}, reg, map[string]any{"command": `printf '\033[32mraw\033[0m'; exit 2`})
	if seen == nil || seen.Output != "\x1b[32mraw\x1b[0m" || seen.ReturnCode != 2 || seen.ExitCode != 2 || seen.Command == "" || seen.Cwd != dir || seen.EnvType != "local" || seen.TaskID != "s" {
		t.Errorf("hook saw %+v", seen)
	}
	if !strings.HasPrefix(r.Output, "bold [REDACTED] xxx") || len(r.Output) > MaxTerminalOutput || strings.Contains(r.Output, "\x1b") {
		t.Errorf("output %q…", r.Output[:40])
	}
	if r.ExitCode != 2 {
		t.Errorf("exit code %d", r.ExitCode)
	}
	drain(t, reg)
}

// TestTerminalTimeoutKillsGroup uses real time: a real process group
// cannot run inside a synctest bubble.
func TestTerminalTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	term := &Terminal{Paths: &Paths{Workdir: dir}, KillGrace: 200 * time.Millisecond}
	start := time.Now()
	cmd := fmt.Sprintf(`trap '' TERM; echo started; sleep 30 & echo $! > %s; wait; wait`, pidFile)
	r := runTerminal(t, term, hooks.NewRegistry(nil), map[string]any{"command": cmd, "timeout": 0.3})
	took := time.Since(start)
	t.Logf("timed-out command returned after %s", took)
	if took > 5*time.Second {
		t.Errorf("took %s", took)
	}
	if r.Error == nil || !strings.Contains(*r.Error, "timed out") || r.ExitCode != 124 || r.Output != "started\n" {
		t.Errorf("result %+v", r)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	waitGone(t, pid)
}

// waitGone fails the test unless pid is gone within 5 s.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d survived the group kill", pid)
		}
		time.Sleep(10 * time.Millisecond) // polling the process table: there is no event to wait on
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func TestTerminalWorkdirConfined(t *testing.T) {
	dir := t.TempDir()
	m := toolThenText("terminal", map[string]any{"command": "pwd", "workdir": "/"})
	a := newAgent(m, hooks.NewRegistry(nil), &Terminal{Paths: &Paths{Workdir: dir}})
	a.Run(context.Background(), "x", Options{})
	reqs := m.requests()
	mustContain(t, reqs[1].Messages[len(reqs[1].Messages)-1].Content, "outside the working directory")
}
