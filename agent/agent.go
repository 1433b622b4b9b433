package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/hooks"
)

// Agent runs turns. Its fields are set once by the composition root and
// not changed afterwards.
type Agent struct {
	Model    Model
	Tools    *Tools
	Hooks    *hooks.Registry
	Redactor *herald.Redactor
	Log      *slog.Logger

	// ModelName, Provider and BaseURL describe the endpoint (for the
	// request and for hook payloads).
	ModelName     string
	Provider      string
	BaseURL       string
	ContextWindow int
	MaxTokens     int
	MaxIterations int
	SystemPrompt  string
}

// Turn is the context of one Run, visible to tools.
type Turn struct {
	SessionID  string
	SessionKey string
	Platform   string
	UserID     string
	ChatID     string
	ChatType   string
	ThreadID   string
	// Surface is "gateway" for chats, "cli" for herald chat; approvals use
	// it.
	Surface string
}

// Options configure one Run.
type Options struct {
	Turn
	// History is the session's earlier messages, oldest first.
	History []openai.ChatCompletionMessage
	// MaxIterations overrides the agent's budget (BOOT.md uses 20).
	MaxIterations int
	// DisabledTools are left out of this run.
	DisabledTools []string
	// NoTools runs without any tool.
	NoTools bool
	// Approver answers approval prompts for dangerous commands; nil means
	// nobody can answer, which is a deny.
	Approver Approver
}

// Result is what a Run produced.
type Result struct {
	FinalResponse string
	// Messages are this turn's new messages: the user's, then the
	// assistant's and tools' in order.
	Messages    []openai.ChatCompletionMessage
	APICalls    int
	Completed   bool
	Interrupted bool
}

// ErrNoResponse is returned when the model ends a turn with no text.
var ErrNoResponse = errors.New("agent: the model returned an empty response")

// Run runs one turn: prompt is the user's message. It returns when the
// model has answered, the budget is spent, or ctx ends (Interrupted).
func (a *Agent) Run(ctx context.Context, prompt string, o Options) (res *Result, err error) {
	res = &Result{}
	log := a.logger()
	model := a.ModelName
	platform := o.Platform
	defer func() {
		a.Hooks.Emit(hooks.OnSessionEndHook, &hooks.SessionEnded{
			SessionID: o.SessionID, Completed: res.Completed, Interrupted: res.Interrupted, Model: model, Platform: platform,
		})
	}()

	msgs := make([]openai.ChatCompletionMessage, 0, len(o.History)+4)
	if a.SystemPrompt != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: a.SystemPrompt})
	}
	msgs = append(msgs, o.History...)
	isFirst := len(o.History) == 0
	if isFirst {
		a.Hooks.Emit(hooks.OnSessionStartHook, &hooks.SessionStarted{SessionID: o.SessionID, Model: model, Platform: platform})
	}

	extra := ""
	if a.Hooks.Has(hooks.PreLLMCallHook) {
		extra = a.Hooks.PreLLMCall(ctx, &hooks.PreLLMCall{
			SessionID: o.SessionID, UserMessage: prompt, ConversationHistory: historyOf(o.History),
			IsFirstTurn: isFirst, Model: model, Platform: platform, SenderID: o.UserID,
		})
	}
	user := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: prompt}
	res.Messages = append(res.Messages, user)
	userIdx := len(msgs)
	msgs = append(msgs, user)

	var tools []openai.Tool
	if !o.NoTools {
		for _, t := range a.Tools.List(o.DisabledTools...) {
			tools = append(tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: t.Name(), Description: t.Description(), Parameters: t.Schema(),
			}})
		}
	}

	budget := a.MaxIterations
	if o.MaxIterations > 0 {
		budget = o.MaxIterations
	}
	if budget <= 0 {
		budget = 90
	}
	turn := o.Turn
	for iter := 1; iter <= budget; iter++ {
		if err := ctx.Err(); err != nil {
			res.Interrupted = true
			return res, err
		}
		req := openai.ChatCompletionRequest{Model: model, Messages: msgs, Tools: tools}
		if a.MaxTokens > 0 {
			req.MaxCompletionTokens = a.MaxTokens
		}
		if extra != "" {
			// pre_llm_call context goes into this request's copy of the
			// user message only: never stored, never the system prompt
			req.Messages = append([]openai.ChatCompletionMessage(nil), msgs...)
			req.Messages[userIdx].Content = prompt + "\n\n" + extra
		}
		resp, err := a.complete(ctx, req, &o, res.APICalls+1)
		res.APICalls++
		if err != nil {
			if ctx.Err() != nil {
				res.Interrupted = true
				return res, ctx.Err()
			}
			return res, err
		}
		if len(resp.Choices) == 0 {
			log.Error("model response has no choices", "model", model)
			return res, fmt.Errorf("agent: malformed model response: no choices")
		}
		msg := resp.Choices[0].Message
		if msg.Role == "" {
			msg.Role = openai.ChatMessageRoleAssistant
		}
		msgs = append(msgs, msg)
		res.Messages = append(res.Messages, msg)
		if len(msg.ToolCalls) == 0 {
			final := msg.Content
			if strings.TrimSpace(final) == "" {
				return res, ErrNoResponse
			}
			if out, ok := a.Hooks.TransformLLMOutput(ctx, &hooks.LLMOutput{ResponseText: final, SessionID: o.SessionID, Model: model, Platform: platform}); ok {
				final = out
				res.Messages[len(res.Messages)-1].Content = final
			}
			res.FinalResponse = final
			res.Completed = true
			a.Hooks.Emit(hooks.PostLLMCallHook, &hooks.PostLLMCall{
				SessionID: o.SessionID, UserMessage: prompt, AssistantResponse: final,
				ConversationHistory: historyOf(msgs), Model: model, Platform: platform,
			})
			return res, nil
		}
		names := make([]string, 0, len(msg.ToolCalls))
		raw := make([]any, 0, len(msg.ToolCalls))
		for _, tc := range msg.ToolCalls {
			names = append(names, tc.Function.Name)
			raw = append(raw, map[string]any{"name": tc.Function.Name, "id": tc.ID})
			out := a.runTool(ctx, &turn, tc)
			tm := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Name: tc.Function.Name, Content: out}
			msgs = append(msgs, tm)
			res.Messages = append(res.Messages, tm)
		}
		a.Hooks.Emit(hooks.AgentStepEv, &hooks.AgentStep{
			Platform: platform, UserID: o.UserID, SessionID: o.SessionID, Iteration: iter, ToolNames: names, Tools: raw,
		})
	}
	return res, fmt.Errorf("agent: stopped after %d iterations without a final answer", budget)
}

