package hooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Claude-dialect matchers follow Claude Code's rule and compare with the
// Claude name of the tool; Hermes' are untouched.
func TestClaudeMatchers(t *testing.T) {
	cases := []struct {
		matcher string
		yes, no []string
	}{
		{"Bash", []string{"terminal"}, []string{"read_file", "patch", "Bash2"}},
		{"", []string{"terminal", "send_message", "read_file"}, nil},
		{"*", []string{"terminal", "send_message", "delegate_task"}, nil},
		{"Edit|Write", []string{"patch", "write_file"}, []string{"read_file", "terminal"}},
		{"Edit, Write", []string{"patch", "write_file"}, []string{"read_file"}},
		{"Edit|Write|MultiEdit", []string{"patch", "write_file"}, []string{"terminal"}},
		{"Read", []string{"read_file"}, []string{"write_file"}},
		{"Task", []string{"delegate_task"}, []string{"terminal"}},
		{"send_message", []string{"send_message"}, []string{"terminal"}},
		{"terminal", []string{"terminal"}, []string{"read_file"}}, // herald's name, as before
		{"terminal|Read", []string{"terminal", "read_file"}, []string{"patch"}},
		{"Grep|Glob", nil, []string{"terminal", "read_file"}},
		{"Wri.*", []string{"write_file"}, []string{"read_file"}},
		{"^(Bash|Read)$", []string{"terminal", "read_file"}, []string{"patch"}},
		{"B", nil, []string{"terminal"}},               // exact, not a prefix
		{"mcp__memory__.*", nil, []string{"terminal"}}, // a regex, full match
	}
	for _, c := range cases {
		specs, warns, _ := ParseShellHooks(yamlNode(t, "hooks:\n  PreToolUse:\n    - matcher: "+quoteYAML(c.matcher)+"\n      command: x\n      dialect: claude\n"))
		if len(specs) != 1 || len(warns) != 0 {
			t.Fatalf("%q: specs %+v warns %v", c.matcher, specs, warns)
		}
		for _, tool := range c.yes {
			if !specs[0].Matches(tool) {
				t.Errorf("matcher %q does not take %s", c.matcher, tool)
			}
		}
		for _, tool := range c.no {
			if specs[0].Matches(tool) {
				t.Errorf("matcher %q takes %s", c.matcher, tool)
			}
		}
	}
	// Hermes' dialect is as it was: herald's names, and "*" is no regex
	specs, warns, _ := ParseShellHooks(yamlNode(t, "hooks:\n  pre_tool_call:\n    - matcher: terminal\n      command: x\n    - matcher: \"*\"\n      command: y\n"))
	if !specs[0].Matches("terminal") || specs[0].Matches("Bash") || !specs[1].Matches("*") || specs[1].Matches("terminal") || len(warns) != 1 {
		t.Fatalf("hermes matchers changed: %+v %v", specs, warns)
	}
}

func quoteYAML(s string) string { return `"` + s + `"` }

// A claude matcher that can take no herald tool is found at load time.
func TestMatchesAnyTool(t *testing.T) {
	tools := []string{"terminal", "read_file", "write_file", "patch", "send_message", "delegate_task", "cronjob"}
	for m, want := range map[string]bool{"Grep": false, "Grep|Bash": true, "WebFetch": false, "mcp__.*": false, "*": true, "Notebook.*": false, "Edit|MultiEdit": true} {
		s := ShellSpec{Dialect: "claude"}
		s.setClaudeMatcher(m)
		if got := s.MatchesAnyTool(tools); got != want {
			t.Errorf("%q: MatchesAnyTool = %v, want %v", m, got, want)
		}
	}
}

const pluginHooksJSON = `{
  "description": "formatter and guard",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh", "timeout": 5},
        {"type": "http", "url": "http://127.0.0.1:1/hook"}
      ]}
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    "PostToolUse": [
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/fmt.py", "timeout": 900}]}
    ],
    "PostToolUseFailure": [{"hooks": [{"type": "command", "command": "echo failed"}]}],
    "SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": [{"type": "command", "command": "echo every"}]}, {"matcher": "compact", "hooks": [{"type": "command", "command": "echo compact"}]}],
    "UserPromptSubmit": [{"matcher": "ignored", "hooks": [{"type": "command", "command": "date", "shell": "bash"}, {"type": "command", "command": "Get-Date", "shell": "powershell"}]}]
  }
}
`

