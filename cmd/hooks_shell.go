package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/heraldgw/herald/cron"
	"github.com/heraldgw/herald/hooks"
)

// Shell hooks: the hooks: block of config.yaml, attached in the gateway
// and in herald chat, and the `herald hooks` subcommands that test,
// approve, revoke and check them.

func init() {
	gatewayHooks = append(gatewayHooks, startShellHooks)
	chatHooks = append(chatHooks, startShellHooks)
	hooksSubcommands["test"] = hooksTest
	hooksSubcommands["allow"] = hooksAllow
	hooksSubcommands["revoke"] = hooksRevoke
	hooksSubcommands["rm"] = hooksRevoke
	hooksSubcommands["remove"] = hooksRevoke
	hooksSubcommands["doctor"] = hooksDoctor
	hookListers = append(hookListers, listShellHooks)
}

// shellSpecs is every shell hook: the hooks: block of config.yaml, then
// the Claude Code plugins (plugins.claude) and settings files
// (claude_settings). Claude-dialect hooks get the working directory as
// CLAUDE_PROJECT_DIR and identical ones run once.
func (a *app) shellSpecs(logIt bool) []hooks.ShellSpec {
	specs, warns, infos := a.loadShellSpecs()
	if logIt {
		for _, w := range warns {
			a.log.Warn(w)
		}
		for _, i := range infos {
			a.log.Info(i)
		}
	}
	return specs
}

func (a *app) loadShellSpecs() (specs []hooks.ShellSpec, warns, infos []string) {
	specs, warns, infos = hooks.ParseShellHooks(a.cfg.Hooks.Node)
	for _, f := range a.claudeFiles(&warns, &infos) {
		s, w, err := hooks.LoadClaudeFile(f)
		if err != nil {
			warns = append(warns, err.Error())
		}
		specs, warns = append(specs, s...), append(warns, w...)
	}
	project, _ := toolDir(a.cfg.Agent.Workdir)
	for i := range specs {
		specs[i].SetProjectDir(project)
	}
	specs, notes := hooks.DedupClaude(specs)
	infos = append(infos, notes...)
	warns = append(warns, a.matchersWithNoTool(specs)...)
	return specs, warns, infos
}

