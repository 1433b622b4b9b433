package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/hooks"
)

// claudeHooks registers /bin/sh scripts as approved claude-dialect shell
// hooks, each {event, body}, in the shape Claude Code hooks take (they
// read the JSON on stdin and answer with an exit status or JSON).
func claudeHooks(t *testing.T, dialect string, specs ...[2]string) *hooks.Registry {
	t.Helper()
	dir := t.TempDir()
	reg := hooks.NewRegistry(nil)
	t.Cleanup(func() { reg.Close(context.Background()) })
	var list []hooks.ShellSpec
	for i, s := range specs {
		path := filepath.Join(dir, "hook"+string(rune('a'+i))+".sh")
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+s[1]+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		list = append(list, hooks.ShellSpec{Event: s[0], Command: path, Timeout: 20 * time.Second, Dialect: dialect})
	}
	sh := &hooks.ShellHooks{Registry: reg, Runner: &hooks.ShellRunner{Environ: os.Environ()},
		Consent: &hooks.Consent{List: hooks.Allowlist{Path: filepath.Join(dir, hooks.AllowlistFile)}, Accept: true}}
	for _, r := range sh.Register(list) {
		if !r.Running {
			t.Fatalf("hook %s not running: %s", r.Spec.Command, r.Warning)
		}
	}
	return reg
}

// lastUser returns the content of the last user message of a request.
func lastUser(req openai.ChatCompletionRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == openai.ChatMessageRoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

func TestStopHookSendsTheAgentBackOnce(t *testing.T) {
	// a Stop hook in Claude Code's shape: block unless a Stop hook is
	// already active, with the reason as the next instruction
	reg := claudeHooks(t, "claude", [2]string{hooks.PostLLMCallHook, `
in=$(cat)
case "$in" in *'"stop_hook_active":true'*) exit 0;; esac
echo '{"decision":"block","reason":"Run the tests before you finish."}'`})
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		if n == 1 {
			return textResp("done"), nil
		}
		return textResp("tests pass; done: " + lastUser(req)), nil
	}}
	res, err := newAgent(m, reg).Run(context.Background(), "fix it", Options{Turn: Turn{SessionID: "s1"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.n != 2 {
		t.Fatalf("model called %d times, want 2 (one continuation)", m.n)
	}
	want := "tests pass; done: " + StopFeedback + "Run the tests before you finish."
	if !res.Completed || res.FinalResponse != want {
		t.Fatalf("result = %+v, want final %q", res, want)
	}
	roles := []string{}
	for _, msg := range res.Messages {
		roles = append(roles, msg.Role)
	}
	if got := strings.Join(roles, ","); got != "user,assistant,user,assistant" {
		t.Fatalf("messages = %s", got)
	}
}

func TestStopHookLoopIsBoundedByTheBudget(t *testing.T) {
	// a Stop hook that ignores stop_hook_active blocks forever: the
	// iteration budget ends the turn with the last answer
	reg := claudeHooks(t, "claude", [2]string{hooks.PostLLMCallHook, `echo '{"decision":"block","reason":"again"}'`})
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return textResp("answer"), nil
	}}
	a := newAgent(m, reg)
	a.MaxIterations = 3
	res, err := a.Run(context.Background(), "go", Options{Turn: Turn{SessionID: "s1"}})
	if err != nil || !res.Completed || res.FinalResponse != "answer" || m.n != 3 {
		t.Fatalf("res = %+v, err = %v, calls = %d", res, err, m.n)
	}
}

func TestStopHookExitTwoContinuesWithStderr(t *testing.T) {
	reg := claudeHooks(t, "claude", [2]string{hooks.PostLLMCallHook, `
grep -q '"stop_hook_active":true' && exit 0
echo "lint first" >&2; exit 2`})
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return textResp("saw: " + lastUser(req)), nil
	}}
	res, err := newAgent(m, reg).Run(context.Background(), "go", Options{Turn: Turn{SessionID: "s1"}})
	if err != nil || res.FinalResponse != "saw: "+StopFeedback+"lint first" {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
}

func TestHermesPostLLMCallHookCannotContinue(t *testing.T) {
	// Hermes ignores what post_llm_call hooks print
	reg := claudeHooks(t, "", [2]string{hooks.PostLLMCallHook, `echo '{"decision":"block","reason":"again"}'`})
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return textResp("one"), nil
	}}
	res, err := newAgent(m, reg).Run(context.Background(), "go", Options{Turn: Turn{SessionID: "s1"}})
	if err != nil || res.FinalResponse != "one" || m.n != 1 {
		t.Fatalf("res = %+v, err = %v, calls = %d", res, err, m.n)
	}
}