func TestLoadClaudeFile(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "hooks"), 0o755)
	os.WriteFile(filepath.Join(dir, "hooks", "hooks.json"), []byte(pluginHooksJSON), 0o644)
	f, ok, err := ClaudePlugin(dir, "plugins/fmt")
	if err != nil || !ok || f.Name != "plugins/fmt/hooks/hooks.json" || f.PluginRoot != dir {
		t.Fatalf("ClaudePlugin = %+v %v %v", f, ok, err)
	}
	specs, warns, err := LoadClaudeFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 7 {
		t.Fatalf("specs = %+v", specs)
	}
	if h := specs[1]; h.Kind() != TypeHTTP || h.URL != "http://127.0.0.1:1/hook" || h.Timeout != DefaultHTTPTimeout || !h.Matches("terminal") || h.Matches("read_file") {
		t.Fatalf("http spec = %+v", h)
	}
	specs = append(specs[:1], specs[2:]...)
	g := specs[0]
	if g.Event != PreToolCallHook || g.ClaudeEvent != "PreToolUse" || g.Dialect != "claude" || g.Timeout != 5*time.Second ||
		g.Origin() != "plugins/fmt/hooks/hooks.json: hooks.PreToolUse[0].hooks[0]" || g.Line != 6 || g.PluginRoot != dir || !g.Matches("terminal") || g.Matches("read_file") {
		t.Fatalf("guard spec = %+v", g)
	}
	fm := specs[1]
	if fm.Event != PostToolCallHook || fm.Timeout != MaxShellTimeout || fm.Where != "hooks.PostToolUse[0].hooks[0]" || !fm.Matches("patch") || !fm.Matches("write_file") || fm.Matches("terminal") {
		t.Fatalf("fmt spec = %+v", fm)
	}
	if specs[2].Event != PostToolCallHook || specs[2].ClaudeEvent != "PostToolUseFailure" {
		t.Fatalf("failure spec = %+v", specs[2])
	}
	if argv, _ := specs[5].Argv(); specs[5].Event != PreLLMCallHook || specs[5].Matcher != "" || strings.Join(argv, " ") != "bash -c date" {
		t.Fatalf("prompt spec = %+v", specs[5])
	}
	all := strings.Join(warns, "\n")
	for _, want := range []string{
		"plugins/fmt/hooks/hooks.json:10: hooks.Notification: herald has no Notification event; skipped (herald runs PostCompact, PostToolUse, PostToolUseFailure, PreCompact, PreToolUse, SessionEnd, SessionStart, Stop, SubagentStop, UserPromptSubmit)",
		"plugins/fmt/hooks/hooks.json:12: hooks.PostToolUse[0].hooks[0].timeout 900 is over the limit; clamping to 300",
		`plugins/fmt/hooks/hooks.json:16: hooks.UserPromptSubmit[0].hooks[1]: shell "powershell" is not available to herald's hooks; skipped`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	if len(warns) != 3 {
		t.Errorf("warnings: %s", all)
	}
}

func TestLoadClaudeFileErrors(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ body, want string }{
		"comma":    {"{\n  \"hooks\": {\n    \"PreToolUse\": [,]\n  }\n}\n", "bad.json: line 3, column 20: invalid JSON"},
		"cut":      {"{\"hooks\": {", "bad.json: line 1: invalid JSON: unexpected end of the file"},
		"array":    {"[1]", "bad.json:1: not a JSON object"},
		"trailing": {"{} {}", "bad.json: line 1, column 4: invalid JSON: data after the JSON document"},
		"hooks":    {`{"hooks": 3}`, "bad.json:1: hooks must be an object"},
	} {
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, []byte(c.body), 0o644)
		_, _, err := LoadClaudeFile(ClaudeFile{Path: p, Name: "bad.json"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
	_, _, err := LoadClaudeFile(ClaudeFile{Path: filepath.Join(dir, "none.json"), Name: "none.json"})
	if err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("missing file: %v", err)
	}
	// a settings file without hooks has none, quietly
	p := filepath.Join(dir, "settings.json")
	os.WriteFile(p, []byte(`{"permissions": {"allow": ["Bash(ls)"]}}`), 0o644)
	if specs, warns, err := LoadClaudeFile(ClaudeFile{Path: p, Name: "settings.json"}); len(specs)+len(warns) != 0 || err != nil {
		t.Errorf("no hooks: %v %v %v", specs, warns, err)
	}
}