// claudeFiles lists the Claude Code hooks files config.yaml names, paths
// relative to the home (where config.yaml is).
func (a *app) claudeFiles(warns, infos *[]string) []hooks.ClaudeFile {
	abs := func(p string) string {
		if p == "~" || strings.HasPrefix(p, "~/") {
			if h, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(h, p[1:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(a.home, p)
		}
		return filepath.Clean(p)
	}
	var out []hooks.ClaudeFile
	for _, dir := range a.cfg.Plugins.Claude {
		f, ok, err := hooks.ClaudePlugin(abs(dir), dir)
		switch {
		case err != nil:
			*warns = append(*warns, fmt.Sprintf("plugins.claude: %v; skipped", err))
		case !ok:
			*infos = append(*infos, fmt.Sprintf("plugins.claude: plugin %s has no hooks (%s)", dir, f.Name))
		default:
			out = append(out, f)
		}
	}
	for _, p := range a.cfg.ClaudeSettings {
		out = append(out, hooks.ClaudeFile{Path: abs(p), Name: p})
	}
	return out
}

// matchersWithNoTool warns about claude-dialect matchers that take no
// tool herald has (Grep, WebFetch, mcp__…): such a hook never runs. One
// warning per file and matcher.
func (a *app) matchersWithNoTool(specs []hooks.ShellSpec) []string {
	var tools []string
	for _, t := range a.agent.Tools.List() {
		tools = append(tools, t.Name())
	}
	if !slices.Contains(tools, cron.ToolName) {
		tools = append(tools, cron.ToolName) // added once the scheduler starts
	}
	var names []string
	for _, t := range tools {
		names = append(names, hooks.ClaudeToolName(t))
	}
	sort.Strings(names)
	var out []string
	seen := map[string]bool{}
	for _, s := range specs {
		if p, _ := hooks.Lookup(s.Event); !p.Tool || s.MatchesAnyTool(tools) || seen[s.File+"\x00"+s.Matcher] {
			continue
		}
		seen[s.File+"\x00"+s.Matcher] = true
		file := s.File
		if file == "" {
			file = "config.yaml"
		}
		out = append(out, fmt.Sprintf("%s:%d: %s: matcher %q matches no tool of herald's, so the hook never runs: herald has no such tool (its tools, by their Claude names: %s)", file, s.Line, s.Where, s.Matcher, strings.Join(names, ", ")))
	}
	return out
}

func (a *app) allowlist() hooks.Allowlist {
	return hooks.Allowlist{Path: filepath.Join(a.home, hooks.AllowlistFile), Log: a.log}
}

func (a *app) shellRunner() *hooks.ShellRunner {
	return &hooks.ShellRunner{Environ: hookEnviron(a), Log: a.log.With("component", "shell-hooks"), Redactor: a.redactor, Judge: a.judge, Lookup: func(k string) (string, bool) {
		// the gateway's environment as cmd.Main was given it, then the
		// process's, then .env
		if v := a.e.getenv(k); v != "" {
			return v, true
		}
		if v, ok := os.LookupEnv(k); ok {
			return v, true
		}
		v, ok := a.cfg.Env[k]
		return v, ok
	}}
}

// acceptHooks is every non-interactive consent source.
func (a *app) acceptHooks() bool {
	if a.e.acceptHooks || truthy(a.e.getenv("HERALD_ACCEPT_HOOKS")) || truthy(a.e.getenv("HERMES_ACCEPT_HOOKS")) {
		return true
	}
	n := a.cfg.HooksAutoAccept.Node
	return n != nil && hooks.Truthy(n.Tag, n.Value)
}

func startShellHooks(ctx context.Context, a *app, g *gatewayParts) (func(), error) {
	specs := a.shellSpecs(true)
	if len(specs) == 0 {
		return nil, nil
	}
	c := &hooks.Consent{List: a.allowlist(), Accept: a.acceptHooks()}
	if a.e.interactive {
		c.In, c.Out = a.e.stdin, a.e.stdout
	}
	sh := &hooks.ShellHooks{Registry: a.hooks, Runner: a.shellRunner(), Consent: c}
	for _, r := range sh.Register(specs) {
		if r.Warning != "" {
			a.log.Warn(r.Warning)
		}
		switch {
		case r.Blocker:
			a.log.Warn("block_on_failure hook cannot run: what it guards is blocked until it can", "hook", r.Spec.Name(), "event", r.Spec.Event)
		case r.Running:
			a.log.Info("shell hook registered", "event", r.Spec.Event, "hook", r.Spec.Name(), "type", r.Spec.Kind(), "priority", r.Spec.Priority)
		}
	}
	return nil, nil
}

func listShellHooks(ctx context.Context, e *env, a *app) error {
	// what the gateway would warn about loading them is said here too
	specs, warns, _ := a.loadShellSpecs()
	for _, w := range warns {
		fmt.Fprintf(e.stdout, "⚠ %s\n", w)
	}
	if len(specs) == 0 {
		fmt.Fprintln(e.stdout, "No shell hooks configured in config.yaml.")
		return nil
	}
	list := hooks.Approvals(a.allowlist().Load())
	fmt.Fprintf(e.stdout, "Configured shell hooks (%d total):\n", len(specs))
	for _, ev := range hooks.SortedEvents(specs) {
		fmt.Fprintf(e.stdout, "  [%s]\n", ev)
		for _, s := range specs {
			if s.Event != ev {
				continue
			}
			status := "✗ not allowlisted"
			entry, ok, changed := shellConsent(list, s)
			switch {
			case ok && !changed:
				status = "✓ allowed"
			case changed:
				status = "✗ changed since approval"
			}
			extra := ""
			if s.FailClosed {
				extra += ", block_on_failure"
			}
			if s.Dialect != "" {
				extra += ", dialect=" + s.Dialect
			}
			if s.Persistent {
				extra += fmt.Sprintf(", persistent×%d", max(s.Concurrency, 1))
			}
			fmt.Fprintf(e.stdout, "    - %s matcher=%q (timeout=%ds%s, %s)\n", s.Name(), s.Matcher, int(s.Timeout.Seconds()), extra, status)
			fmt.Fprintf(e.stdout, "      type=%s priority=%d matcher=%q%s\n", s.Kind(), s.Priority, s.Matcher, typeDetail(s))
			fmt.Fprintf(e.stdout, "      from: %s\n", s.Origin())
			if !ok {
				fmt.Fprintf(e.stdout, "      allow with: herald hooks allow %s %q\n", s.Event, s.Key())
			}
			if ok {
				fmt.Fprintf(e.stdout, "      approved_at: %s\n", entry.ApprovedAt)
			}
		}
	}
	return nil
}

// shellConsent finds s in the allowlist: its entry, whether it has one,
// and whether its script changed since it was approved.
func shellConsent(list hooks.Approvals, s hooks.ShellSpec) (entry hooks.Consented, ok, changed bool) {
	entry, ok = list.Find(s.Event, s.Key())
	changed = ok && entry.ScriptSHA256 != "" && entry.ScriptSHA256 != hooks.ScriptHash(s.Key())
	return entry, ok, changed
}

// typeDetail is what a listing says of an entry's type beyond its name.
func typeDetail(s hooks.ShellSpec) string {
	switch s.Kind() {
	case hooks.TypeHTTP:
		d := ""
		if s.Secret != "" {
			d += " signed"
		}
		if s.AllowPrivate {
			d += " allow_private"
		}
		return d
	case hooks.TypePrompt, hooks.TypeAgent:
		d := " model=" + firstNonEmpty(s.Model, "(the gateway's)")
		if s.Kind() == hooks.TypeAgent {
			d += fmt.Sprintf(" max_iterations=%d", s.MaxIterations)
		}
		return d
	}
	if s.OpenHarness {
		return " form=openharness"
	}
	return ""
}

// samplePayloads are realistic payloads for `herald hooks test`.
func samplePayload(event, tool string) any {
	if tool == "" {
		tool = "terminal"
	}
	switch event {
	case hooks.PreToolCallHook:
		return &hooks.PreToolCall{ToolName: tool, Args: map[string]any{"command": "echo hello"}, TaskID: "test-session", SessionID: "test-session", ToolCallID: "call_test"}
	case hooks.PostToolCallHook, hooks.TransformToolResultHook:
		return &hooks.ToolResult{ToolName: tool, Args: map[string]any{"command": "echo hello"}, Result: `{"output":"hello\n","exit_code":0}`, TaskID: "test-session", SessionID: "test-session", ToolCallID: "call_test", DurationMS: 12}
	case hooks.PreLLMCallHook:
		return &hooks.PreLLMCall{SessionID: "test-session", UserMessage: "What's in this directory?", IsFirstTurn: true, Model: "gpt-4o-mini", Platform: "cli", ConversationHistory: []hooks.HistoryMessage{}}
	case hooks.PostLLMCallHook:
		return &hooks.PostLLMCall{SessionID: "test-session", UserMessage: "hi", AssistantResponse: "Hello!", Model: "gpt-4o-mini", Platform: "cli", ConversationHistory: []hooks.HistoryMessage{}}
	case hooks.SubagentStopHook:
		role, sum := "researcher", "done"
		return &hooks.SubagentStop{ParentSessionID: "test-session", ChildRole: &role, ChildSummary: &sum, ChildStatus: "completed", DurationMS: 1500}
	case hooks.TransformTerminalOutputHook:
		return &hooks.TerminalOutput{Command: "ls", Output: "a\nb\n", Cwd: ".", TaskID: "test-session", EnvType: "local"}
	case hooks.TransformLLMOutputHook:
		return &hooks.LLMOutput{ResponseText: "Hello!", SessionID: "test-session", Model: "gpt-4o-mini", Platform: "cli"}
	}
	return map[string]any{"session_id": "test-session"}
}

func hooksTest(ctx context.Context, e *env, args []string) error {
	fs := e.flags("hooks test")
	forTool := fs.String("for-tool", "", "only hooks whose matcher matches this tool, with it as tool_name")
	payloadFile := fs.String("payload-file", "", "a JSON object merged over the sample payload")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: herald hooks test <event> [--for-tool X] [--payload-file F]")
	}
	event := hooks.CanonicalEvent(pos[0])
	if !hooks.Known(event) {
		return &exitError{code: 2, msg: fmt.Sprintf("Unknown event: %q (valid: %s)", event, strings.Join(hooks.Names(), ", "))}
	}
	a, err := e.newApp(appOptions{quiet: true})
	if err != nil {
		return err
	}
	defer a.close()
	// a Claude tool name (Bash) stands for herald's (terminal): the hook
	// sees what it would see in the gateway, and the same hooks match
	tool := hooks.HeraldToolName(*forTool)
	payload := samplePayload(event, tool)
	if *payloadFile != "" {
		b, err := os.ReadFile(*payloadFile)
		if err != nil {
			return err
		}
		var over map[string]any
		if err := json.Unmarshal(b, &over); err != nil {
			return fmt.Errorf("%s: not a JSON object: %w", *payloadFile, err)
		}
		payload = overlayPayload(payload, over)
	}
	runner := a.shellRunner()
	n := 0
	for _, s := range a.shellSpecs(false) {
		if s.Event != event || (tool != "" && !s.Matches(tool)) {
			continue
		}
		n++
		if s.Kind() != hooks.TypeCommand {
			testTyped(ctx, e, a, runner, s, event, payload)
			continue
		}
		f, err := fireSpec(ctx, runner, s, event, payload)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "── %s (%s)\n", s.Command, s.Origin())
		res, v, aerr := f.run, f.value, f.err
		if res.SpawnErr != nil {
			fmt.Fprintf(e.stdout, "  error: %v\n", res.SpawnErr)
		}
		fmt.Fprintf(e.stdout, "  exit=%d elapsed=%.3fs%s\n", res.Exit, res.Elapsed.Seconds(), map[bool]string{true: " (timed out)"}[res.TimedOut])
		fmt.Fprintf(e.stdout, "  stdout: %s\n  stderr: %s\n", a.redactor.Redact(clip(res.Stdout)), a.redactor.Redact(clip(res.Stderr)))
		switch {
		case aerr != nil:
			fmt.Fprintf(e.stdout, "  parsed: <error: %v>%s\n", aerr, map[bool]string{true: " — fail_closed: this blocks the call"}[s.FailClosed])
		case v == nil:
			fmt.Fprintln(e.stdout, "  parsed: <none — hook contributed nothing to the dispatcher>")
		default:
			b, _ := json.Marshal(v)
			fmt.Fprintf(e.stdout, "  parsed (herald wire shape): %s\n", b)
		}
	}
	if n == 0 {
		fmt.Fprintf(e.stdout, "No shell hooks configured for %s.\n", event)
	}
	return nil
}