func TestPostToolUseFeedbackReachesTheModel(t *testing.T) {
	reg := claudeHooks(t, "claude",
		[2]string{hooks.PostToolCallHook, `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"the file is generated; edit the template"}}'`},
		[2]string{hooks.PostToolCallHook, `cat >/dev/null; echo '{"decision":"block","reason":"formatting failed: run gofmt"}'`},
	)
	tool := &stubTool{name: "write_file", out: `{"ok":true}`}
	m := toolThenText("write_file", map[string]any{"path": "a.go", "content": "x"})
	res, err := newAgent(m, reg, tool).Run(context.Background(), "write it", Options{Turn: Turn{SessionID: "s1"}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	seen := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1]
	if seen.Role != openai.ChatMessageRoleTool {
		t.Fatalf("last message of the second request is %s", seen.Role)
	}
	for _, want := range []string{`{"ok":true}`, "PostToolUse hook feedback:\nformatting failed: run gofmt", "Additional context from a hook:\nthe file is generated; edit the template"} {
		mustContain(t, seen.Content, want)
	}
	mustContain(t, res.FinalResponse, "the file is generated")
}

func TestPostToolCallShellHookFinishesBeforeTheNextTool(t *testing.T) {
	// a formatter on post_tool_call (Hermes dialect) rewrites the file;
	// the next tool must see its work, as Hermes calls it in line
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	reg := claudeHooks(t, "", [2]string{hooks.PostToolCallHook, `cat >/dev/null; sleep 0.2; echo formatted > ` + file})
	var mu sync.Mutex
	var seen []string
	reader := &funcTool{name: "read_it", run: func(ctx context.Context, c *Call) (string, error) {
		b, _ := os.ReadFile(file)
		mu.Lock()
		seen = append(seen, strings.TrimSpace(string(b)))
		mu.Unlock()
		return string(b), nil
	}}
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		if n <= 2 {
			return callResp("c"+string(rune('0'+n)), "read_it", map[string]any{}), nil
		}
		return textResp("ok"), nil
	}}
	if _, err := newAgent(m, reg, reader).Run(context.Background(), "go", Options{Turn: Turn{SessionID: "s1"}}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[1] != "formatted" {
		t.Fatalf("the second tool saw %q, want the hook's work", seen)
	}
}

func TestUserPromptSubmitBlockKeepsThePromptFromTheModel(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"json", `cat >/dev/null; echo '{"decision":"block","reason":"no secrets in prompts"}'`, "no secrets in prompts"},
		{"exit 2", `cat >/dev/null; echo "prompt refused by policy" >&2; exit 2`, "prompt refused by policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := claudeHooks(t, "claude", [2]string{hooks.PreLLMCallHook, tc.body})
			m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
				return textResp("x"), nil
			}}
			res, err := newAgent(m, reg).Run(context.Background(), "my key is hunter2", Options{Turn: Turn{SessionID: "s1"}})
			if err != nil || !res.Refused || !res.Completed || res.FinalResponse != tc.want || len(res.Messages) != 0 || m.n != 0 {
				t.Fatalf("res = %+v, err = %v, model calls = %d", res, err, m.n)
			}
		})
	}
}

func TestSessionStartContextReachesTheFirstCall(t *testing.T) {
	reg := claudeHooks(t, "claude",
		[2]string{hooks.OnSessionStartHook, `cat >/dev/null; echo "Branch: main, 3 files changed"`},
		[2]string{hooks.PreLLMCallHook, `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"Today is Friday"}}'`},
	)
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return textResp("ok"), nil
	}}
	res, err := newAgent(m, reg).Run(context.Background(), "hi", Options{Turn: Turn{SessionID: "s1"}})
	if err != nil {
		t.Fatal(err)
	}
	got := lastUser(m.requests()[0])
	if got != "hi\n\nBranch: main, 3 files changed\n\nToday is Friday" {
		t.Fatalf("first request's user message = %q", got)
	}
	if res.Messages[0].Content != "hi" {
		t.Fatalf("stored prompt = %q, want the prompt alone", res.Messages[0].Content)
	}
}

func TestSystemMessageIsShownAndContinueFalseHalts(t *testing.T) {
	reg := claudeHooks(t, "claude",
		[2]string{hooks.PreToolCallHook, `cat >/dev/null; echo '{"systemMessage":"checking your command"}'`},
		[2]string{hooks.PostToolCallHook, `cat >/dev/null; echo '{"continue":false,"stopReason":"Build broken: stopping here."}'`},
	)
	tool := &stubTool{name: "terminal", out: `{"output":"ok"}`}
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return callResp("c1", "terminal", map[string]any{"command": "make"}), nil
	}}
	var mu sync.Mutex
	var notices []string
	res, err := newAgent(m, reg, tool).Run(context.Background(), "build", Options{Turn: Turn{SessionID: "s1"}, Notice: func(s string) {
		mu.Lock()
		notices = append(notices, s)
		mu.Unlock()
	}})
	if err != nil || !res.Halted || !res.Completed || res.FinalResponse != "Build broken: stopping here." || m.n != 1 {
		t.Fatalf("res = %+v, err = %v, model calls = %d", res, err, m.n)
	}
	if len(notices) != 1 || notices[0] != "checking your command" {
		t.Fatalf("notices = %q", notices)
	}
	for _, msg := range res.Messages {
		if strings.Contains(msg.Content, "Build broken") {
			t.Fatalf("the stop reason reached the history: %+v", msg)
		}
	}
}

