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

	"go.yaml.in/yaml/v3"
)

func yamlNode(t testing.TB, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0].Content[1] // the value of the top-level "hooks" key
}

func TestParseShellHooks(t *testing.T) {
	specs, warns, infos := ParseShellHooks(yamlNode(t, `hooks:
  pre_tool_call:
    - matcher: "write_file|patch"
      command: "~/hooks/check.sh --strict"
      timeout: 500
      failClosed: true
    - command: ""
  pre_tool_cal:
    - command: x
  on_session_start:
    - command: y
      matcher: terminal
      fail_closed: true
      timeout: 0
  PreToolUse:
    - command: z
      dialect: claude
  post_tool_call: notalist
  python: /usr/bin/python3
  command:status:
    - command: deny.sh
    - command: "'unterminated"
`))
	if len(specs) != 4 {
		t.Fatalf("specs = %+v", specs)
	}
	s := specs[0]
	if s.Event != PreToolCallHook || s.Timeout != MaxShellTimeout || !s.FailClosed || !s.Matches("patch") || s.Matches("patch2") || s.Matches("terminal") {
		t.Fatalf("spec 0 = %+v", s)
	}
	if specs[1].Matcher != "" || specs[1].FailClosed || specs[1].Timeout != DefaultShellTimeout {
		t.Fatalf("matcher and fail_closed on a non-tool event must be dropped: %+v", specs[1])
	}
	if specs[2].Event != PreToolCallHook || specs[2].Dialect != "claude" || specs[3].Event != "command:status" {
		t.Fatalf("alias/dialect/command event: %+v %+v", specs[2], specs[3])
	}
	all := strings.Join(warns, "\n")
	for _, want := range []string{
		"hooks.pre_tool_call[1] is missing a non-empty 'command' field",
		`unknown hook event "pre_tool_cal" in hooks: config — did you mean "pre_tool_call"?`,
		"hooks.pre_tool_call[0].timeout 500 is over the limit; clamping to 300",
		"will be ignored at runtime",
		"fail_closed only applies to pre_tool_call",
		"hooks.post_tool_call must be a list",
		"hooks.on_session_start[0].timeout 0 is not positive; using 60",
		`hooks.command:status[1]: command "'unterminated" cannot be parsed`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if len(infos) != 1 || !strings.Contains(infos[0], "PreToolUse is an alias of pre_tool_call") {
		t.Errorf("infos = %v", infos)
	}
}

func TestMatcherInvalidRegexIsLiteral(t *testing.T) {
	specs, warns, _ := ParseShellHooks(yamlNode(t, "hooks:\n  pre_tool_call:\n    - matcher: \"bad[\"\n      command: x\n"))
	if len(specs) != 1 || !specs[0].Matches("bad[") || specs[0].Matches("bad") || len(warns) != 1 {
		t.Fatalf("specs %+v warns %v", specs, warns)
	}
}

// The stdin payload, exactly: golden files for both dialects.
func TestShellPayloadGolden(t *testing.T) {
	cwd, _ := os.Getwd()
	for _, tc := range []struct {
		name, event string
		payload     any
		claude      bool
	}{
		{"pre_tool_call", PreToolCallHook, &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": "rm -rf /"}, TaskID: "t1", SessionID: "s1", ToolCallID: "call_1"}, false},
		{"post_tool_call", PostToolCallHook, &ToolResult{ToolName: "write_file", Args: map[string]any{"path": "a.go", "content": "x"}, Result: `{"ok":true}`, TaskID: "t1", SessionID: "s1", ToolCallID: "call_2", DurationMS: 7}, false},
		{"subagent_stop", SubagentStopHook, &SubagentStop{ParentSessionID: "p1", ChildStatus: "completed", DurationMS: 3}, false},
		{"claude_pre_tool_use", PreToolCallHook, &PreToolCall{ToolName: "write_file", Args: map[string]any{"path": "a.go", "content": "x"}, TaskID: "t1", SessionID: "s1", ToolCallID: "call_3"}, true},
		{"claude_user_prompt_submit", PreLLMCallHook, &PreLLMCall{SessionID: "s1", UserMessage: "hello", IsFirstTurn: true, Model: "m", Platform: "cli", ConversationHistory: []HistoryMessage{}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b []byte
			var err error
			if tc.claude {
				b, err = ClaudePayload(tc.event, tc.payload)
			} else {
				b, err = ShellPayload(tc.event, tc.payload)
			}
			if err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(string(b), cwd, "$CWD")
			var pretty map[string]any
			json.Unmarshal([]byte(got), &pretty)
			golden := filepath.Join("testdata", "shell", tc.name+".json")
			if os.Getenv("HERALD_UPDATE_GOLDEN") != "" {
				os.WriteFile(golden, []byte(got+"\n"), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (HERALD_UPDATE_GOLDEN=1 writes it)", err)
			}
			if strings.TrimSpace(string(want)) != got {
				t.Fatalf("payload\n got %s\nwant %s", got, want)
			}
		})
	}
}

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestShellAnswers(t *testing.T) {
	dir := t.TempDir()
	r := &ShellRunner{Environ: os.Environ()}
	p := &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": "ls"}, SessionID: "s"}
	for _, tc := range []struct {
		name, body string
		failClosed bool
		claude     bool
		want       string // JSON of the result, or "err:<substring>"
	}{
		{"hermes block", `echo '{"action":"block","message":"no"}'`, false, false, `{"action":"block","message":"no"}`},
		{"claude block", `echo '{"decision":"block","reason":"nope"}'`, false, false, `{"action":"block","message":"nope"}`},
		{"claude deny", `echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"denied"}}'`, false, false, `{"action":"block","message":"denied"}`},
		{"claude ask", `echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`, false, false, `{"action":"approve"}`},
		{"block without message", `echo '{"action":"block"}'`, false, false, `{"action":"block","message":"Blocked by shell hook."}`},
		{"modify", `echo '{"action":"modify","args":{"command":"ls -la"}}'`, false, false, `{"action":"modify","args":{"command":"ls -la"}}`},
		{"claude updatedInput maps back", `echo '{"hookSpecificOutput":{"updatedInput":{"file_path":"b.go"}}}'`, false, true, `{"action":"modify","args":{"path":"b.go"}}`},
		{"exit 2 uses stderr", `echo "too dangerous" >&2; exit 2`, false, false, `{"action":"block","message":"too dangerous"}`},
		{"exit 2 with json", `echo '{"action":"block","message":"json wins"}'; echo x >&2; exit 2`, false, false, `{"action":"block","message":"json wins"}`},
		{"exit 2 stderr clipped to 400 characters", `printf 'x%.0s' $(seq 1000) >&2; exit 2`, false, false, `{"action":"block","message":"` + strings.Repeat("x", 400) + `"}`},
		{"exit 2 stderr clipped between characters", `printf 'é%.0s' $(seq 500) >&2; exit 2`, false, false, `{"action":"block","message":"` + strings.Repeat("é", 400) + `"}`},
		{"exit 2 silent", `exit 2`, false, false, `{"action":"block","message":"Blocked by shell hook."}`},
		{"exit 1 with block still blocks", `echo '{"action":"block","message":"m"}'; exit 1`, false, false, `{"action":"block","message":"m"}`},
		{"exit 1 no decision", `exit 1`, true, false, "err:exited with status 1"},
		{"garbage", `echo 'not json'`, true, false, "err:not valid JSON"},
		{"empty is silence", `true`, true, false, `null`},
		{"crash", `kill -SEGV $$`, true, false, "err:no decision"},
		{"claude continue false", `echo '{"continue":false,"stopReason":"stop here"}'`, false, true, `{"action":"block","message":"stop here"}`},
		{"claude allow", `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`, false, true, `{"action":"allow"}`},
		{"claude modify", `echo '{"decision":"modify","tool_input":{"command":"ls"}}'`, false, false, `{"action":"modify","args":{"command":"ls"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ShellSpec{Event: PreToolCallHook, Command: writeScript(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".sh", tc.body+"\n"), Timeout: 5 * time.Second, FailClosed: tc.failClosed}
			if tc.claude {
				s.Dialect = "claude"
			}
			v, err := r.Handler(s)(context.Background(), Event{Name: PreToolCallHook, Payload: p})
			if strings.HasPrefix(tc.want, "err:") {
				if err == nil || !strings.Contains(err.Error(), tc.want[4:]) {
					t.Fatalf("err = %v, want %q", err, tc.want[4:])
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(v)
			if tc.want == "null" && v == nil {
				return
			}
			if string(b) != tc.want {
				t.Fatalf("answer = %s, want %s", b, tc.want)
			}
		})
	}
}

func TestShellFailures(t *testing.T) {
	dir := t.TempDir()
	r := &ShellRunner{Environ: os.Environ()}
	t.Run("the end of the call kills a child that ignores SIGTERM", func(t *testing.T) {
		// the call is ended (as a timeout or /stop ends it, through the same
		// kill) once the child is known to run, so no budget includes
		// starting the processes
		pidFile := filepath.Join(dir, "child.pid")
		s := ShellSpec{Event: PreToolCallHook, Timeout: time.Hour, Command: writeScript(t, dir, "stubborn.sh",
			"sh -c 'trap \"\" TERM; echo $$ > "+pidFile+".tmp; mv "+pidFile+".tmp "+pidFile+"; while :; do sleep 0.05; done' &\ntrap '' TERM\nwait\n")}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan *ShellRun, 1)
		go func() { done <- r.Run(ctx, &s, []byte("{}")) }()
		var pid string
		waitFor(t, func() bool {
			b, _ := os.ReadFile(pidFile)
			pid = strings.TrimSpace(string(b))
			return pid != ""
		}, "the child to start")
		cancel()
		select {
		case res := <-done:
			if res.Exit == 0 {
				t.Fatalf("res = %+v", res)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Run still waiting 30 s after its call ended")
		}
		waitFor(t, func() bool {
			st, err := os.ReadFile("/proc/" + pid + "/stat")
			return err != nil || strings.Contains(string(st), ") Z ") // gone, or a zombie awaiting its reaper
		}, "child %s to be killed", pid)
	})
	t.Run("a timeout is reported as one", func(t *testing.T) {
		s := ShellSpec{Event: PreToolCallHook, Timeout: 200 * time.Millisecond, Command: writeScript(t, dir, "sleeper.sh", "exec sleep 600\n")}
		res := r.Run(context.Background(), &s, nil) // times out however slowly sh starts
		if !res.TimedOut {
			t.Fatalf("res = %+v", res)
		}
		if _, err := s.Answer(res); err == nil || !strings.Contains(err.Error(), "timed out") {
			t.Fatalf("answer err = %v", err)
		}
	})
	t.Run("50 MB of output is capped", func(t *testing.T) {
		s := ShellSpec{Event: PreToolCallHook, Timeout: 20 * time.Second, Command: writeScript(t, dir, "flood.sh", "head -c 52428800 /dev/zero\n")}
		res := r.Run(context.Background(), &s, nil)
		if !res.Truncated || len(res.Stdout) != ShellOutputCap || res.Exit != 0 {
			t.Fatalf("truncated=%v len=%d exit=%d", res.Truncated, len(res.Stdout), res.Exit)
		}
	})
	t.Run("missing command", func(t *testing.T) {
		s := ShellSpec{Event: PreToolCallHook, Timeout: time.Minute, Command: filepath.Join(dir, "nope.sh")}
		if _, err := s.Answer(r.Run(context.Background(), &s, nil)); err == nil || !strings.Contains(err.Error(), "command not found") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("quoted path with spaces and no shell", func(t *testing.T) {
		sub := filepath.Join(dir, "a dir")
		os.MkdirAll(sub, 0o700)
		p := writeScript(t, sub, "echo args.sh", `printf '{"context":"%s|%s"}' "$1" "$2"`+"\n")
		s := ShellSpec{Event: PreLLMCallHook, Timeout: time.Minute, Command: fmt.Sprintf("%q 'one two' $(whoami)", p)}
		v, err := s.Answer(r.Run(context.Background(), &s, nil))
		if err != nil || v.(*LLMContext).Context != "one two|$(whoami)" {
			t.Fatalf("v = %+v, %v", v, err)
		}
	})
	t.Run("claude plain stdout on UserPromptSubmit is context", func(t *testing.T) {
		s := ShellSpec{Event: PreLLMCallHook, Dialect: "claude", Timeout: time.Minute, Command: writeScript(t, dir, "plain.sh", "echo 'Today is Friday'\n")}
		v, err := s.Answer(r.Run(context.Background(), &s, nil))
		if c, ok := v.(*LLMContext); err != nil || !ok || c.Context != "Today is Friday" {
			t.Fatalf("v = %#v, %v", v, err)
		}
		s.Dialect = ""
		if _, err := s.Answer(r.Run(context.Background(), &s, nil)); err == nil {
			t.Fatal("Hermes dialect: plain text is not JSON")
		}
	})
	t.Run("secrets are not in the environment unless opted in", func(t *testing.T) {
		r := &ShellRunner{Environ: []string{"PATH=" + os.Getenv("PATH")}, Lookup: func(k string) (string, bool) { return "opted-in", k == "MY_TOKEN" }}
		p := writeScript(t, dir, "env.sh", `printf '{"context":"%s/%s"}' "${MY_TOKEN:-none}" "${OTHER_TOKEN:-none}"`+"\n")
		s := ShellSpec{Event: PreLLMCallHook, Timeout: time.Minute, Command: p, Env: []string{"MY_TOKEN"}}
		v, _ := s.Answer(r.Run(context.Background(), &s, nil))
		if v.(*LLMContext).Context != "opted-in/none" {
			t.Fatalf("env seen by hook: %+v", v)
		}
	})
}

// Four hooks on one event run side by side: each waits until all four
// have started, so run one after another the first would time out.
func TestShellHooksRunConcurrently(t *testing.T) {
	dir := t.TempDir()
	reg := NewRegistry(nil)
	defer reg.Close(context.Background())
	sh := &ShellHooks{Registry: reg, Runner: &ShellRunner{Environ: os.Environ()}, Consent: &Consent{List: Allowlist{Path: filepath.Join(dir, AllowlistFile)}, Accept: true}}
	var specs []ShellSpec
	for i := 0; i < 4; i++ {
		body := fmt.Sprintf("touch %s/started.%d\nwhile [ $(ls %s | grep -c '^started') -lt 4 ]; do sleep 0.01; done\necho '{\"context\":\"c%d\"}'\n", dir, i, dir, i)
		specs = append(specs, ShellSpec{Event: PreLLMCallHook, Timeout: 20 * time.Second, Command: writeScript(t, dir, fmt.Sprintf("h%d.sh", i), body)})
	}
	sh.Register(specs)
	if got := reg.PreLLMCall(context.Background(), &PreLLMCall{SessionID: "s"}); got != "c0\n\nc1\n\nc2\n\nc3" {
		t.Fatalf("contexts = %q (all four, concurrently, in declared order)", got)
	}
}

func TestConsentSources(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, "ok.sh", "echo '{}'\n")
	spec := ShellSpec{Event: PreToolCallHook, Command: script}
	list := Allowlist{Path: filepath.Join(dir, AllowlistFile)}

	if _, err := (&Consent{List: list}).Check(&spec); err != ErrNotApproved {
		t.Fatalf("no consent: err = %v", err)
	}
	if _, err := (&Consent{List: list, In: strings.NewReader("n\n"), Out: &strings.Builder{}}).Check(&spec); err != ErrNotApproved {
		t.Fatalf("answered n: %v", err)
	}
	out := &strings.Builder{}
	if _, err := (&Consent{List: list, In: strings.NewReader("y\n"), Out: out}).Check(&spec); err != nil || !strings.Contains(out.String(), "Allow this hook to run? [y/N]") {
		t.Fatalf("answered y: %v %q", err, out)
	}
	// recorded: no prompt the second time
	if _, err := (&Consent{List: list}).Check(&spec); err != nil {
		t.Fatalf("approved entry not honoured: %v", err)
	}
	// an edited script is no longer trusted
	os.WriteFile(script, []byte("#!/bin/sh\necho '{\"action\":\"block\"}'\n"), 0o755)
	if w, err := (&Consent{List: list}).Check(&spec); err != ErrNotApproved || !strings.Contains(w, "changed since it was approved") {
		t.Fatalf("edited script: %q %v", w, err)
	}
	// a Hermes entry without a hash is accepted with a warning
	os.WriteFile(list.Path, []byte(`{"approvals":[{"event":"pre_tool_call","command":"`+script+`","approved_at":"2026-04-20T12:00:00.123456Z","script_mtime_at_approval":null}]}`), 0o600)
	if w, err := (&Consent{List: list}).Check(&spec); err != nil || !strings.Contains(w, "without a script hash") {
		t.Fatalf("hermes entry: %q %v", w, err)
	}
	if n, err := list.Revoke(script); n != 1 || err != nil {
		t.Fatalf("revoke = %d %v", n, err)
	}
	for _, tc := range []struct {
		tag, v string
		want   bool
	}{{"!!bool", "true", true}, {"!!str", "yes", true}, {"!!str", "ON", true}, {"!!str", "1", true}, {"!!int", "1", false}, {"!!bool", "false", false}, {"!!str", "no", false}, {"!!null", "", false}} {
		if Truthy(tc.tag, tc.v) != tc.want {
			t.Errorf("Truthy(%s %q) != %v", tc.tag, tc.v, tc.want)
		}
	}
}

func TestParallelApprovalsLoseNothing(t *testing.T) {
	list := Allowlist{Path: filepath.Join(t.TempDir(), AllowlistFile)}
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := list.Approve(PreToolCallHook, fmt.Sprintf("hook-%d.sh", i)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := len(list.Load()); n != 40 {
		t.Fatalf("%d approvals kept of 40", n)
	}
	if st, _ := os.Stat(list.Path); st.Mode().Perm() != 0o600 {
		t.Fatalf("allowlist mode = %v", st.Mode())
	}
}

func TestParsePersistentAndConcurrency(t *testing.T) {
	specs, warns, _ := ParseShellHooks(yamlNode(t, `hooks:
  pre_tool_call:
    - command: guard.py
      persistent: true
      concurrency: 4
      env: [GITHUB_TOKEN]
    - command: once.sh
      concurrency: 2
    - command: many.py
      persistent: "yes"
      concurrency: 0
`))
	if len(specs) != 3 || !specs[0].Persistent || specs[0].Concurrency != 4 || specs[0].Env[0] != "GITHUB_TOKEN" || specs[1].Persistent || !specs[2].Persistent || specs[2].Concurrency != 0 {
		t.Fatalf("specs = %+v", specs)
	}
	all := strings.Join(warns, "\n")
	if !strings.Contains(all, "hooks.pre_tool_call[1].concurrency applies to persistent hooks only") || !strings.Contains(all, `hooks.pre_tool_call[2].concurrency "0" is not a positive`) {
		t.Fatalf("warnings: %s", all)
	}
}

func TestShellPayloadNonObjectArgs(t *testing.T) {
	b, err := ShellPayload(PreToolCallHook, map[string]any{"tool_name": "terminal", "args": []any{"ls"}, "parent_session_id": "p1", "weird": map[string]any{"n": 1}})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(b, &got)
	if got["tool_input"] != nil || got["session_id"] != "p1" || got["extra"].(map[string]any)["weird"] == nil {
		t.Fatalf("payload %s", b)
	}
	if !strings.HasPrefix(string(b), `{"hook_event_name":"pre_tool_call","tool_name":"terminal","tool_input":null,"session_id":"p1","cwd":`) {
		t.Fatalf("key order: %s", b)
	}
}

// FuzzShellHooksConfig reads any hooks: block of config.yaml: it never
// panics, every warning names config.yaml and a line, and every spec it
// keeps names a known event, a command that splits, and a positive
// timeout.
func FuzzShellHooksConfig(f *testing.F) {
	for _, s := range []string{
		"pre_tool_call:\n  - command: /x.sh\n    matcher: terminal\n    timeout: 5\n",
		"pre_tool_call:\n  - {command: \"~/g.sh --a\", fail_closed: true, persistent: true, concurrency: 2, dialect: claude}\n",
		"PreToolUse:\n  - command: a\npython: /usr/bin/python3\n", "pre_tool_cal:\n  - command: a\n", "pre_llm_call: x\n",
		"pre_tool_call:\n  - command: \"'unterminated\"\n", "pre_tool_call:\n  - matcher: \"([\"\n    command: a\n", "- a\n", "on_session_start:\n",
		"pre_tool_call:\n  - command: a\n    timeout: -3\n  - 5\n  - command: [a]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var doc yaml.Node
		if yaml.Unmarshal(src, &doc) != nil || len(doc.Content) == 0 {
			return
		}
		specs, warns, _ := ParseShellHooks(doc.Content[0])
		for _, w := range warns {
			if !strings.HasPrefix(w, "config.yaml:") {
				t.Fatalf("warning without its place: %q", w)
			}
		}
		for _, s := range specs {
			if !Known(s.Event) || s.Event == "*" || s.Timeout <= 0 {
				t.Fatalf("kept a bad spec: %+v", s)
			}
			if _, err := SplitCommand(s.Command); err != nil {
				t.Fatalf("kept a command that does not split: %+v: %v", s, err)
			}
		}
	})
}
