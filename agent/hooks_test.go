package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/hooks"
)

// interceptors answers the interceptor points the way a plugin would and
// records what it was given.
func interceptors(reg *hooks.Registry, rec *recorder) {
	reg.Subscribe(hooks.Subscription{Name: "plugin", Attach: hooks.AttachGo,
		Events: []string{hooks.PreLLMCallHook, hooks.PreToolCallHook, hooks.TransformToolResultHook, hooks.TransformLLMOutputHook},
		Handler: func(ctx context.Context, ev hooks.Event) (any, error) {
			rec.handler(ctx, ev)
			switch p := ev.Payload.(type) {
			case *hooks.PreLLMCall:
				return &hooks.LLMContext{Context: "Recalled: the user likes Go"}, nil
			case *hooks.PreToolCall:
				return &hooks.ToolDecision{Action: "modify", Args: map[string]any{"limit": 2}}, nil
			case *hooks.ToolResult:
				return "transformed " + p.Result, nil
			case *hooks.LLMOutput:
				return strings.ToUpper(p.ResponseText), nil
			}
			return nil, nil
		}})
}

func TestHookPayloadsGolden(t *testing.T) {
	reg := hooks.NewRegistry(nil)
	rec := observe(reg)
	interceptors(reg, rec)
	tool := &stubTool{name: "lookup", out: `{"value":42}`}
	m := toolThenText("lookup", map[string]any{"key": "alpha"})
	a := newAgent(m, reg, tool)
	a.SystemPrompt = "You are herald."
	res, err := a.Run(context.Background(), "what is alpha?", Options{Turn: Turn{SessionID: "sess-1", SessionKey: "agent:main:local:dm:c1", Platform: "local", UserID: "u1", ChatID: "c1"}})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, reg)

	// pre_llm_call context: in the request's user message only
	reqs := m.requests()
	if got := reqs[0].Messages[1].Content; got != "what is alpha?\n\nRecalled: the user likes Go" {
		t.Errorf("request user message %q", got)
	}
	if reqs[0].Messages[0].Content != "You are herald." {
		t.Errorf("system prompt changed: %q", reqs[0].Messages[0].Content)
	}
	if res.Messages[0].Content != "what is alpha?" {
		t.Errorf("stored user message %q", res.Messages[0].Content)
	}
	// modify merged; transform_tool_result reached the model; transform_llm_output replaced
	if tool.args[0]["key"] != "alpha" || tool.args[0]["limit"] != 2 {
		t.Errorf("tool args %v", tool.args[0])
	}
	if got := reqs[1].Messages[len(reqs[1].Messages)-1].Content; got != `transformed {"value":42}` {
		t.Errorf("tool result seen by the model %q", got)
	}
	if res.FinalResponse != `TOOL SAID: TRANSFORMED {"VALUE":42}` {
		t.Errorf("final %q", res.FinalResponse)
	}

	byName := map[string][]json.RawMessage{}
	for _, e := range rec.events() {
		byName[e.Name] = append(byName[e.Name], e.Payload)
	}
	for _, n := range []string{hooks.OnSessionStartHook, hooks.PreLLMCallHook, hooks.PreAPIRequestHook, hooks.PostAPIRequestHook,
		hooks.PreToolCallHook, hooks.PostToolCallHook, hooks.TransformToolResultHook, hooks.AgentStepEv,
		hooks.TransformLLMOutputHook, hooks.PostLLMCallHook, hooks.OnSessionEndHook} {
		if len(byName[n]) == 0 {
			t.Errorf("%s not delivered", n)
		}
	}
	if len(byName[hooks.PreToolCallHook]) != 1 {
		t.Errorf("pre_tool_call fired %d times", len(byName[hooks.PreToolCallHook]))
	}
	golden(t, "turn_hooks", byName)
}

func TestSecondTurnHooks(t *testing.T) {
	reg := hooks.NewRegistry(nil)
	rec := observe(reg)
	a := newAgent(&funcModel{fn: func(int, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return textResp("again"), nil
	}}, reg)
	hist := []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}
	if _, err := a.Run(context.Background(), "more", Options{Turn: Turn{SessionID: "s"}, History: hist}); err != nil {
		t.Fatal(err)
	}
	drain(t, reg)
	if len(rec.of(hooks.OnSessionStartHook)) != 0 {
		t.Error("on_session_start fired on a later turn")
	}
	if len(rec.of(hooks.PostLLMCallHook)) != 1 || len(rec.of(hooks.OnSessionEndHook)) != 1 {
		t.Errorf("events %v", rec.names())
	}
}

