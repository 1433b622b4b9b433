package shell_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// These tests run the example scripts — the Hermes ones byte for byte as
// the Hermes guide prints them — as shell hooks of a whole gateway.

func script(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func needJQ(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("these Hermes scripts need jq; scripts/test installs it")
	}
}

func start(t *testing.T, config string, env map[string]string, args ...string) *cmdtest.Gateway {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return cmdtest.Start(t, cmdtest.Options{Home: home, Env: env, Args: args})
}

func TestBlockRmRf(t *testing.T) {
	needJQ(t)
	g := start(t, "hooks:\n  pre_tool_call:\n    - matcher: terminal\n      command: "+script(t, "block-rm-rf.sh")+"\n      timeout: 5\n", nil, "--accept-hooks")
	r := g.Say(t, "b", "run: rm -rf /")
	if !strings.Contains(r.Text(), "blocked: rm -rf / is not permitted") {
		t.Fatalf("reply = %q", r.Text())
	}
	if r := g.Say(t, "b", "run: echo harmless"); !strings.Contains(r.Text(), "harmless") {
		t.Fatalf("a harmless command was blocked: %q", r.Text())
	}
}

func TestInjectGitStatus(t *testing.T) {
	needJQ(t)
	hook := script(t, "inject-cwd-context.sh")
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(repo, "new.txt"), []byte("x"), 0o600)
	t.Chdir(repo)
	g := start(t, "hooks:\n  pre_llm_call:\n    - command: "+hook+"\n", nil, "--accept-hooks")
	r := g.Say(t, "g", "what changed?")
	// the echo model shows the user message as the model received it
	if !strings.Contains(r.Text(), "what changed?\n\nUncommitted changes in cwd:\n?? new.txt") {
		t.Fatalf("reply = %q\n%s", r.Text(), g.Log())
	}
}

func hasTool(req *agenttest.Request, name string) bool {
	for _, t := range req.Body.Tools {
		if t.Function != nil && t.Function.Name == name {
			return true
		}
	}
	return false
}

