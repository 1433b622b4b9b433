package cmd_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/hooks"
)

// claudeValidator is a PreToolUse guard in the shape Claude Code's own
// examples take: it reads the JSON on stdin, refuses grep with exit 2 and
// a reason on stderr, and lets anything else through. sh only, so the
// test does not depend on jq or python.
const claudeValidator = `#!/bin/sh
input=$(cat)
case "$input" in
  *'"tool_name":"Bash"'*) ;;
  *) echo "not a Bash call: $input" >&2; exit 1 ;;
esac
case "$input" in
  *'"command":"grep '*) echo "Use rg instead of grep" >&2; exit 2 ;;
esac
exit 0
`

// A Claude Code validator under matcher "Bash" blocks a terminal call
// through a whole gateway, and `herald hooks test` picks the same hook
// for Bash and for terminal.
func TestClaudeMatcherBlocksTerminal(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	script := filepath.Join(home, "validate.sh")
	os.WriteFile(script, []byte(claudeValidator), 0o755)
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+project+"\nhooks:\n  PreToolUse:\n    - matcher: \"Bash\"\n      dialect: claude\n      command: "+script+"\n    - matcher: \"Grep|Glob\"\n      dialect: claude\n      command: "+script+" --never\n"), 0o600)
	os.WriteFile(filepath.Join(home, "grep.json"), []byte(`{"args":{"command":"grep root /etc/passwd"}}`), 0o600)

	g := cmdtest.Start(t, cmdtest.Options{Home: home, Args: []string{"--accept-hooks"}})
	if r := g.Say(t, "c1", "run: grep root /etc/passwd"); !strings.Contains(r.Text(), "Use rg instead of grep") {
		t.Fatalf("grep was not blocked: %q\n%s", r.Text(), g.Log())
	}
	if r := g.Say(t, "c1", "run: echo allowed-through"); !strings.Contains(r.Text(), "allowed-through") || strings.Contains(r.Text(), "Use rg") {
		t.Fatalf("echo: %q", r.Text())
	}
	if code := g.Stop(); code != 0 {
		t.Fatalf("gateway exit %d", code)
	}
	// the Grep|Glob matcher can take no herald tool: said at load, with the line
	if want := `config.yaml:8: hooks.PreToolUse[1]: matcher \"Grep|Glob\" matches no tool of herald's, so the hook never runs: herald has no such tool`; !strings.Contains(g.Log(), want) {
		t.Errorf("log lacks %q:\n%s", want, g.Log())
	}

	for _, tool := range []string{"Bash", "terminal"} {
		code, out, errw := run(t, home, "", "hooks", "test", "PreToolUse", "--for-tool", tool, "--payload-file", filepath.Join(home, "grep.json"))
		if code != 0 || !strings.Contains(out, "exit=2") || !strings.Contains(out, `"message":"Use rg instead of grep"`) || strings.Contains(out, "--never") {
			t.Fatalf("hooks test --for-tool %s: %d\n%s%s", tool, code, out, errw)
		}
	}
	if _, out, _ := run(t, home, "", "hooks", "test", "PreToolUse", "--for-tool", "Read"); !strings.Contains(out, "No shell hooks configured for pre_tool_call.") {
		t.Fatalf("hooks test --for-tool Read:\n%s", out)
	}
}