func TestNoFinalResponseHooks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model func(cancel func()) Model
		want  map[string]any
	}{
		{"empty answer", func(func()) Model {
			return &funcModel{fn: func(int, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
				return textResp("  "), nil
			}}
		}, map[string]any{"completed": false, "interrupted": false}},
		{"interrupted", func(cancel func()) Model {
			return &funcModel{fn: func(int, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
				cancel()
				return textResp("too late"), nil
			}}
		}, map[string]any{"completed": false, "interrupted": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := hooks.NewRegistry(nil)
			rec := observe(reg)
			transformed := 0
			reg.Subscribe(hooks.Subscription{Name: "tx", Events: []string{hooks.TransformLLMOutputHook}, Handler: func(context.Context, hooks.Event) (any, error) {
				transformed++
				return "x", nil
			}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			a := newAgent(tc.model(cancel), reg)
			res, _ := a.Run(ctx, "hi", Options{Turn: Turn{SessionID: "s"}})
			drain(t, reg)
			if len(rec.of(hooks.PostLLMCallHook)) != 0 || transformed != 0 || res.FinalResponse != "" {
				t.Errorf("post_llm_call/transform fired without a final response: %v", rec.names())
			}
			ends := rec.of(hooks.OnSessionEndHook)
			if len(ends) != 1 {
				t.Fatalf("on_session_end %d", len(ends))
			}
			var got map[string]any
			json.Unmarshal(ends[0].Payload, &got)
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

func TestPreToolCallBlocksRmRf(t *testing.T) {
	reg := hooks.NewRegistry(nil)
	rec := observe(reg)
	reg.Subscribe(hooks.Subscription{Name: "guard", Attach: hooks.AttachGo, Events: []string{hooks.PreToolCallHook},
		Handler: hooks.Func(func(ctx context.Context, p *hooks.PreToolCall) *hooks.ToolDecision {
			if c, _ := p.Args["command"].(string); strings.Contains(c, "rm -rf /") {
				return hooks.Block("refusing to delete the filesystem")
			}
			return nil
		})})
	dir := t.TempDir()
	m := toolThenText("terminal", map[string]any{"command": "rm -rf /"})
	a := newAgent(m, reg, &Terminal{Paths: &Paths{Workdir: dir}})
	a.ApprovalMode = ModeYolo // the hook alone must stop it
	a.Tools.Add(&stubTool{name: "unused"})
	res, err := a.Run(context.Background(), "clean up", Options{Turn: Turn{SessionID: "s"}})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, reg)
	reqs := m.requests()
	seen := reqs[1].Messages[len(reqs[1].Messages)-1]
	if seen.Role != "tool" || seen.Content != `{"error":"refusing to delete the filesystem"}` {
		t.Errorf("model saw %+v", seen)
	}
	if len(rec.of(hooks.PostToolCallHook)) != 0 {
		t.Error("post_tool_call fired for a blocked call")
	}
	if !res.Completed {
		t.Errorf("res %+v", res)
	}
}

// TestAgentEmitsEveryAgentLevelName extends "every catalogue name is
// emitted" to the points this package owns.
func TestAgentEmitsEveryAgentLevelName(t *testing.T) {
	reg := hooks.NewRegistry(nil)
	dir := t.TempDir()
	reg.Subscribe(hooks.Subscription{Name: "tx", Events: []string{hooks.PreLLMCallHook, hooks.TransformTerminalOutputHook, hooks.TransformToolResultHook, hooks.TransformLLMOutputHook},
		Handler: func(context.Context, hooks.Event) (any, error) { return nil, nil }})
	step := 0
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		last := req.Messages[len(req.Messages)-1]
		if strings.HasPrefix(last.Content, "sub:") {
			return textResp("child done"), nil
		}
		step++
		switch step {
		case 1:
			return callResp("c1", "terminal", map[string]any{"command": "echo hi"}), nil
		case 2:
			return callResp("c2", "terminal", map[string]any{"command": "sudo true"}), nil
		case 3:
			return callResp("c3", "delegate_task", map[string]any{"goal": "sub: x"}), nil
		}
		return textResp("done"), nil
	}}
	a := newAgent(m, reg, &Terminal{Paths: &Paths{Workdir: dir}})
	a.Tools.Add(&Delegate{Agent: a})
	if _, err := a.Run(context.Background(), "go", Options{Approver: fixedApprover(ChoiceDeny)}); err != nil {
		t.Fatal(err)
	}
	for _, n := range agentLevel {
		if !reg.Emitted(n) {
			t.Errorf("%s never emitted", n)
		}
	}
	drain(t, reg)
}
