package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/shlex"
	"github.com/heraldgw/herald"
)

// ShellOutputCap bounds what is kept of a hook's stdout and stderr.
const ShellOutputCap = 1 << 20

// killGrace is how long a timed-out hook's process group has between
// SIGTERM and SIGKILL.
const killGrace = 500 * time.Millisecond

// ShellRunner runs shell hooks.
type ShellRunner struct {
	// Environ is every hook's environment: the gateway's, secrets removed.
	Environ []string
	// Lookup returns a variable a spec opts back in with env:.
	Lookup func(name string) (string, bool)
	Log    *slog.Logger
	// Redactor masks known secrets in every payload before a hook reads
	// it (nil: credential shapes only).
	Redactor *herald.Redactor
	// Judge is the model behind prompt and agent entries; without one
	// they do not load.
	Judge Judge
}

// ShellRun is the outcome of one spawn.
type ShellRun struct {
	Argv     []string
	Stdin    []byte
	Stdout   []byte
	Stderr   []byte
	Exit     int
	Elapsed  time.Duration
	TimedOut bool
	// SpawnErr is set when the command could not be started.
	SpawnErr error
	// Truncated is set when output went over ShellOutputCap.
	Truncated bool
}

// SplitCommand splits a command line as a POSIX shell splits words, after
// expanding a leading ~; it never runs a shell.
func SplitCommand(command string) ([]string, error) {
	argv, err := shlex.Split(expandHome(command))
	if err != nil {
		return nil, fmt.Errorf("command %q cannot be parsed: %w", command, err)
	}
	if len(argv) == 0 {
		return nil, errors.New("empty command")
	}
	for i := range argv {
		argv[i] = expandHome(argv[i])
	}
	return argv, nil
}

func expandHome(s string) string {
	if s == "~" || strings.HasPrefix(s, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, s[1:])
		}
	}
	return s
}

// Run spawns the spec's command with stdin, in its own process group,
// killing the whole group (SIGTERM, then SIGKILL) on timeout.
func (r *ShellRunner) Run(ctx context.Context, s *ShellSpec, stdin []byte) *ShellRun {
	res := &ShellRun{Stdin: stdin, Exit: -1}
	argv, err := s.argv, error(nil)
	if argv == nil {
		if argv, err = s.Argv(); err != nil {
			res.SpawnErr = err
			return res
		}
	}
	res.Argv = argv
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = r.environ(s)
	cmd.Dir = s.ProjectDir
	cmd.Stdin = bytes.NewReader(stdin)
	out := &capBuffer{max: ShellOutputCap}
	errb := &capBuffer{max: ShellOutputCap}
	cmd.Stdout, cmd.Stderr = out, errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		pid := cmd.Process.Pid
		syscall.Kill(-pid, syscall.SIGTERM)
		time.AfterFunc(killGrace, func() { syscall.Kill(-pid, syscall.SIGKILL) })
		return nil
	}
	cmd.WaitDelay = killGrace + time.Second
	start := time.Now()
	err = cmd.Run()
	res.Elapsed = time.Since(start)
	res.Stdout, res.Stderr = out.Bytes(), errb.Bytes()
	res.Truncated = out.over || errb.over
	if cmd.ProcessState != nil {
		res.Exit = cmd.ProcessState.ExitCode()
	}
	if ctx.Err() == context.DeadlineExceeded {
		res.TimedOut = true
		return res
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) && cmd.ProcessState == nil {
		switch {
		case errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist):
			res.SpawnErr = fmt.Errorf("command not found: %s", argv[0])
		case errors.Is(err, os.ErrPermission):
			res.SpawnErr = fmt.Errorf("command not executable: %s", argv[0])
		default:
			res.SpawnErr = err
		}
	}
	return res
}

// Argv is what runs: Claude Code's shell form (sh -c and the command as
// written) in the claude dialect, Hermes' split command line, no shell,
// otherwise.
func (s *ShellSpec) Argv() ([]string, error) {
	if s.Dialect == "claude" {
		cmd := s.Shell
		if cmd == "" {
			cmd = s.Command
		}
		if s.ShellProgram != "" {
			return []string{s.ShellProgram, "-c", cmd}, nil
		}
		return []string{"/bin/sh", "-c", cmd}, nil
	}
	return SplitCommand(s.Command)
}