// testTyped fires an http, prompt or agent entry once and shows its
// answer as the combiners would read it.
func testTyped(ctx context.Context, e *env, a *app, runner *hooks.ShellRunner, s hooks.ShellSpec, event string, payload any) {
	fmt.Fprintf(e.stdout, "── %s [type %s, priority %d] (%s)\n", s.Name(), s.Kind(), s.Priority, s.Origin())
	if (s.Kind() == hooks.TypePrompt || s.Kind() == hooks.TypeAgent) && runner.Judge == nil {
		fmt.Fprintln(e.stdout, "  error: no model to ask (no model endpoint is configured)")
		return
	}
	f, _ := fireSpec(ctx, runner, s, event, payload)
	v, err := f.value, f.err
	fmt.Fprintf(e.stdout, "  elapsed=%.3fs\n", f.elapsed.Seconds())
	switch {
	case err != nil:
		fail := ""
		if s.FailClosed {
			fail = " — block_on_failure: this blocks"
		}
		fmt.Fprintf(e.stdout, "  parsed: <error: %s>%s\n", a.redactor.Redact(err.Error()), fail)
	case v == nil:
		fmt.Fprintln(e.stdout, "  parsed: <none — hook contributed nothing to the dispatcher>")
	default:
		b, _ := json.Marshal(v)
		fmt.Fprintf(e.stdout, "  parsed (herald wire shape): %s\n", a.redactor.Redact(string(b)))
	}
}

