package agent

// judge.go: the model behind `prompt` and `agent` hooks (hooks.Judge).
// A prompt hook is one chat completion without tools; an agent hook is a
// one-shot sub-agent with read-only tools. Neither fires a hook point of
// its own: a hook's model call that went through pre_llm_call,
// pre_api_request, pre_tool_call and the rest would run the hooks of
// those points, and a prompt hook on pre_llm_call would call itself
// without end.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/hooks"
)

// DefaultJudgeIterations bounds an agent hook's model calls when the hook
// sets no max_iterations.
const DefaultJudgeIterations = 5

// Judge answers prompt and agent hooks with the agent's model client and
// endpoint. It is safe for concurrent use.
type Judge struct {
	// Agent is the gateway's agent: its model client, model name,
	// endpoint, retries, redactor and log are the judge's; its read_file
	// and terminal tools (with their confinement) are an agent hook's
	// only tools. Its hooks never are.
	Agent *Agent

	// noJSONMode is set once the endpoint refused response_format
	// json_object; the instruction in the prompt then asks on its own.
	noJSONMode atomic.Bool
}

var _ hooks.Judge = (*Judge)(nil)

// NewJudge returns the judge of prompt and agent hooks for a.
func NewJudge(a *Agent) *Judge { return &Judge{Agent: a} }

// Judge runs one prompt or agent hook and returns the model's final
// answer. A model error, ctx's end, or an agent hook's budget spent
// without a final answer is an error.
func (j *Judge) Judge(ctx context.Context, req hooks.JudgeRequest) (string, error) {
	switch req.Kind {
	case hooks.TypePrompt:
		return j.prompt(ctx, req)
	case hooks.TypeAgent:
		return j.agentHook(ctx, req)
	}
	return "", fmt.Errorf("judge: hook type %q has no model behind it (prompt or agent)", req.Kind)
}

// subAgent is an agent with the gateway's model and endpoint, no hooks
// (so its calls fire no hook point), no transcript, and approvals off:
// nothing it does can ask a person.
func (j *Judge) subAgent(req hooks.JudgeRequest, tools *Tools) *Agent {
	a := j.Agent
	name := a.ModelName
	if req.Model != "" {
		name = req.Model
	}
	return &Agent{
		Model: a.Model, Tools: tools, Redactor: a.Redactor, Log: a.Log,
		ModelName: name, Provider: a.Provider, BaseURL: a.BaseURL, ContextWindow: a.ContextWindow, MaxTokens: a.MaxTokens,
		SystemPrompt: req.System, ApprovalMode: ModeOff, Retries: a.Retries, Backoff: a.Backoff, Workdir: a.Workdir,
	}
}

// prompt is one completion: the hook's instruction as the system prompt,
// its rendered prompt as the user's message, no tools. JSON output is
// asked for (response_format json_object) when the instruction speaks of
// JSON, as OpenAI requires, and the endpoint has not refused it before.
func (j *Judge) prompt(ctx context.Context, req hooks.JudgeRequest) (string, error) {
	sub := j.subAgent(req, nil)
	var msgs []openai.ChatCompletionMessage
	if req.System != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: req.System})
	}
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: req.Prompt})
	creq := openai.ChatCompletionRequest{Model: sub.ModelName, Messages: msgs}
	if sub.MaxTokens > 0 {
		creq.MaxCompletionTokens = sub.MaxTokens
	}
	if wantsJSON(req) && !j.noJSONMode.Load() {
		creq.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	o := &Options{Turn: Turn{SessionID: req.SessionID}}
	calls := 0
	resp, err := sub.complete(ctx, creq, o, &calls)
	if err != nil && creq.ResponseFormat != nil && ctx.Err() == nil && badRequest(err) {
		// not every OpenAI-compatible endpoint takes response_format:
		// ask again without it, and stop asking once that works
		creq.ResponseFormat = nil
		if resp, err = sub.complete(ctx, creq, o, &calls); err == nil {
			j.noJSONMode.Store(true)
			sub.logger().Info("the model endpoint refused response_format json_object; prompt hooks ask for JSON in words only", "model", sub.ModelName)
		}
	}
	if err != nil {
		return "", fmt.Errorf("judge: %s hook on %s: model call: %w", req.Kind, req.Event, err)
	}
	if len(resp.Choices) == 0 {
		return "", fmt.Errorf("judge: %s hook on %s: the model answered no choices", req.Kind, req.Event)
	}
	text := resp.Choices[0].Message.Content
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("judge: %s hook on %s: %w", req.Kind, req.Event, ErrNoResponse)
	}
	return text, nil
}