func (r *ShellRunner) environ(s *ShellSpec) []string {
	env := append([]string(nil), r.Environ...)
	if s.Dialect == "claude" {
		env = s.claudeEnv(env)
	}
	for _, name := range s.Env {
		if r.Lookup == nil {
			break
		}
		if v, ok := r.Lookup(name); ok {
			env = setEnv(env, name, v)
		}
	}
	for _, kv := range s.extraEnv {
		k, v, _ := strings.Cut(kv, "=")
		env = setEnv(env, k, v)
	}
	return env
}

// maxArgument is the longest single argument or environment string Linux
// takes (MAX_ARG_STRLEN, 128 KiB with its NUL): a longer one fails the
// spawn with E2BIG.
const maxArgument = 128<<10 - 1

// ShellQuote quotes s as one POSIX shell word: single quotes, each ' as
// '\”. Nothing inside is expanded.
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ForCall is an OpenHarness-form entry ready for one call: /bin/sh -c
// with $ARGUMENTS replaced by the payload as one quoted word, and
// OPENHARNESS_HOOK_EVENT and OPENHARNESS_HOOK_PAYLOAD set. Other entries
// are returned as they are. A payload too long for an argument is an
// error, not a spawn that fails with E2BIG.
func (s ShellSpec) ForCall(event string, payload []byte) (ShellSpec, error) {
	if !s.OpenHarness {
		return s, nil
	}
	script := strings.ReplaceAll(s.Command, "$ARGUMENTS", ShellQuote(string(payload)))
	env := "OPENHARNESS_HOOK_PAYLOAD=" + string(payload)
	if len(script) > maxArgument || len(env) > maxArgument {
		return s, fmt.Errorf("the payload is %d bytes, more than a command line or environment variable can hold (%d); an entry with $ARGUMENTS cannot take it (drop $ARGUMENTS and read the payload from stdin)", len(payload), maxArgument)
	}
	s.argv = []string{"/bin/sh", "-c", script}
	s.extraEnv = []string{"OPENHARNESS_HOOK_EVENT=" + event, env}
	return s, nil
}