// overlayPayload is payload with over's fields set over its JSON form.
func overlayPayload(payload any, over map[string]any) any {
	if len(over) == 0 {
		return payload
	}
	base, _ := json.Marshal(payload)
	m := map[string]any{}
	json.Unmarshal(base, &m)
	for k, v := range over {
		m[k] = v
	}
	return m
}

// specFiring is one entry fired once by fireSpec: a command's run (nil
// for the other types) and the answer as the combiners would read it.
type specFiring struct {
	run     *hooks.ShellRun
	value   any
	err     error
	elapsed time.Duration
}

// fireSpec fires one shell entry with payload: a command is run
// (runSpec) and its output parsed; an http, prompt or agent entry is
// asked. The error is a payload the entry cannot be given.
func fireSpec(ctx context.Context, runner *hooks.ShellRunner, s hooks.ShellSpec, event string, payload any) (specFiring, error) {
	start := time.Now()
	if s.Kind() != hooks.TypeCommand {
		v, err := runner.Try(ctx, s, event, payload)
		return specFiring{value: v, err: err, elapsed: time.Since(start)}, nil
	}
	in, err := s.Payload(event, payload)
	if err != nil {
		return specFiring{}, err
	}
	res := runSpec(ctx, runner, s, event, in)
	f := specFiring{run: res, elapsed: time.Since(start)}
	f.value, f.err = s.Answer(res)
	return f, nil
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

func hooksAllow(ctx context.Context, e *env, args []string) error {
	fs := e.flags("hooks allow")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 && len(pos) != 2 {
		return usagef("usage: herald hooks allow <event> <command>  |  herald hooks allow <hook directory>")
	}
	a, err := e.newApp(appOptions{quiet: true})
	if err != nil {
		return err
	}
	defer a.close()
	if len(pos) == 1 {
		dir, ok := a.hookDirArg(pos[0])
		if !ok {
			return &exitError{code: 2, msg: fmt.Sprintf("%s is not a hook directory (no HOOK.yaml there nor in %s)", pos[0], filepath.Join(a.home, "hooks", pos[0]))}
		}
		h, err := a.dirAllowlist().ApproveDir(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Approved directory hook %s (%s) for %s\n", h.Name, dir, strings.Join(h.Events, ", "))
		if len(h.Env) > 0 {
			names := make([]string, 0, len(h.Env))
			for k := range h.Env {
				names = append(names, k)
			}
			sort.Strings(names)
			fmt.Fprintf(e.stdout, "  it receives these variables: %s\n", strings.Join(names, ", "))
		}
		fmt.Fprintln(e.stdout, "(a running gateway loads it at its next scan; any change to its code needs a new approval)")
		return nil
	}
	event := hooks.CanonicalEvent(pos[0])
	if !hooks.Known(event) {
		return &exitError{code: 2, msg: fmt.Sprintf("Unknown event: %q", pos[0])}
	}
	if err := a.allowlist().Approve(event, pos[1]); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Approved shell hook for %s: %s\n(takes effect at the next gateway start)\n", event, pos[1])
	return nil
}

func hooksRevoke(ctx context.Context, e *env, args []string) error {
	fs := e.flags("hooks revoke")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: herald hooks revoke <command>")
	}
	a, err := e.newApp(appOptions{quiet: true})
	if err != nil {
		return err
	}
	defer a.close()
	if dir, ok := a.hookDirArg(pos[0]); ok {
		n, err := a.dirAllowlist().RevokeDir(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "Removed %d approval(s) of directory hook %s\n", n, dir)
		return nil
	}
	n, err := a.allowlist().Revoke(pos[0])
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(e.stdout, "No allowlist entry found for command: %s\n", pos[0])
		return nil
	}
	fmt.Fprintf(e.stdout, "Removed %d allowlist %s for: %s\n(restart the gateway for it to take effect)\n", n, map[bool]string{true: "entry", false: "entries"}[n == 1], pos[0])
	return nil
}