// A Claude Code plugin directory (plugins.claude) and a project's
// .claude/settings.json (claude_settings) load as they are: their commands
// run through sh -c with ${CLAUDE_PLUGIN_ROOT} and $CLAUDE_PROJECT_DIR,
// under the same consent as config.yaml's hooks, identical ones once; a
// malformed hooks file is named and the rest still load.
func TestClaudePluginAndSettings(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	plugin := filepath.Join(home, "plugins", "guard")
	writeFiles(t, filepath.Join(plugin, "hooks"), map[string]string{
		"hooks.json": `{
  "description": "refuses grep",
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh", "timeout": 10}]},
      {"matcher": "Edit|Write|MultiEdit", "hooks": [{"type": "prompt", "prompt": "is this safe?"}]}
    ],
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send herald"}]}]
  }
}`,
		"guard.sh": "input=$(cat)\necho \"$CLAUDE_PLUGIN_ROOT|$CLAUDE_PROJECT_DIR|$(pwd)\" > \"$CLAUDE_PROJECT_DIR/guard.env\"\ncase \"$input\" in *'\"command\":\"grep '*) echo 'grep is refused by the guard plugin' >&2; exit 2 ;; esac\n",
	})
	writeFiles(t, filepath.Join(home, "plugins", "broken", "hooks"), map[string]string{"hooks.json": "{\n  \"hooks\": {\n    \"PreToolUse\": [\n  }\n}\n"})
	writeFiles(t, filepath.Join(project, ".claude", "hooks"), map[string]string{
		"log.sh": "#!/bin/sh\ncat >> \"$CLAUDE_PROJECT_DIR/post.jsonl\"\necho >> \"$CLAUDE_PROJECT_DIR/post.jsonl\"\n",
	})
	logHook := `{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/log.sh"}`
	writeFiles(t, filepath.Join(project, ".claude"), map[string]string{
		"settings.json": `{"permissions": {"allow": ["Bash(ls:*)"]}, "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [` + logHook + `]}, {"matcher": "*", "hooks": [` + logHook + `]}]}}`,
	})
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+project+"\nplugins:\n  claude: [plugins/guard, plugins/broken]\nclaude_settings: "+filepath.Join(project, ".claude", "settings.json")+"\n"), 0o600)
	guardCmd := "sh " + plugin + "/hooks/guard.sh"
	logCmd := `"` + project + `"/.claude/hooks/log.sh`

	// listed with where each came from, not yet approved
	code, out, _ := run(t, home, "", "hooks", "list")
	for _, want := range []string{
		"Configured shell hooks (3 total):",
		guardCmd + ` matcher="Bash" (timeout=10s, dialect=claude, ✗ not allowlisted)`,
		"from: plugins/guard/hooks/hooks.json: hooks.PreToolUse[0].hooks[0]",
		logCmd + ` matcher="Bash" (timeout=60s, dialect=claude, ✗ not allowlisted)`,
		"from: " + filepath.Join(project, ".claude", "settings.json") + ": hooks.PostToolUse[0].hooks[0]",
		"plugins/broken/hooks/hooks.json: line 4, column 3: invalid JSON",
		// a prompt hook runs as herald's prompt type, under the same consent
		`prompt "is this safe?" matcher="Edit|Write|MultiEdit" (timeout=30s, block_on_failure, dialect=claude, ✗ not allowlisted)`,
		"from: plugins/guard/hooks/hooks.json: hooks.PreToolUse[1].hooks[0]",
		"plugins/guard/hooks/hooks.json:8: hooks.Notification: herald has no Notification event; skipped",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("hooks list lacks %q:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Fatalf("hooks list exit %d", code)
	}

	// unapproved: they do not run, and the log says how to approve them
	g := cmdtest.Start(t, cmdtest.Options{Home: home})
	if r := g.Say(t, "c1", "run: grep -c root /etc/passwd"); strings.Contains(r.Text(), "refused") {
		t.Fatalf("an unapproved plugin hook ran: %q", r.Text())
	}
	g.Stop()
	if want := `shell hook \"` + guardCmd + `\" for pre_tool_call is not approved, so it does not run`; !strings.Contains(g.Log(), want) {
		t.Fatalf("log lacks %q:\n%s", want, g.Log())
	}
	if _, err := os.Stat(filepath.Join(project, "guard.env")); err == nil {
		t.Fatal("the unapproved guard ran")
	}

	// approved: the guard blocks grep, the logger runs once per call
	g = cmdtest.Start(t, cmdtest.Options{Home: home, Args: []string{"--accept-hooks"}})
	if r := g.Say(t, "c2", "run: grep -c root /etc/passwd"); !strings.Contains(r.Text(), "grep is refused by the guard plugin") {
		t.Fatalf("grep not blocked: %q\n%s", r.Text(), g.Log())
	}
	if r := g.Say(t, "c2", "run: echo through-the-guard"); !strings.Contains(r.Text(), "through-the-guard") {
		t.Fatalf("echo: %q", r.Text())
	}
	if code := g.Stop(); code != 0 {
		t.Fatalf("gateway exit %d", code)
	}
	env, _ := os.ReadFile(filepath.Join(project, "guard.env"))
	if got, want := strings.TrimSpace(string(env)), plugin+"|"+project+"|"+project; got != want {
		t.Errorf("guard saw CLAUDE_PLUGIN_ROOT|CLAUDE_PROJECT_DIR|pwd = %q, want %q", got, want)
	}
	posts, _ := os.ReadFile(filepath.Join(project, "post.jsonl"))
	if n := strings.Count(string(posts), `"command":"echo through-the-guard"`); n != 1 {
		t.Errorf("the settings file's PostToolUse hook ran %d times for one call (identical hooks run once):\n%s", n, posts)
	}
	for _, want := range []string{"plugins/broken/hooks/hooks.json: line 4, column 3: invalid JSON", "runs once: it repeats"} {
		if !strings.Contains(g.Log(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if _, out, _ := run(t, home, "", "hooks", "list"); strings.Count(out, "✓ allowed") != 3 {
		t.Errorf("after --accept-hooks all three are approved:\n%s", out)
	}
}

// Claude Code's and OpenHarness' event names are accepted wherever a name
// is: hooks test, hooks allow, and a Go plugin's RegisterHook.
func TestEventAliasesEverywhere(t *testing.T) {
	home := t.TempDir()
	script := filepath.Join(home, "post.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\necho post-hook-ran >&2\n"), 0o755)
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("hooks:\n  post_tool_call:\n    - command: "+script+"\n"), 0o600)
	for _, name := range []string{"post_tool_use", "PostToolUse"} {
		if code, out, errw := run(t, home, "", "hooks", "test", name); code != 0 || !strings.Contains(out, "post-hook-ran") {
			t.Fatalf("hooks test %s: %d\n%s%s", name, code, out, errw)
		}
	}
	if code, out, _ := run(t, home, "", "hooks", "allow", "PostToolUse", script); code != 0 || !strings.Contains(out, "Approved shell hook for post_tool_call") {
		t.Fatalf("hooks allow PostToolUse: %d %s", code, out)
	}
	b, _ := os.ReadFile(filepath.Join(home, hooks.AllowlistFile))
	var list struct{ Approvals []hooks.Consented }
	if json.Unmarshal(b, &list); len(list.Approvals) != 1 || list.Approvals[0].Event != "post_tool_call" {
		t.Fatalf("allowlist: %s", b)
	}
	if code, out, _ := run(t, home, "", "hooks", "list"); code != 0 || !strings.Contains(out, "✓ allowed") {
		t.Fatalf("the alias's approval is the event's: %s", out)
	}

	guard := hooks.Plugin{Name: "alias-guard", Register: func(c *hooks.PluginContext) error {
		c.RegisterHook("PreToolUse", hooks.Func(func(ctx context.Context, p *hooks.PreToolCall) *hooks.ToolDecision {
			return hooks.Block("blocked by a plugin that said PreToolUse")
		}))
		return nil
	}}
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{guard}})
	if r := g.Say(t, "c1", "run: echo hi"); !strings.Contains(r.Text(), "blocked by a plugin that said PreToolUse") {
		t.Fatalf("RegisterHook(PreToolUse) did not attach: %q", r.Text())
	}
}