func (a *Agent) complete(ctx context.Context, req openai.ChatCompletionRequest, o *Options, call int) (openai.ChatCompletionResponse, error) {
	chars := 0
	for _, m := range req.Messages {
		chars += len(m.Content)
	}
	a.Hooks.Emit(hooks.PreAPIRequestHook, &hooks.APIRequest{
		SessionID: o.SessionID, TaskID: o.SessionID, Platform: o.Platform, Model: a.ModelName, Provider: a.Provider, BaseURL: a.BaseURL,
		APIMode: "chat_completions", APICallCount: call, MessageCount: len(req.Messages), ToolCount: len(req.Tools),
		ApproxInputTokens: chars / 4, RequestCharCount: chars, MaxTokens: a.MaxTokens,
	})
	start := time.Now()
	resp, err := a.Model.Complete(ctx, req)
	post := &hooks.APIResponse{
		SessionID: o.SessionID, TaskID: o.SessionID, Platform: o.Platform, Model: a.ModelName, Provider: a.Provider, BaseURL: a.BaseURL,
		APIMode: "chat_completions", APICallCount: call, APIDuration: time.Since(start).Seconds(), MessageCount: len(req.Messages),
		ResponseModel: resp.Model, Usage: map[string]int{"prompt_tokens": resp.Usage.PromptTokens, "completion_tokens": resp.Usage.CompletionTokens, "total_tokens": resp.Usage.TotalTokens},
	}
	if err != nil {
		post.Error = a.Redactor.Redact(err.Error())
	} else if len(resp.Choices) > 0 {
		post.FinishReason = string(resp.Choices[0].FinishReason)
		post.AssistantContentChars = len(resp.Choices[0].Message.Content)
		post.AssistantToolCallCount = len(resp.Choices[0].Message.ToolCalls)
	}
	a.Hooks.Emit(hooks.PostAPIRequestHook, post)
	return resp, err
}

// runTool runs one tool call through pre_tool_call, the tool,
// post_tool_call and transform_tool_result, and returns what the model
// sees.
func (a *Agent) runTool(ctx context.Context, turn *Turn, tc openai.ToolCall) string {
	name := tc.Function.Name
	args := map[string]any{}
	if s := strings.TrimSpace(tc.Function.Arguments); s != "" {
		if err := json.Unmarshal([]byte(s), &args); err != nil {
			return toolError(fmt.Sprintf("arguments for %s are not a JSON object: %v", name, err))
		}
	}
	d := a.Hooks.PreToolCall(ctx, &hooks.PreToolCall{ToolName: name, Args: args, TaskID: turn.SessionID, SessionID: turn.SessionID, ToolCallID: tc.ID})
	if d.Action == "block" {
		return toolError(d.Message)
	}
	for k, v := range d.Args {
		args[k] = v
	}
	tool, ok := a.Tools.Get(name)
	start := time.Now()
	var result string
	if !ok {
		result = toolError("unknown tool: " + name)
	} else {
		result = a.safeRun(ctx, tool, &Call{ID: tc.ID, Args: args, SessionID: turn.SessionID, Turn: turn})
	}
	p := &hooks.ToolResult{ToolName: name, Args: args, Result: result, TaskID: turn.SessionID, SessionID: turn.SessionID, ToolCallID: tc.ID, DurationMS: time.Since(start).Milliseconds()}
	a.Hooks.Emit(hooks.PostToolCallHook, p)
	if out, ok := a.Hooks.TransformToolResult(ctx, &hooks.ToolResult{ToolName: name, Args: args, Result: result, TaskID: p.TaskID, SessionID: p.SessionID, ToolCallID: p.ToolCallID, DurationMS: p.DurationMS}); ok {
		result = out
	}
	return result
}

func (a *Agent) safeRun(ctx context.Context, t Tool, c *Call) (out string) {
	defer func() {
		if p := recover(); p != nil {
			a.logger().Error("tool panicked", "tool", t.Name(), "panic", fmt.Sprint(p))
			out = toolError(fmt.Sprintf("tool %s crashed: %v", t.Name(), p))
		}
	}()
	res, err := t.Run(ctx, c)
	if err != nil {
		return toolError(a.Redactor.Redact(err.Error()))
	}
	return a.Redactor.Redact(res)
}

func toolError(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}

func (a *Agent) logger() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}

func historyOf(msgs []openai.ChatCompletionMessage) []hooks.HistoryMessage {
	out := make([]hooks.HistoryMessage, 0, len(msgs))
	for _, m := range msgs {
		h := hooks.HistoryMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
		if len(m.ToolCalls) > 0 {
			h.ToolCalls = m.ToolCalls
		}
		out = append(out, h)
	}
	return out
}
