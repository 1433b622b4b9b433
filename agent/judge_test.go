package agent

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/hooks"
)

const verdictSystem = `Answer with JSON only: {"ok": true} or {"ok": false, "reason": "..."}.`

// judgeAgent is an agent on the fake endpoint with read_file and terminal
// confined to a fresh working directory, and a registry that records
// every event and answers every interceptor.
func judgeAgent(t *testing.T, srv *agenttest.Server) (*Agent, *recorder, string) {
	t.Helper()
	dir := t.TempDir()
	a := httpAgent(t, srv)
	a.Retries = -1
	paths := &Paths{Workdir: dir}
	a.Tools.Add(&ReadFile{Paths: paths})
	a.Tools.Add(&Terminal{Paths: paths})
	rec := &recorder{}
	a.Hooks.Subscribe(hooks.Subscription{Name: "everything", Attach: hooks.AttachGo, Events: []string{"*"}, Handler: rec.handler})
	return a, rec, dir
}

// A prompt hook is one completion: the instruction as the system prompt,
// the rendered prompt as the user's message, no tools, JSON asked for,
// the hook's model; the answer comes back as text.
func TestJudgePrompt(t *testing.T) {
	srv := agenttest.New(t, agenttest.Reply{Content: `{"ok": false, "reason": "writes outside /srv/app"}`})
	a, rec, _ := judgeAgent(t, srv)
	got, err := NewJudge(a).Judge(context.Background(), hooks.JudgeRequest{Kind: hooks.TypePrompt, System: verdictSystem,
		Prompt: `Refuse any command that writes outside /srv/app. {"tool_name":"terminal"}`, Model: "judge-model", SessionID: "s1", Event: hooks.PreToolCallHook})
	if err != nil {
		t.Fatal(err)
	}
	if got != `{"ok": false, "reason": "writes outside /srv/app"}` {
		t.Errorf("answer %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	body := reqs[0].Body
	if body.Model != "judge-model" || len(body.Tools) != 0 || len(body.Messages) != 2 ||
		body.Messages[0].Role != "system" || body.Messages[0].Content != verdictSystem || !strings.HasPrefix(body.Messages[1].Content, "Refuse any command") {
		t.Errorf("request %+v", body)
	}
	if body.ResponseFormat == nil || body.ResponseFormat.Type != "json_object" {
		t.Errorf("no JSON mode asked: %s", reqs[0].Raw)
	}
	drain(t, a.Hooks)
	if n := rec.names(); len(n) != 0 {
		t.Errorf("the judge's model call fired %v", n)
	}
}

// An endpoint that refuses response_format gets the request again without
// it, and is not asked again; a post_compact prompt (free text) never asks.
func TestJudgePromptWithoutJSONMode(t *testing.T) {
	srv := agenttest.New(t)
	srv.Default = agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
		if r.Body.ResponseFormat != nil {
			return agenttest.Reply{Status: http.StatusBadRequest, Message: "unknown field response_format"}
		}
		return agenttest.Reply{Content: `{"ok": true}`}
	}}
	a, _, _ := judgeAgent(t, srv)
	j := NewJudge(a)
	for range 2 {
		got, err := j.Judge(context.Background(), hooks.JudgeRequest{Kind: hooks.TypePrompt, System: verdictSystem, Prompt: "is this fine?", Event: hooks.PreToolCallHook})
		if err != nil || got != `{"ok": true}` {
			t.Fatalf("%q %v", got, err)
		}
	}
	if _, err := j.Judge(context.Background(), hooks.JudgeRequest{Kind: hooks.TypePrompt, System: "Answer in JSON", Prompt: "what must survive?", Event: hooks.PostCompactHook}); err != nil {
		t.Fatal(err)
	}
	var withFormat int
	for _, r := range srv.Requests() {
		if r.Body.ResponseFormat != nil {
			withFormat++
		}
	}
	if n := len(srv.Requests()); n != 4 || withFormat != 1 {
		t.Errorf("%d requests, %d with response_format (want 4, 1)", n, withFormat)
	}
}