func hooksDoctor(ctx context.Context, e *env, args []string) error {
	fs := e.flags("hooks doctor")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	a, err := e.newApp(appOptions{quiet: true})
	if err != nil {
		return err
	}
	defer a.close()
	specs := a.shellSpecs(false)
	if len(specs) == 0 {
		fmt.Fprintln(e.stdout, "No shell hooks configured in config.yaml.")
	}
	list, runner := hooks.Approvals(a.allowlist().Load()), a.shellRunner()
	problems := 0
	for _, s := range specs {
		if s.Kind() != hooks.TypeCommand {
			problems += doctorTyped(ctx, e, a, runner, list, s)
			continue
		}
		fmt.Fprintf(e.stdout, "%s [%s]\n", s.Command, s.Event)
		path := hooks.ScriptPath(s.Command)
		if st, err := os.Stat(path); err != nil {
			if argv, _ := hooks.SplitCommand(s.Command); len(argv) > 0 && path == argv[0] {
				fmt.Fprintf(e.stdout, "  ✗ %s not found\n", path)
				problems++
			}
		} else if argv, _ := hooks.SplitCommand(s.Command); len(argv) > 0 && argv[0] == path && st.Mode()&0o111 == 0 {
			fmt.Fprintf(e.stdout, "  ✗ %s is not executable (chmod +x)\n", path)
			problems++
		} else {
			fmt.Fprintln(e.stdout, "  ✓ executable")
		}
		entry, ok := list.Find(s.Event, s.Command)
		switch {
		case !ok:
			fmt.Fprintf(e.stdout, "  ✗ not allowlisted (herald hooks allow %s %q)\n", s.Event, s.Command)
			problems++
		case entry.ScriptSHA256 == "":
			// Hermes writes entries without one; not a problem
			fmt.Fprintf(e.stdout, "  ✓ allowlisted, hash not yet recorded (a Hermes entry; herald hooks allow %s %q records it)\n", s.Event, s.Command)
		case entry.ScriptSHA256 != hooks.ScriptHash(s.Command):
			fmt.Fprintln(e.stdout, "  ⚠ script modified since approval")
			problems++
		default:
			fmt.Fprintln(e.stdout, "  ✓ allowlisted, script unchanged since approval")
		}
		if !ok {
			fmt.Fprintln(e.stdout, "  ℹ JSON smoke test skipped (not allowlisted: un-approved hooks are never run)")
			continue
		}
		in, _ := s.Payload(s.Event, samplePayload(s.Event, ""))
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		res := runSpec(sctx, runner, s, s.Event, in)
		cancel()
		_, perr := s.Answer(res)
		switch {
		case res.SpawnErr != nil || res.TimedOut:
			fmt.Fprintf(e.stdout, "  ✗ smoke test failed: %v\n", errors.Join(res.SpawnErr, perr))
			problems++
		case perr != nil:
			fmt.Fprintf(e.stdout, "  ✗ smoke test: %v\n", perr)
			problems++
		case len(strings.TrimSpace(string(res.Stdout))) == 0:
			fmt.Fprintf(e.stdout, "  ✓ smoke test: observer-only (empty stdout) in %.3fs\n", res.Elapsed.Seconds())
		default:
			fmt.Fprintf(e.stdout, "  ✓ smoke test: valid JSON in %.3fs\n", res.Elapsed.Seconds())
		}
	}
	dirProblems, dirs := doctorDirHooks(ctx, e, a)
	if problems += dirProblems; problems > 0 {
		fmt.Fprintf(e.stdout, "%d issue(s) found.\n", problems)
		return &exitError{code: 1}
	}
	if len(specs) > 0 {
		fmt.Fprintln(e.stdout, "All shell hooks look healthy.")
	}
	if dirs {
		fmt.Fprintln(e.stdout, "All directory hooks look healthy.")
	}
	return nil
}