// capBuffer keeps the first max bytes and keeps draining the rest, so a
// chatty hook never blocks on a full pipe.
type capBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *capBuffer) Write(p []byte) (int, error) {
	room := b.max - b.Len()
	if len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// shellEnvelope is Hermes' stdin for shell hooks, keys in Hermes' order.
type shellEnvelope struct {
	HookEventName string                     `json:"hook_event_name"`
	ToolName      *string                    `json:"tool_name"`
	ToolInput     json.RawMessage            `json:"tool_input"`
	SessionID     string                     `json:"session_id"`
	Cwd           string                     `json:"cwd"`
	Extra         map[string]json.RawMessage `json:"extra"`
}

// ShellPayload builds Hermes' stdin for an event: tool_name, args (as
// tool_input, null unless an object) and session_id (falling back to
// parent_session_id) lifted out of the payload, everything else under
// extra. The payload's fields are carried as encoded, never decoded and
// encoded again.
func ShellPayload(event string, payload any) ([]byte, error) {
	b, err := Context(payload)
	if err != nil {
		return nil, err
	}
	var kw map[string]json.RawMessage
	if err := json.Unmarshal(b, &kw); err != nil {
		return nil, err
	}
	env := shellEnvelope{HookEventName: event, ToolInput: json.RawMessage("null"), Extra: make(map[string]json.RawMessage, len(kw))}
	str := func(key string) (string, bool) {
		raw := kw[key]
		if len(raw) == 0 || raw[0] != '"' {
			return "", false
		}
		var v string
		err := json.Unmarshal(raw, &v)
		return v, err == nil
	}
	if tn, ok := str("tool_name"); ok {
		env.ToolName = &tn
	}
	if args := kw["args"]; len(args) > 0 && args[0] == '{' {
		env.ToolInput = args
	}
	sid, _ := str("session_id")
	if sid == "" {
		sid, _ = str("parent_session_id")
	}
	env.SessionID = sid
	env.Cwd = workingDir()
	for k, v := range kw {
		switch k {
		case "tool_name", "args", "session_id", "parent_session_id":
			continue
		}
		env.Extra[k] = v
	}
	return json.Marshal(env)
}

func payloadMap(payload any) (map[string]any, error) {
	b, err := Context(payload)
	if err != nil {
		return nil, err
	}
	kw := map[string]any{}
	if err := json.Unmarshal(b, &kw); err != nil {
		return nil, err
	}
	return kw, nil
}

// Answer reads one run's outcome into the combiners' result, Hermes'
// rules plus exit 2 and fail_closed: exit 2 on pre_tool_call blocks (the
// message from stdout's JSON, else stderr's first 400 characters, else
// the default); with fail_closed a spawn failure, timeout, non-zero exit
// with no decision, or unparseable stdout is an error the combiner turns
// into a block. Without it those are errors that fail open. On the
// observer points only the claude dialect answers (claudeAnswer).
func (s *ShellSpec) Answer(res *ShellRun) (any, error) {
	if res.SpawnErr != nil {
		return nil, res.SpawnErr
	}
	if res.TimedOut {
		return nil, fmt.Errorf("timed out after %s", s.Timeout)
	}
	if p, _ := Lookup(s.Event); p.Kind == Observer || (s.Dialect == "claude" && s.Event == PreLLMCallHook) {
		if s.Dialect != "claude" {
			return nil, nil
		}
		return s.claudeAnswer(res)
	}
	v, perr := ParseAnswer(s.Event, res.Stdout)
	if perr != nil && s.OpenHarness && res.Exit == 0 {
		// OpenHarness reads no JSON: its scripts print what they like,
		// and exit 0 is success
		return nil, nil
	}
	if s.Dialect == "claude" {
		if d, ok := v.(*ToolDecision); ok && d.Args != nil {
			d.Args = fromClaudeArgs(d.Args)
		}
	}
	if s.Event == PreToolCallHook && res.Exit == 2 {
		if d, ok := v.(*ToolDecision); ok && d.Action == "block" {
			return d, nil
		}
		return Block(defaultMsg(clip400(strings.TrimSpace(string(res.Stderr))))), nil
	}
	if perr != nil {
		return nil, perr
	}
	if res.Exit != 0 && v == nil {
		return nil, fmt.Errorf("exited with status %d and no decision", res.Exit)
	}
	return v, nil
}

// claudeAnswer reads a claude-dialect hook's outcome on the points where
// Claude Code reads exit codes by event: stdout only on exit 0 (JSON, or
// plain text that becomes context for UserPromptSubmit and SessionStart);
// on exit 2 stderr blocks the prompt, is shown to the model (PostToolUse),
// sends the agent back to work (Stop, SubagentStop) or is shown to the
// person (SessionStart); any other status is an error that changes
// nothing.
func (s *ShellSpec) claudeAnswer(res *ShellRun) (any, error) {
	stderr := clip400(strings.TrimSpace(string(res.Stderr)))
	switch res.Exit {
	case 0:
	case 2:
		switch s.Event {
		case PreLLMCallHook:
			return &LLMContext{Feedback: &Feedback{Block: true, Reason: defaultMsg(stderr)}}, nil
		case PostToolCallHook:
			if stderr == "" {
				return nil, nil
			}
			return &Feedback{Block: true, Reason: stderr}, nil
		case PostLLMCallHook, SubagentStopHook:
			return &Feedback{Block: true, Reason: firstStr(stderr, DefaultContinueReason)}, nil
		case OnSessionStartHook:
			if stderr == "" {
				return nil, nil
			}
			return &Feedback{Notice: stderr}, nil
		}
		return nil, nil
	default:
		return nil, fmt.Errorf("exited with status %d", res.Exit)
	}
	v, err := ParseAnswer(s.Event, res.Stdout)
	if err != nil && (s.Event == PreLLMCallHook || s.Event == OnSessionStartHook) {
		// Claude Code: plain stdout of these is context for the model
		c := ClipContext(strings.TrimSpace(string(res.Stdout)))
		if s.Event == PreLLMCallHook {
			return &LLMContext{Context: c}, nil
		}
		return &Feedback{Context: c}, nil
	}
	return v, err
}

// Inline reports whether the spec is called in line on an observer point
// (Subscription.Inline): every shell hook on post_tool_call (Hermes calls
// them before the next tool runs), and claude-dialect hooks on the
// points whose answers Claude Code reads.
func (s *ShellSpec) Inline() bool {
	if textAnswerEvents[s.Event] && (s.Kind() == TypePrompt || s.Kind() == TypeAgent) {
		return true // their text is read by the emitter
	}
	switch s.Event {
	case PostToolCallHook:
		return true
	case PostLLMCallHook, SubagentStopHook, OnSessionStartHook:
		return s.Dialect == "claude"
	}
	return false
}

// Payload builds the stdin for this spec's dialect.
func (s *ShellSpec) Payload(event string, payload any) ([]byte, error) {
	if s.Dialect == "claude" {
		return ClaudePayload(event, payload)
	}
	return ShellPayload(event, payload)
}

// Handler returns the registry handler that runs this spec, whatever its
// type.
func (r *ShellRunner) Handler(s ShellSpec) Handler {
	if s.Kind() != TypeCommand {
		return r.typed(s).handle
	}
	s.argv, _ = s.Argv() // split once; a bad command fails at each call
	return func(ctx context.Context, ev Event) (any, error) {
		in, err := s.Payload(ev.Name, ev.Payload)
		if err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		in = RedactJSON(r.Redactor, in)
		call, err := s.ForCall(ev.Name, in)
		if err != nil {
			return r.settle(&s, ev, &ShellRun{Stdin: in, Exit: -1, SpawnErr: err})
		}
		return r.settle(&call, ev, r.Run(ctx, &call, in))
	}
}

// typed is the runner of an http, prompt or agent entry.
func (r *ShellRunner) typed(s ShellSpec) *typedHook {
	h := &typedHook{spec: s.TypeSpec, label: s.Name(), timeout: s.Timeout, encode: s.Payload,
		red: r.Redactor, judge: r.Judge, lookup: r.Lookup, log: r.log()}
	if s.Dialect == "claude" {
		// a Claude Code http hook answers as its command hooks print
		h.parse = func(event string, body []byte) (any, error) { return s.Answer(&ShellRun{Stdout: body}) }
	}
	return h
}

// Try runs an http, prompt or agent entry once and returns its answer or
// its failure as the combiners would see them (herald hooks test and
// doctor).
func (r *ShellRunner) Try(ctx context.Context, s ShellSpec, event string, payload any) (any, error) {
	return r.typed(s).answer(ctx, Event{Name: event, Payload: payload, Time: time.Now()})
}

// settle logs one run's outcome and turns it into the handler's answer.
func (r *ShellRunner) settle(s *ShellSpec, ev Event, res *ShellRun) (any, error) {
	log := r.log().With("hook", s.Name(), "event", ev.Name)
	if res.Truncated {
		log.Warn("shell hook output over 1 MiB; truncated")
	}
	v, err := s.Answer(res)
	if len(res.Stderr) > 0 && !suppressed(v) {
		log.Debug("shell hook stderr", "stderr", clip400(string(res.Stderr)))
	}
	if res.Exit > 0 && res.Exit != 2 {
		log.Warn(fmt.Sprintf("shell hook exited %d", res.Exit))
	}
	if err != nil && !s.FailClosed && CanBlockOnFailure(s.Event) {
		err = fmt.Errorf("%w; failing open (block_on_failure: true would block it)", err)
	}
	if p, ok := Lookup(ev.Name); ok && p.Kind == Observer {
		if err != nil {
			log.Warn("shell hook failed", "err", err)
		}
		return v, nil // read by Notify's in-line callers only
	}
	return v, err
}

// suppressed reports whether an answer asked that the hook's output not
// be logged (Claude Code's suppressOutput).
func suppressed(v any) bool {
	var fb *Feedback
	switch x := v.(type) {
	case *Feedback:
		fb = x
	case *ToolDecision:
		fb = x.Feedback
	case *LLMContext:
		fb = x.Feedback
	}
	return fb != nil && fb.Suppress
}

// clip400 keeps the first 400 characters of s, as Hermes quotes a
// hook's stderr (never cutting a character in two).
func clip400(s string) string {
	n := 0
	for i := range s {
		if n == 400 {
			return s[:i]
		}
		n++
	}
	return s
}

func (r *ShellRunner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// ReadFrom hides the embedded buffer's ReadFrom, which would bypass the
// cap (os/exec copies with io.Copy, which prefers ReadFrom).
func (b *capBuffer) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{b}, r)
}

// workingDir is the process's working directory, as a payload's cwd
// reports it: the kernel's answer (getcwd, one system call, symbolic links
// resolved, as Python's os.getcwd gives Hermes' hooks), read at each call
// so that a change of directory shows.
func workingDir() string {
	if d, err := syscall.Getwd(); err == nil {
		return d
	}
	d, _ := os.Getwd()
	return d
}
