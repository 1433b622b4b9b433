package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/heraldgw/herald/agent/sandbox"
	"github.com/heraldgw/herald/hooks"
)

// Terminal output limits.
const (
	// MaxTerminalOutput is what the model sees at most: 40% head, 60%
	// tail, a note in between.
	MaxTerminalOutput = 50_000
	// rawCapture bounds what is kept of a command's output before any
	// processing (head and tail halves), so a runaway command cannot
	// exhaust memory.
	rawCapture = 8 << 20
)

// Terminal runs a shell command in its own process group, in the workdir,
// with a timeout. On timeout or cancellation the whole group gets SIGTERM
// and, KillGrace later, SIGKILL. Output (stdout and stderr together) goes
// through transform_terminal_output first (raw), then is ANSI-stripped,
// redacted and cut to MaxTerminalOutput. Dangerous commands
// (DetectDangerous) need approval first.
type Terminal struct {
	Paths *Paths
	// Timeout is the default per command (180 s); the model may ask for
	// less or more, up to MaxTimeout (600 s).
	Timeout    time.Duration
	MaxTimeout time.Duration
	// KillGrace is the wait between SIGTERM and SIGKILL on timeout (1 s);
	// on cancellation the group is killed at once.
	KillGrace time.Duration
	// Shell runs the command as Shell -c command (default /bin/sh).
	Shell string
	// Env is the environment (default: the process's), already scrubbed
	// of herald's own secrets by the caller.
	Env []string
	// Sandbox confines the command (see package sandbox); nil runs it
	// as a plain child process.
	Sandbox *sandbox.Policy
}

var _ Tool = (*Terminal)(nil)