// An agent hook reads a file with read_file and answers from it.
func TestJudgeAgentReadsFile(t *testing.T) {
	srv := agenttest.New(t,
		agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call_1", Name: "read_file", Args: `{"path":"POLICY.md"}`}}},
		agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
			if last := r.LastMessage(); last.Role == "tool" && strings.Contains(last.Content, "deploys are frozen") {
				return agenttest.Reply{Content: `{"ok": false, "reason": "deploys are frozen"}`}
			}
			return agenttest.Reply{Content: `{"ok": true}`}
		}},
	)
	a, rec, dir := judgeAgent(t, srv)
	if err := os.WriteFile(filepath.Join(dir, "POLICY.md"), []byte("deploys are frozen until Monday\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := NewJudge(a).Judge(context.Background(), hooks.JudgeRequest{Kind: hooks.TypeAgent, System: verdictSystem, Prompt: "May we deploy? Read POLICY.md.", Event: hooks.PreToolCallHook})
	if err != nil {
		t.Fatal(err)
	}
	if got != `{"ok": false, "reason": "deploys are frozen"}` {
		t.Errorf("answer %q", got)
	}
	var names []string
	for _, tl := range srv.Requests()[0].Body.Tools {
		names = append(names, tl.Function.Name)
	}
	if strings.Join(names, ",") != "read_file,terminal" {
		t.Errorf("the sub-agent's tools: %v", names)
	}
	drain(t, a.Hooks)
	if n := rec.names(); len(n) != 0 {
		t.Errorf("the judge's calls fired %v", n)
	}
}

// A command that needs approval is refused to the sub-agent with a tool
// error: it does not run, and nobody is asked (no approval hook fires,
// no Approver exists to call).
func TestJudgeAgentTerminalNeedsApproval(t *testing.T) {
	srv := agenttest.New(t,
		agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call_1", Name: "terminal", Args: `{"command":"rm -rf keep"}`}}},
		agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call_2", Name: "terminal", Args: `{"command":"ls"}`}}},
		agenttest.Reply{Content: `{"ok": true}`},
	)
	a, rec, dir := judgeAgent(t, srv)
	a.ApprovalMode = ModeYolo // the gateway's own mode does not lend the sub-agent anything
	if err := os.Mkdir(filepath.Join(dir, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := NewJudge(a).Judge(context.Background(), hooks.JudgeRequest{Kind: hooks.TypeAgent, System: verdictSystem, Prompt: "check", Event: hooks.PreToolCallHook}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	refused := reqs[1].LastMessage()
	if refused.Role != "tool" || !strings.Contains(refused.Content, `"error"`) || !strings.Contains(refused.Content, "approval") {
		t.Errorf("refusal %+v", refused)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep")); err != nil {
		t.Errorf("the command ran: %v", err)
	}
	if ran := reqs[2].LastMessage(); !strings.Contains(ran.Content, "keep") || !strings.Contains(ran.Content, `"exit_code":0`) {
		t.Errorf("a command needing no approval did not run: %+v", ran)
	}
	drain(t, a.Hooks)
	if n := rec.names(); len(n) != 0 {
		t.Errorf("the judge's calls fired %v", n)
	}
}

// An agent hook that keeps calling tools stops at its budget with an
// error; the default budget is 5 model calls.
func TestJudgeAgentBudget(t *testing.T) {
	for _, tc := range []struct {
		max, calls int
	}{{2, 2}, {0, DefaultJudgeIterations}} {
		srv := agenttest.New(t)
		srv.Default = agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call_x", Name: "terminal", Args: `{"command":"true"}`}}}
		a, _, _ := judgeAgent(t, srv)
		_, err := NewJudge(a).Judge(context.Background(), hooks.JudgeRequest{Kind: hooks.TypeAgent, Prompt: "loop", MaxIterations: tc.max})
		if !errors.Is(err, ErrBudget) {
			t.Errorf("max %d: error %v", tc.max, err)
		}
		if n := len(srv.Requests()); n != tc.calls {
			t.Errorf("max %d: %d model calls, want %d", tc.max, n, tc.calls)
		}
	}
}

// Model errors and the caller's deadline surface as errors.
func TestJudgeErrors(t *testing.T) {
	srv := agenttest.New(t, agenttest.Reply{Status: http.StatusInternalServerError})
	a, _, _ := judgeAgent(t, srv)
	j := NewJudge(a)
	if _, err := j.Judge(context.Background(), hooks.JudgeRequest{Kind: hooks.TypePrompt, Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("500: %v", err)
	}
	if _, err := j.Judge(context.Background(), hooks.JudgeRequest{Kind: "command", Prompt: "x"}); err == nil {
		t.Error("a command hook judged")
	}

	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv.Push(agenttest.Reply{Func: func(*agenttest.Request) agenttest.Reply {
		once.Do(func() { close(started) })
		<-release
		return agenttest.Reply{Content: `{"ok": true}`}
	}})
	defer close(release)
	for _, kind := range []string{hooks.TypePrompt, hooks.TypeAgent} {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := j.Judge(ctx, hooks.JudgeRequest{Kind: kind, Prompt: "slow"})
			errc <- err
		}()
		if kind == hooks.TypePrompt {
			<-started
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error %v", kind, err)
		}
	}
}