// doctorTyped checks an http, prompt or agent entry: its URL, or that a
// model is there to ask; its consent; for an approved http entry, one
// POST of a sample payload. It returns the number of issues.
func doctorTyped(ctx context.Context, e *env, a *app, runner *hooks.ShellRunner, list hooks.Approvals, s hooks.ShellSpec) (problems int) {
	fmt.Fprintf(e.stdout, "%s [%s, type %s, priority %d]\n", s.Name(), s.Event, s.Kind(), s.Priority)
	switch s.Kind() {
	case hooks.TypeHTTP:
		if err := hooks.CheckHookURL(s.URL); err != nil {
			fmt.Fprintf(e.stdout, "  ✗ url: %v\n", err)
			problems++
		} else {
			fmt.Fprintln(e.stdout, "  ✓ url is http(s) with a host")
		}
	default:
		if runner.Judge == nil {
			fmt.Fprintln(e.stdout, "  ✗ no model to ask (no model endpoint is configured): the hook does not load")
			problems++
		} else {
			fmt.Fprintln(e.stdout, "  ✓ a model is there to ask")
		}
	}
	entry, ok := list.Find(s.Event, s.Key())
	switch {
	case !ok:
		fmt.Fprintf(e.stdout, "  ✗ not allowlisted (herald hooks allow %s %q)\n", s.Event, s.Key())
		return problems + 1
	case entry.ScriptSHA256 != hooks.ScriptHash(s.Key()):
		fmt.Fprintln(e.stdout, "  ⚠ allowlist entry does not match (approve it again)")
		problems++
	default:
		fmt.Fprintln(e.stdout, "  ✓ allowlisted")
	}
	if s.Kind() != hooks.TypeHTTP {
		fmt.Fprintln(e.stdout, "  ℹ the model is not called by doctor (herald hooks test does)")
		return problems
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	if _, err := runner.Try(sctx, s, s.Event, samplePayload(s.Event, "")); err != nil {
		fmt.Fprintf(e.stdout, "  ✗ smoke test: %s\n", a.redactor.Redact(err.Error()))
		return problems + 1
	}
	fmt.Fprintf(e.stdout, "  ✓ smoke test: answered in %.3fs\n", time.Since(start).Seconds())
	return problems
}

// runSpec runs a hook once: spawned, or for a persistent hook a process
// started for this one request; an OpenHarness-form entry gets its
// $ARGUMENTS and environment for event.
func runSpec(ctx context.Context, r *hooks.ShellRunner, s hooks.ShellSpec, event string, in []byte) *hooks.ShellRun {
	if !s.Persistent {
		call, err := s.ForCall(event, in)
		if err != nil {
			return &hooks.ShellRun{Stdin: in, Exit: -1, SpawnErr: err}
		}
		return r.Run(ctx, &call, in)
	}
	p := hooks.NewPersistent(r, s, 1)
	defer p.Close()
	return p.Call(ctx, in)
}