func (*Terminal) Name() string { return "terminal" }
func (*Terminal) Description() string {
	return "Run a shell command in the working directory and return its combined output and exit code. " +
		"Dangerous commands (recursive deletes, sudo, disk writes, piping downloads to a shell, force pushes, …) need the user's approval."
}
func (*Terminal) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"command":{"type":"string","description":"The shell command to run"},` +
		`"timeout":{"type":"integer","description":"Seconds before the command is killed (default 180)"},` +
		`"workdir":{"type":"string","description":"Directory to run in, relative to the working directory"}},` +
		`"required":["command"]}`)
}

type terminalResult struct {
	Output   string  `json:"output"`
	ExitCode int     `json:"exit_code"`
	Error    *string `json:"error"`
}

func (t *Terminal) Run(ctx context.Context, c *Call) (string, error) {
	command := c.String("command")
	if strings.TrimSpace(command) == "" {
		return "", errors.New("terminal: command is required")
	}
	dir := ""
	if t.Paths != nil {
		dir = t.Paths.Workdir
		if w := c.String("workdir"); w != "" {
			d, err := t.Paths.Resolve(w)
			if err != nil {
				return "", err
			}
			dir = d
		}
	}
	if ds := DetectDangerous(command); len(ds) > 0 {
		keys, desc := dangerKeys(ds)
		if err := c.Approve(ctx, command, desc, keys); err != nil {
			return "", err
		}
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 180 * time.Second
	}
	maxT := t.MaxTimeout
	if maxT <= 0 {
		maxT = 600 * time.Second
	}
	if s := c.Number("timeout", 0); s > 0 {
		timeout = min(time.Duration(s*float64(time.Second)), maxT)
	}
	raw, code, runErr := t.exec(ctx, command, dir, timeout)
	if ctx.Err() != nil {
		return "", fmt.Errorf("terminal: interrupted: %w", ctx.Err())
	}
	reg := c.hooks()
	if reg.Has(hooks.TransformTerminalOutputHook) {
		if out, ok := reg.TransformTerminalOutput(ctx, &hooks.TerminalOutput{
			Command: command, Output: raw, ReturnCode: code, ExitCode: code, Cwd: dir, TaskID: c.SessionID, EnvType: "local",
		}); ok {
			raw = out
		}
	}
	// redact before the final cut, so that no half of a secret survives
	// it; a coarse cut first keeps the redactor off megabytes that would
	// be dropped anyway (its edges are far outside what is kept)
	out := CutMiddle(c.redactor().Redact(CutMiddle(StripANSI(raw), 4*MaxTerminalOutput)), MaxTerminalOutput)
	res := terminalResult{Output: out, ExitCode: code}
	if runErr != nil {
		msg := runErr.Error()
		res.Error = &msg
	}
	b, err := json.Marshal(res)
	return string(b), err
}

var errTimedOut = errors.New("timed out")

// exec runs the command and returns its raw output and exit code. A
// timeout is reported as an error with exit code 124; a cancelled run
// returns 130.
func (t *Terminal) exec(ctx context.Context, command, dir string, timeout time.Duration) (string, int, error) {
	shell := t.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	var cmd *exec.Cmd
	if t.Sandbox != nil {
		var err error
		if cmd, err = t.Sandbox.Command(shell, command); err != nil {
			return "", 126, fmt.Errorf("terminal: %w", err)
		}
	} else {
		cmd = exec.Command(shell, "-c", command)
	}
	cmd.Dir = dir
	cmd.Env = t.Env
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &headTail{limit: rawCapture}
	cmd.Stdout, cmd.Stderr = out, out
	// something that escaped the group may hold the pipe open: stop
	// waiting for it after a while
	cmd.WaitDelay = 2 * time.Second
	if err := startTracked(cmd); err != nil {
		return "", 127, fmt.Errorf("terminal: start: %w", err)
	}
	defer untrack(cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr, why error
	select {
	case waitErr = <-done:
	case <-timer.C:
		why = fmt.Errorf("%w after %s; the command and its children were killed", errTimedOut, timeout)
		grace := t.KillGrace
		if grace <= 0 {
			grace = time.Second
		}
		waitErr = killGroup(cmd.Process.Pid, grace, done)
	case <-ctx.Done():
		why = ctx.Err()
		waitErr = killGroup(cmd.Process.Pid, 0, done)
	}
	switch {
	case errors.Is(why, errTimedOut):
		return out.String(), 124, why
	case why != nil:
		return out.String(), 130, why
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		code = ee.ExitCode()
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			code = 128 + int(st.Signal())
		}
	} else if waitErr != nil && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return out.String(), 1, fmt.Errorf("terminal: %w", waitErr)
	}
	return out.String(), code, nil
}

// groups holds the process group of every terminal command running now,
// so that KillProcessGroups can end them when herald exits without
// unwinding (no cancellation reaches them then).
var groups struct {
	mu      sync.Mutex
	running map[int]struct{}
	// killed is set by KillProcessGroups: a command started after it is
	// killed at once
	killed bool
}

// startTracked starts cmd (in a process group of its own) and records its
// group.
func startTracked(cmd *exec.Cmd) error {
	groups.mu.Lock()
	defer groups.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	if groups.killed {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return nil
	}
	if groups.running == nil {
		groups.running = map[int]struct{}{}
	}
	groups.running[cmd.Process.Pid] = struct{}{}
	return nil
}

func untrack(pgid int) {
	groups.mu.Lock()
	delete(groups.running, pgid)
	groups.mu.Unlock()
}

// KillProcessGroups sends SIGKILL to the process group of every terminal
// command still running, and to any started from now on. herald calls it
// before it exits at once (a second Ctrl-C), so that no command outlives
// it.
func KillProcessGroups() {
	groups.mu.Lock()
	defer groups.mu.Unlock()
	groups.killed = true
	for pgid := range groups.running {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// killGroup sends SIGTERM to the process group, then SIGKILL after grace
// (at once when grace is 0), and waits for the command to be reaped.
func killGroup(pid int, grace time.Duration, done <-chan error) error {
	if grace > 0 {
		syscall.Kill(-pid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case err := <-done:
			// the leader is gone; make sure nothing of its group lingers
			syscall.Kill(-pid, syscall.SIGKILL)
			return err
		case <-t.C:
		}
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	return <-done
}

// headTail keeps the first and the last limit/2 bytes written to it.
type headTail struct {
	mu      sync.Mutex
	limit   int
	head    []byte
	tail    []byte // ring, of at most limit/2 bytes
	pos     int
	dropped int64
}

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	half := h.limit / 2
	if room := half - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(h.tail) < half {
			k := min(half-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := min(half-h.pos, len(p))
		copy(h.tail[h.pos:], p[:k])
		h.dropped += int64(k)
		h.pos = (h.pos + k) % half
		p = p[k:]
	}
	return n, nil
}

func (h *headTail) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	b.Write(h.head)
	if h.dropped > 0 {
		fmt.Fprintf(&b, "\n[… %d bytes of output not kept …]\n", h.dropped)
	}
	b.Write(h.tail[h.pos:])
	b.Write(h.tail[:h.pos])
	return b.String()
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[@-Z\\-_]`)

// StripANSI removes terminal escape sequences (colours, cursor moves,
// titles).
func StripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansiRE.ReplaceAllString(s, "")
}

// CutMiddle returns s unchanged when it fits in max bytes; otherwise its
// first 40% and last 60% around a note saying how much was left out, the
// whole at most max bytes and cut on UTF-8 boundaries.
func CutMiddle(s string, max int) string {
	if len(s) <= max {
		return s
	}
	note := fmt.Sprintf("\n\n[… %d bytes of output cut: showing the first 40%% and the last 60%% …]\n\n", len(s))
	keep := max - len(note)
	if keep <= 0 {
		return s[:runeStart(s, max)]
	}
	head := keep * 4 / 10
	tail := keep - head
	h := runeStart(s, head)
	tstart := len(s) - tail
	for tstart < len(s) && !utf8.RuneStart(s[tstart]) {
		tstart++
	}
	return s[:h] + note + s[tstart:]
}

// runeStart returns the largest i <= n that starts a rune.
func runeStart(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}