func TestLogOrchestration(t *testing.T) {
	needJQ(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	os.MkdirAll(filepath.Join(home, ".hermes", "logs"), 0o700)
	fm := agenttest.New(t)
	fm.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		switch {
		case !hasTool(req, "delegate_task"):
			return agenttest.Reply{Content: "child done"}
		case req.LastMessage().Role == openai.ChatMessageRoleTool:
			return agenttest.Reply{Content: "all done"}
		}
		return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "c1", Name: "delegate_task", Args: `{"tasks":[{"goal":"one","role":"a"},{"goal":"two","role":"b"}]}`}}}
	}}
	g := start(t, "hooks:\n  subagent_stop:\n    - command: "+script(t, "log-orchestration.sh")+"\n",
		map[string]string{"OPENAI_BASE_URL": fm.BaseURL(), "OPENAI_API_KEY": "sk-test-0123456789abcdefghij"}, "--accept-hooks")
	r := g.Say(t, "o", "delegate please")
	logPath := filepath.Join(home, ".hermes", "logs", "orchestration.log")
	var b []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ = os.ReadFile(logPath); strings.Count(string(b), "\n") >= 2 {
			break
		}
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"parent":"`+r.SessionID+`"`) || !strings.Contains(lines[0], `"child_role":"a"`) || !strings.Contains(lines[1], `"child_role":"b"`) {
		t.Fatalf("orchestration.log =\n%s", b)
	}
}

func TestAutoFormatAfterWrite(t *testing.T) {
	needJQ(t)
	hook := script(t, "auto-format.sh")
	work := t.TempDir()
	t.Chdir(work)
	fm := agenttest.New(t)
	fm.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		if req.LastMessage().Role == openai.ChatMessageRoleTool {
			return agenttest.Reply{Content: "written"}
		}
		return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "w1", Name: "write_file", Args: `{"path":"main.go","content":"package main\nfunc main(){println(1)}\n"}`}}}
	}}
	g := start(t, "hooks:\n  post_tool_call:\n    - matcher: \"write_file|patch\"\n      command: "+hook+"\n",
		map[string]string{"OPENAI_BASE_URL": fm.BaseURL(), "OPENAI_API_KEY": "sk-test-0123456789abcdefghij"}, "--accept-hooks")
	if r := g.Say(t, "f", "write it"); r.Text() != "written" {
		t.Fatalf("reply = %q", r.Text())
	}
	want := "package main\n\nfunc main() { println(1) }\n"
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, _ = os.ReadFile(filepath.Join(work, "main.go")); string(got) == want {
			return
		}
	}
	t.Fatalf("main.go was not gofmt-ed:\n%s\n%s", got, g.Log())
}

func TestProtectPathClaudeDialect(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HERALD_PROTECTED_PATH", dir)
	g := start(t, "hooks:\n  PreToolUse:\n    - matcher: terminal\n      dialect: claude\n      command: "+script(t, "protect-path.py")+"\n      env: [HERALD_PROTECTED_PATH]\n", nil, "--accept-hooks")
	r := g.Say(t, "p", "run: echo owned > "+dir+"/file")
	if !strings.Contains(r.Text(), "writes under "+dir+" are not allowed") {
		t.Fatalf("reply = %q", r.Text())
	}
	if _, err := os.Stat(filepath.Join(dir, "file")); err == nil {
		t.Fatal("the protected file was written")
	}
	if r := g.Say(t, "p", "run: echo fine"); !strings.Contains(r.Text(), "fine") {
		t.Fatalf("an unrelated command was blocked: %q", r.Text())
	}
}

func TestPreAndPostAudit(t *testing.T) {
	needJQ(t)
	logf := filepath.Join(t.TempDir(), "audit.jsonl")
	t.Setenv("HERALD_AUDIT_LOG", logf)
	s := script(t, "audit.sh")
	g := start(t, "hooks:\n  pre_tool_call:\n    - command: "+s+"\n  post_tool_call:\n    - command: "+s+"\n", nil, "--accept-hooks")
	g.Say(t, "a", "run: echo audited")
	var b []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ = os.ReadFile(logf); strings.Count(string(b), "\n") >= 2 {
			break
		}
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"event":"pre_tool_call"`) || !strings.Contains(lines[0], `"command":"echo audited"`) ||
		!strings.Contains(lines[1], `"event":"post_tool_call"`) || !strings.Contains(lines[1], "audited") || !strings.Contains(lines[1], `"duration_ms":`) {
		t.Fatalf("audit log =\n%s", b)
	}
}

// Without consent a hook does not run — except that an unapproved
// fail_closed pre_tool_call hook blocks its tool calls.
func TestConsent(t *testing.T) {
	needJQ(t)
	cfg := "hooks:\n  pre_tool_call:\n    - matcher: terminal\n      command: " + script(t, "block-rm-rf.sh") + "\n      fail_closed: true\n"
	g := start(t, cfg, nil)
	r := g.Say(t, "c", "run: echo hi")
	if !strings.Contains(r.Text(), "failed closed") || !strings.Contains(g.Log(), "not approved") {
		t.Fatalf("unapproved fail_closed hook: reply %q", r.Text())
	}
	home := g.Home
	g.Stop()
	// approve it; now it runs (and lets harmless commands through)
	if code, out := run(t, home, "hooks", "allow", "pre_tool_call", script(t, "block-rm-rf.sh")); code != 0 || !strings.Contains(out, "Approved") {
		t.Fatalf("hooks allow: %d %s", code, out)
	}
	g = cmdtest.Start(t, cmdtest.Options{Home: home})
	if r := g.Say(t, "c", "run: echo hi"); !strings.Contains(r.Text(), "hi") || strings.Contains(r.Text(), "failed closed") {
		t.Fatalf("approved hook: %q", r.Text())
	}
	if r := g.Say(t, "c", "run: rm -rf /"); !strings.Contains(r.Text(), "blocked: rm -rf /") {
		t.Fatalf("approved hook did not block: %q", r.Text())
	}
}