// wantsJSON reports whether a prompt hook's answer is JSON: not on
// post_compact (its answer is the notes' text), and only when the
// messages say "JSON" (OpenAI refuses json_object otherwise).
func wantsJSON(req hooks.JudgeRequest) bool {
	return req.Event != hooks.PostCompactHook && strings.Contains(strings.ToLower(req.System+req.Prompt), "json")
}

// badRequest reports whether the endpoint refused the request as such
// (400 or 422), as one that does not know response_format does.
func badRequest(err error) bool {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.HTTPStatusCode == http.StatusBadRequest || apiErr.HTTPStatusCode == http.StatusUnprocessableEntity
	case errors.As(err, &reqErr):
		return reqErr.HTTPStatusCode == http.StatusBadRequest || reqErr.HTTPStatusCode == http.StatusUnprocessableEntity
	}
	return false
}

// agentHook runs a one-shot sub-agent: the hook's instruction as its
// system prompt, the rendered prompt as the task, read_file and a
// terminal that runs only commands needing no approval, at most
// MaxIterations model calls.
func (j *Judge) agentHook(ctx context.Context, req hooks.JudgeRequest) (string, error) {
	budget := req.MaxIterations
	if budget <= 0 {
		budget = DefaultJudgeIterations
	}
	sub := j.subAgent(req, j.readOnlyTools())
	// no Approver: were a command to ask, nobody could answer, a deny
	res, err := sub.Run(ctx, req.Prompt, Options{Turn: Turn{SessionID: req.SessionID, Surface: "hook"}, MaxIterations: budget})
	if err != nil {
		return "", fmt.Errorf("judge: agent hook on %s: %w", req.Event, err)
	}
	if !res.Completed || strings.TrimSpace(res.FinalResponse) == "" {
		return "", fmt.Errorf("judge: agent hook on %s: %w", req.Event, ErrNoResponse)
	}
	return res.FinalResponse, nil
}

// readOnlyTools are an agent hook's tools: the agent's read_file, and its
// terminal restricted to commands that need no approval. A tool the agent
// lacks, the hook lacks too.
func (j *Judge) readOnlyTools() *Tools {
	out := NewTools()
	if t, ok := j.Agent.Tools.Get("read_file"); ok {
		out.Add(t)
	}
	if t, ok := j.Agent.Tools.Get("terminal"); ok {
		if term, ok := t.(*Terminal); ok {
			out.Add(judgeTerminal{term})
		}
	}
	return out
}

// judgeTerminal is an agent hook's terminal: a command that would need a
// person's approval is refused with a tool error, without asking anyone
// (a hook's judgement has nobody to ask and must not wait for one).
type judgeTerminal struct{ *Terminal }

var _ Tool = judgeTerminal{}

func (judgeTerminal) Description() string {
	return "Run a shell command that only reads (listing, searching, printing files) in the working directory and return its output and exit code. " +
		"Commands that would need a person's approval (deletes, sudo, writes to system files, …) are refused."
}

func (t judgeTerminal) Run(ctx context.Context, c *Call) (string, error) {
	if ds := DetectDangerous(c.String("command")); len(ds) > 0 {
		_, desc := dangerKeys(ds)
		return "", fmt.Errorf("terminal: refused: %s needs a person's approval, and a hook's sub-agent runs only commands that need none", desc)
	}
	return t.Terminal.Run(ctx, c)
}