// approvingTool asks for approval as the terminal tool does for a
// dangerous command.
func approvingTool() Tool {
	return &funcTool{name: "terminal", run: func(ctx context.Context, c *Call) (string, error) {
		if err := c.Approve(ctx, c.String("command"), "recursive delete", []string{"rm -r"}); err != nil {
			return "", err
		}
		return `{"output":"ran"}`, nil
	}}
}

func TestPermissionDecisionAllowSkipsTheApprovalPrompt(t *testing.T) {
	reg := claudeHooks(t, "claude", [2]string{hooks.PreToolCallHook, `cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"cleanup of build dir"}}'`})
	ap := fixedApprover(ChoiceDeny)
	m := toolThenText("terminal", map[string]any{"command": "rm -r build"})
	res, err := newAgent(m, reg, approvingTool()).Run(context.Background(), "clean", Options{Turn: Turn{SessionID: "s1"}, Approver: ap})
	if err != nil || ap.asked() != 0 || !strings.Contains(res.FinalResponse, "ran") {
		t.Fatalf("res = %+v, err = %v, asked = %d", res, err, ap.asked())
	}

	// approvals: off is a rule, not a prompt: allow does not override it
	a := newAgent(toolThenText("terminal", map[string]any{"command": "rm -r build"}), reg, approvingTool())
	a.ApprovalMode = ModeOff
	res, err = a.Run(context.Background(), "clean", Options{Turn: Turn{SessionID: "s2"}, Approver: ap})
	if err != nil || strings.Contains(res.FinalResponse, "ran") {
		t.Fatalf("approvals off: res = %+v, err = %v", res, err)
	}
}

func TestPermissionDecisionAskForcesTheApprovalPrompt(t *testing.T) {
	reg := claudeHooks(t, "claude", [2]string{hooks.PreToolCallHook, `cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"touches production"}}'`})
	ap := fixedApprover(ChoiceDeny)
	tool := &stubTool{name: "terminal", out: `{"output":"ran"}`}
	m := toolThenText("terminal", map[string]any{"command": "ls"})
	res, err := newAgent(m, reg, tool).Run(context.Background(), "look", Options{Turn: Turn{SessionID: "s1"}, Approver: ap})
	if err != nil || ap.asked() != 1 || tool.calls() != 0 || strings.Contains(res.FinalResponse, "ran") {
		t.Fatalf("res = %+v, err = %v, asked = %d, tool calls = %d", res, err, ap.asked(), tool.calls())
	}
}

func TestSubagentStopHookSendsTheChildBack(t *testing.T) {
	reg := claudeHooks(t, "claude", [2]string{hooks.SubagentStopHook, `
in=$(cat)
case "$in" in *'"stop_hook_active":true'*) exit 0;; esac
echo '{"decision":"block","reason":"also list the tests you ran"}'`})
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		switch {
		case lastUser(req) == "delegate" && req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleUser:
			return callResp("d1", "delegate_task", map[string]any{"goal": "check the build"}), nil
		case req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool:
			return textResp("parent saw: " + req.Messages[len(req.Messages)-1].Content), nil
		case strings.HasPrefix(lastUser(req), StopFeedback):
			return textResp("build ok; tests: unit"), nil
		}
		return textResp("build ok"), nil
	}}
	a := newAgent(m, reg)
	a.Tools.Add(&Delegate{Agent: a})
	res, err := a.Run(context.Background(), "delegate", Options{Turn: Turn{SessionID: "p1"}})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Results []childResult `json:"results"`
	}
	final := strings.TrimPrefix(res.FinalResponse, "parent saw: ")
	if err := json.Unmarshal([]byte(final), &out); err != nil || len(out.Results) != 1 {
		t.Fatalf("final = %q (%v)", res.FinalResponse, err)
	}
	if r := out.Results[0]; r.Status != "completed" || r.Summary == nil || *r.Summary != "build ok; tests: unit" || r.APICalls != 2 {
		t.Fatalf("child result = %+v", r)
	}
}

// funcTool is a tool whose Run is a function.
type funcTool struct {
	name string
	run  func(ctx context.Context, c *Call) (string, error)
}

func (f *funcTool) Name() string            { return f.name }
func (f *funcTool) Description() string     { return "test tool " + f.name }
func (f *funcTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (f *funcTool) Run(ctx context.Context, c *Call) (string, error) {
	return f.run(ctx, c)
}

func TestContinueFalseOnStopKeepsTheAnswer(t *testing.T) {
	reg := claudeHooks(t, "claude", [2]string{hooks.PostLLMCallHook, `cat >/dev/null; echo '{"continue":false,"stopReason":"Session budget reached."}'`})
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return textResp("the answer"), nil
	}}
	var notices []string
	res, err := newAgent(m, reg).Run(context.Background(), "q", Options{Turn: Turn{SessionID: "s1"}, Notice: func(s string) { notices = append(notices, s) }})
	if err != nil || !res.Halted || res.FinalResponse != "the answer" || len(notices) != 1 || notices[0] != "Session budget reached." {
		t.Fatalf("res = %+v, err = %v, notices = %q", res, err, notices)
	}
}