// Identical commands for one event run once; the one kept takes what
// either matcher takes.
func TestDedupClaude(t *testing.T) {
	mk := func(m, cmd, ev string) ShellSpec {
		s := ShellSpec{Event: CanonicalEvent(ev), ClaudeEvent: ev, Dialect: "claude", Command: cmd, Timeout: time.Second, Where: "w"}
		s.setClaudeMatcher(m)
		return s
	}
	specs, notes := DedupClaude([]ShellSpec{
		mk("Bash", "a.sh", "PreToolUse"), mk("Edit", "a.sh", "PreToolUse"), mk("Bash", "a.sh", "PostToolUse"),
		mk("Bash", "a.sh", "PostToolUseFailure"), {Event: PreToolCallHook, Command: "a.sh"},
	})
	if len(specs) != 4 || len(notes) != 1 || !specs[0].Matches("terminal") || !specs[0].Matches("patch") || specs[0].Matches("read_file") {
		t.Fatalf("specs %+v notes %v", specs, notes)
	}
}

// Claude-dialect commands run through sh -c with CLAUDE_PROJECT_DIR and
// CLAUDE_PLUGIN_ROOT set and exported, in the project directory; the
// command is named with the variables filled in.
func TestClaudeShellForm(t *testing.T) {
	project, plugin, out := t.TempDir(), t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(plugin, "hooks"), 0o755)
	os.MkdirAll(filepath.Join(project, ".claude", "hooks"), 0o755)
	writeScript(t, filepath.Join(plugin, "hooks"), "x.sh", "echo \"plugin $CLAUDE_PLUGIN_ROOT $CLAUDE_PROJECT_DIR $(pwd)\" > "+out+"/x\n")
	writeScript(t, filepath.Join(project, ".claude", "hooks"), "y.sh", "echo \"project $CLAUDE_PROJECT_DIR\" > "+out+"/y\n")
	r := &ShellRunner{}
	for _, c := range []struct {
		spec      ShellSpec
		file, say string
		command   string
	}{
		{ShellSpec{Command: "sh ${CLAUDE_PLUGIN_ROOT}/hooks/x.sh && true", PluginRoot: plugin}, "x", "plugin " + plugin + " " + project + " " + project, "sh " + plugin + "/hooks/x.sh && true"},
		{ShellSpec{Command: `"$CLAUDE_PROJECT_DIR"/.claude/hooks/y.sh`}, "y", "project " + project, `"` + project + `"/.claude/hooks/y.sh`},
	} {
		s := c.spec
		s.Dialect, s.Event, s.Timeout = "claude", PostToolCallHook, 10*time.Second
		s.SetProjectDir(project)
		if s.Command != c.command {
			t.Errorf("command %q, want %q", s.Command, c.command)
		}
		for _, persistent := range []bool{false, true} {
			os.Remove(filepath.Join(out, c.file))
			var res *ShellRun
			if persistent {
				p := NewPersistent(r, s, 1)
				res = p.Call(context.Background(), []byte(`{}`))
				p.Close()
			} else {
				res = r.Run(context.Background(), &s, []byte(`{}`))
			}
			got, _ := os.ReadFile(filepath.Join(out, c.file))
			if strings.TrimSpace(string(got)) != c.say {
				t.Errorf("%s (persistent %v): wrote %q, want %q (exit %d, %s, %v)", c.spec.Command, persistent, got, c.say, res.Exit, res.Stderr, res.SpawnErr)
			}
		}
	}
	// Hermes' dialect keeps the no-shell split: && is an argument
	s := ShellSpec{Event: PostToolCallHook, Command: "echo a && echo b", Timeout: 10 * time.Second}
	s.SetProjectDir(project)
	if res := r.Run(context.Background(), &s, nil); string(res.Stdout) != "a && echo b\n" {
		t.Fatalf("hermes: %q", res.Stdout)
	}
}
