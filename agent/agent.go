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

// Agent runs turns. Its exported fields are set once by the composition
// root and not changed afterwards.
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
	// Vision sends the images of a user's message to the model as image
	// parts (model.vision).
	Vision bool

	// ApprovalMode is approvals.mode: ask (default), off (dangerous
	// commands are denied) or yolo (they run).
	ApprovalMode string
	// ApprovalTimeout bounds a person's answer (default 5 minutes).
	ApprovalTimeout time.Duration
	// ApprovalMemory keeps "always" answers; nil keeps them for the
	// process's life only (as "session").
	ApprovalMemory ApprovalMemory

	// Retries is how often a 429 or 5xx answer is retried (0: the default
	// 3; negative: never). Backoff is the wait before retry n (default
	// DefaultBackoff).
	Retries int
	Backoff func(attempt int) time.Duration

	// TranscriptDir, if set, receives each session's transcript in Claude
	// Code's format (<session id>.jsonl), whose path Claude-dialect hooks
	// get as transcript_path. Workdir is the tools' working directory
	// (Claude's cwd; "" is the process's).
	TranscriptDir string
	Workdir       string

	sessionOK   sessionApprovals
	transcripts transcripts
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
	// ParentSessionID and AgentType are set for a delegate_task child:
	// the session that delegated, and the child's role.
	ParentSessionID string
	AgentType       string
	// MediaDir is the media cache of this turn's session: the one part of
	// $HERALD_HOME/media the file tools may read in this turn ("" for
	// none), so a chat never reads another's attachments.
	MediaDir string
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
	// SessionSource is why the session's turn starts, as Claude Code's
	// SessionStart says it: startup (a new session; ""), clear (after /new),
	// resume (a stored session's first turn in this process: Hermes has no
	// event for it, Claude-dialect hooks get SessionStart).
	SessionSource string
	// Stream, when set, asks the model to stream (SSE) and is called with
	// the text of the current model answer so far, each time it grows.
	// It is called on Run's goroutine and must not block for long; each
	// model call (one per iteration) starts again from "". Text that
	// turns out to come with tool calls is still passed: the final answer
	// is Result.FinalResponse (after transform_llm_output).
	Stream func(partial string)
	// Notice, when set, shows a hook's message to the person in the chat
	// (Claude Code's systemMessage) while the turn runs; without it the
	// message is logged.
	Notice func(text string)
	// Media are the attachments of the user's message, downloaded (Path
	// set) where they could be; the prompt already announces them.
	Media []herald.Media
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
	// Refused is set when a pre_llm_call hook refused the prompt: it never
	// reached the model, Messages are empty and FinalResponse is the
	// hook's reason for the person.
	Refused bool
	// Halted is set when a hook ended the turn (Claude Code's continue:
	// false): FinalResponse is its stop reason.
	Halted bool
	// Files are what send_file asked to send with the answer, in order.
	Files []OutFile
}

// OutFile is a file the agent asked to send to the chat with its answer.
type OutFile struct {
	// Path is the file as resolved when send_file checked it; the
	// gateway checks it again when it sends.
	Path    string
	Caption string
}

// HaltedText is the answer of a turn a hook ended without a reason.
const HaltedText = "A hook stopped this turn."

// StopFeedback introduces a Stop or SubagentStop hook's reason when the
// agent is sent back to work with it.
const StopFeedback = "Stop hook feedback:\n"

// ErrNoResponse is returned when the model ends a turn with no text.
var ErrNoResponse = errors.New("agent: the model returned an empty response")

// ErrBudget is returned when the iteration budget runs out.
var ErrBudget = errors.New("agent: iteration budget exhausted without a final answer")

// DefaultMaxIterations is the budget when none is configured.
const DefaultMaxIterations = 90

var noHooks = hooks.NewRegistry(nil)

// runState is one Run in progress, shared with its tool calls.
type runState struct {
	agent *Agent
	opts  *Options
	turn  Turn
	// toolArgs are the arguments of this turn's tool calls, by call id
	// (for their transcript lines).
	toolArgs map[string]map[string]any
	// compacted is set once this run's requests dropped old turns.
	compacted bool
	// window cuts each request to the context window and keeps the
	// compaction notes.
	window window

	// halt is set by a hook that ended the turn (continue: false), with
	// its stop reason; checked after every tool call.
	halted   bool
	stopText string
	// files are what send_file queued for the answer.
	files []OutFile
}

// feedback acts on what hooks said besides their decisions: a notice is
// shown to the person, a halt ends the turn after the current step. It
// returns the context meant for the model.
func (r *runState) feedback(fb *hooks.Feedback) string {
	if fb == nil {
		return ""
	}
	if fb.Notice != "" {
		if r.opts.Notice != nil {
			r.opts.Notice(fb.Notice)
		} else {
			r.agent.logger().Info("hook message", "session_id", r.turn.SessionID, "message", r.agent.redact(fb.Notice))
		}
	}
	if fb.Halt && !r.halted {
		r.halted, r.stopText = true, fb.StopReason
	}
	return fb.Context
}

// halt ends the turn a hook stopped: its stop reason is the answer, shown
// to the person and never sent to the model.
func (r *runState) halt(res *Result) (*Result, error) {
	res.Halted, res.Completed = true, true
	res.FinalResponse = r.stopText
	if strings.TrimSpace(res.FinalResponse) == "" {
		res.FinalResponse = HaltedText
	}
	return res, nil
}

// Run runs one turn: prompt is the user's message. It returns when the
// model has answered, the budget is spent, or ctx ends (then Interrupted
// is set, the error is ctx's, and Messages hold what happened so far, with
// a result for every tool call the model made).
func (a *Agent) Run(ctx context.Context, prompt string, o Options) (res *Result, err error) {
	res = &Result{}
	log := a.logger()
	reg := a.hooks()
	model := a.ModelName
	platform := o.Platform
	defer func() {
		reg.Emit(hooks.OnSessionEndHook, &hooks.SessionEnded{
			SessionID: o.SessionID, Completed: res.Completed, Interrupted: res.Interrupted, Model: model, Platform: platform,
		})
	}()
	run := &runState{agent: a, opts: &o, turn: o.Turn}
	defer func() { res.Files = run.files }()
	interrupted := func() (*Result, error) {
		res.Interrupted, res.Completed = true, false
		return res, ctx.Err()
	}

	history := cleanHistory(o.History)
	msgs := make([]openai.ChatCompletionMessage, 0, len(history)+8)
	hasSystem := a.SystemPrompt != ""
	if hasSystem {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: a.SystemPrompt})
	}
	msgs = append(msgs, history...)
	isFirst := len(o.History) == 0
	var extras []string
	if isFirst || o.SessionSource == "resume" {
		fb := reg.Feedback(ctx, hooks.OnSessionStartHook, &hooks.SessionStarted{SessionID: o.SessionID, Model: model, Platform: platform,
			Source: o.SessionSource, ClaudeOnly: !isFirst, Claude: run.claude()})
		extras = append(extras, run.feedback(&fb))
	}
	if run.halted {
		return run.halt(res)
	}
	if reg.Has(hooks.PreLLMCallHook) {
		c, fb := reg.UserPrompt(ctx, &hooks.PreLLMCall{
			SessionID: o.SessionID, UserMessage: prompt, ConversationHistory: historyOf(o.History),
			IsFirstTurn: isFirst, Model: model, Platform: platform, SenderID: o.UserID, Claude: run.claude(), Media: hooks.MediaOf(o.Media),
		})
		extras = append(extras, c)
		run.feedback(&fb)
		if fb.Block && !run.halted {
			// Claude Code's UserPromptSubmit block: the prompt never
			// reaches the model nor the history; the person sees why
			res.Refused, res.Completed, res.FinalResponse = true, true, fb.Reason
			return res, nil
		}
	}
	if run.halted {
		return run.halt(res)
	}
	extra := joinNonEmpty(extras, "\n\n")
	user := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: prompt}
	// the stored message is text; requests carry the hooks' context and
	// the images
	userReq := a.userRequest(prompt, extra, &o)
	res.Messages = append(res.Messages, user)
	run.transcribe(user)
	userIdx := len(msgs)
	msgs = append(msgs, user)

	var tools []openai.Tool
	toolChars := 0
	if !o.NoTools {
		for _, t := range a.Tools.List(o.DisabledTools...) {
			schema := t.Schema()
			toolChars += len(t.Name()) + len(t.Description()) + len(schema)
			tools = append(tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: t.Name(), Description: t.Description(), Parameters: schema,
			}})
		}
	}
	enabled := func(name string) bool {
		if o.NoTools {
			return false
		}
		for _, d := range o.DisabledTools {
			if d == name {
				return false
			}
		}
		return true
	}

	budget := a.MaxIterations
	if o.MaxIterations > 0 {
		budget = o.MaxIterations
	}
	if budget <= 0 {
		budget = DefaultMaxIterations
	}
	run.window = window{budget: a.ContextWindow, hasSystem: hasSystem, toolChars: toolChars}
	if a.ContextWindow > 0 && a.MaxTokens > 0 && a.MaxTokens < a.ContextWindow {
		run.window.budget -= a.MaxTokens
	}
	stopActive := false
	for iter := 1; iter <= budget; iter++ {
		if ctx.Err() != nil {
			return interrupted()
		}
		reqMsgs := msgs
		if extra != "" || userReq.MultiContent != nil {
			// pre_llm_call context and images go into this request's copy
			// of the user message only: never stored, never the system
			// prompt
			reqMsgs = append([]openai.ChatCompletionMessage(nil), msgs...)
			reqMsgs[userIdx] = userReq
		}
		if run.window.budget > 0 {
			var rep trimReport
			reqMsgs, rep = run.fitRequest(ctx, reqMsgs, userIdx)
			if rep.Turns > 0 && !run.compacted {
				// Claude Code's SessionStart "compact": the model no longer
				// sees the whole conversation (Hermes has no such event)
				run.compacted = true
				fb := reg.Feedback(ctx, hooks.OnSessionStartHook, &hooks.SessionStarted{SessionID: o.SessionID, Model: model, Platform: platform,
					Source: "compact", ClaudeOnly: true, Claude: run.claude()})
				if c := run.feedback(&fb); c != "" {
					// from this request on, beside any pre_llm_call context
					extra = joinNonEmpty([]string{extra, c}, "\n\n")
					userReq = a.userRequest(prompt, extra, &o)
					reqMsgs = append([]openai.ChatCompletionMessage(nil), reqMsgs...)
					for i := len(reqMsgs) - 1; i >= 0; i-- {
						if m := &reqMsgs[i]; m.Role == openai.ChatMessageRoleUser {
							if m.MultiContent != nil {
								m.MultiContent = append(append([]openai.ChatMessagePart(nil), m.MultiContent...),
									openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: c})
							} else {
								m.Content += "\n\n" + c
							}
							break
						}
					}
				}
				if run.halted {
					return run.halt(res)
				}
			}
		}
		req := openai.ChatCompletionRequest{Model: model, Messages: reqMsgs, Tools: tools}
		if a.MaxTokens > 0 {
			req.MaxCompletionTokens = a.MaxTokens
		}
		resp, err := a.complete(ctx, req, &o, &res.APICalls)
		if err != nil {
			if ctx.Err() != nil {
				return interrupted()
			}
			var bad *MalformedError
			if errors.As(err, &bad) {
				log.Error("malformed model response", "session_id", o.SessionID, "err", a.redact(bad.Err.Error()), "raw", a.redact(bad.Snippet))
			}
			return res, fmt.Errorf("agent: model call: %w", err)
		}
		if len(resp.Choices) == 0 {
			b, _ := json.Marshal(resp)
			log.Error("malformed model response: no choices", "session_id", o.SessionID, "raw", a.redact(snip(string(b))))
			return res, fmt.Errorf("agent: model call: %w", &MalformedError{Err: errors.New("no choices"), Snippet: snip(string(b))})
		}
		msg := resp.Choices[0].Message
		msg.Role = openai.ChatMessageRoleAssistant
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", iter, i)
			}
			if msg.ToolCalls[i].Type == "" {
				msg.ToolCalls[i].Type = openai.ToolTypeFunction
			}
			msg.ToolCalls[i].Index = nil
		}
		msgs = append(msgs, msg)
		res.Messages = append(res.Messages, msg)
		if len(msg.ToolCalls) > 0 {
			run.transcribe(msg)
		}
		if len(msg.ToolCalls) == 0 {
			final := msg.Content
			if strings.TrimSpace(final) == "" {
				return res, ErrNoResponse
			}
			if ctx.Err() != nil {
				return interrupted()
			}
			if out, ok := reg.TransformLLMOutput(ctx, &hooks.LLMOutput{ResponseText: final, SessionID: o.SessionID, Model: model, Platform: platform}); ok {
				final = out
				res.Messages[len(res.Messages)-1].Content = final
				msgs[len(msgs)-1].Content = final
			}
			res.FinalResponse = final
			res.Completed = true
			run.transcribe(res.Messages[len(res.Messages)-1]) // before Stop hooks read it
			fb := reg.Feedback(ctx, hooks.PostLLMCallHook, &hooks.PostLLMCall{
				SessionID: o.SessionID, UserMessage: prompt, AssistantResponse: final,
				ConversationHistory: historyOf(msgs[boolIndex(hasSystem):]), Model: model, Platform: platform,
				StopHookActive: stopActive, Claude: run.claude(),
			})
			run.feedback(&fb)
			if run.halted {
				// the answer stands (the person sees it, as in Claude
				// Code); the stop reason follows it as a notice
				res.Halted = true
				run.feedback(&hooks.Feedback{Notice: run.stopText})
				return res, nil
			}
			if !fb.Block || ctx.Err() != nil {
				return res, nil
			}
			if iter == budget {
				log.Warn("a Stop hook asked the agent to go on, but the iteration budget is spent; the turn ends here", "session_id", o.SessionID, "budget", budget)
				return res, nil
			}
			// Claude Code's Stop block: the reason is the agent's next
			// instruction, and the next Stop says a hook is active
			stopActive = true
			res.Completed, res.FinalResponse = false, ""
			next := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: StopFeedback + fb.Reason}
			msgs = append(msgs, next)
			res.Messages = append(res.Messages, next)
			continue
		}
		names := make([]string, 0, len(msg.ToolCalls))
		raw := make([]any, 0, len(msg.ToolCalls))
		for _, tc := range msg.ToolCalls {
			names = append(names, tc.Function.Name)
			raw = append(raw, map[string]any{"name": tc.Function.Name, "id": tc.ID})
			var out string
			switch {
			case ctx.Err() != nil:
				// every tool call needs an answer in the history
				out = toolError("interrupted before this tool ran")
			case !enabled(tc.Function.Name):
				out = toolError("tool " + tc.Function.Name + " is not available here")
			case run.halted:
				out = toolError("not run: a hook ended the turn")
			default:
				out = a.runTool(ctx, run, tc)
			}
			tm := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Name: tc.Function.Name, Content: out}
			msgs = append(msgs, tm)
			res.Messages = append(res.Messages, tm)
			run.transcribe(tm)
		}
		if run.halted {
			reg.Emit(hooks.AgentStepEv, &hooks.AgentStep{
				Platform: platform, UserID: o.UserID, SessionID: o.SessionID, Iteration: iter, ToolNames: names, Tools: raw,
			})
			return run.halt(res)
		}
		reg.Emit(hooks.AgentStepEv, &hooks.AgentStep{
			Platform: platform, UserID: o.UserID, SessionID: o.SessionID, Iteration: iter, ToolNames: names, Tools: raw,
		})
	}
	if ctx.Err() != nil {
		return interrupted()
	}
	return res, fmt.Errorf("%w (%d iterations)", ErrBudget, budget)
}

// complete makes one model call with retries; every attempt counts as an
// API call and fires pre/post_api_request.
func (a *Agent) complete(ctx context.Context, req openai.ChatCompletionRequest, o *Options, calls *int) (openai.ChatCompletionResponse, error) {
	retries := a.Retries
	if retries == 0 {
		retries = DefaultRetries
	}
	backoff := a.Backoff
	if backoff == nil {
		backoff = DefaultBackoff
	}
	for attempt := 0; ; attempt++ {
		*calls++
		resp, err := a.attempt(ctx, req, o, *calls)
		if err == nil || ctx.Err() != nil || attempt >= retries || !retryable(err) {
			return resp, err
		}
		wait := backoff(attempt + 1)
		// a notice, not a warning, naming only the status of an HTTP
		// answer: a call that fails for good is reported once, in
		// full, by whoever ran the turn
		why := []any{"err", a.redact(err.Error())}
		var he *HTTPError
		if errors.As(err, &he) {
			why = []any{"status", he.Status}
		}
		a.logger().Info("model call failed; retrying", append([]any{"session_id", o.SessionID, "attempt", attempt + 1, "wait", wait}, why...)...)
		if err := sleepCtx(ctx, wait); err != nil {
			return resp, err
		}
	}
}

func (a *Agent) attempt(ctx context.Context, req openai.ChatCompletionRequest, o *Options, call int) (resp openai.ChatCompletionResponse, err error) {
	reg := a.hooks()
	chars := 0
	for i := range req.Messages {
		chars += messageChars(&req.Messages[i])
	}
	reg.Emit(hooks.PreAPIRequestHook, &hooks.APIRequest{
		SessionID: o.SessionID, TaskID: o.SessionID, Platform: o.Platform, Model: a.ModelName, Provider: a.Provider, BaseURL: a.BaseURL,
		APIMode: "chat_completions", APICallCount: call, MessageCount: len(req.Messages), ToolCount: len(req.Tools),
		ApproxInputTokens: chars / 4, RequestCharCount: chars, MaxTokens: a.MaxTokens,
	})
	start := time.Now()
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("model panicked: %v", p)
			}
		}()
		if sm, ok := a.Model.(StreamModel); ok && o.Stream != nil {
			resp, err = sm.CompleteStream(ctx, req, o.Stream)
		} else {
			resp, err = a.Model.Complete(ctx, req)
		}
	}()
	post := &hooks.APIResponse{
		SessionID: o.SessionID, TaskID: o.SessionID, Platform: o.Platform, Model: a.ModelName, Provider: a.Provider, BaseURL: a.BaseURL,
		APIMode: "chat_completions", APICallCount: call, APIDuration: time.Since(start).Seconds(), MessageCount: len(req.Messages),
		ResponseModel: resp.Model, Usage: map[string]int{"prompt_tokens": resp.Usage.PromptTokens, "completion_tokens": resp.Usage.CompletionTokens, "total_tokens": resp.Usage.TotalTokens},
	}
	if err != nil {
		post.Error = a.redact(err.Error())
	} else if len(resp.Choices) > 0 {
		post.FinishReason = string(resp.Choices[0].FinishReason)
		post.AssistantContentChars = len(resp.Choices[0].Message.Content)
		post.AssistantToolCallCount = len(resp.Choices[0].Message.ToolCalls)
	}
	reg.Emit(hooks.PostAPIRequestHook, post)
	return resp, err
}

// runTool runs one tool call through pre_tool_call (fired exactly once),
// the tool, post_tool_call and transform_tool_result, and returns what the
// model sees.
func (a *Agent) runTool(ctx context.Context, run *runState, tc openai.ToolCall) string {
	reg := a.hooks()
	turn := &run.turn
	name := tc.Function.Name
	args := map[string]any{}
	if s := strings.TrimSpace(tc.Function.Arguments); s != "" {
		if err := json.Unmarshal([]byte(s), &args); err != nil {
			return toolError(fmt.Sprintf("arguments for %s are not a JSON object: %v", name, err))
		}
		if args == nil {
			args = map[string]any{}
		}
	}
	run.noteArgs(tc.ID, args)
	d := reg.PreToolCall(ctx, &hooks.PreToolCall{ToolName: name, Args: args, TaskID: turn.SessionID, SessionID: turn.SessionID, ToolCallID: tc.ID, Claude: run.claude()})
	preContext := run.feedback(d.Feedback)
	if d.Action == "block" {
		return withHookContext(toolError(d.Message), "", preContext)
	}
	for k, v := range d.Args {
		args[k] = v
	}
	tool, ok := a.Tools.Get(name)
	start := time.Now()
	var result string
	switch {
	case !ok:
		result = toolError("unknown tool: " + name)
	case d.Action == "approve":
		desc := d.Message
		if desc == "" {
			desc = "a hook asked for approval of " + name
		}
		if err := run.approve(ctx, describeCall(name, args), desc, []string{"hook:" + name}); err != nil {
			result = toolError(err.Error())
			break
		}
		result = a.safeRun(ctx, tool, &Call{ID: tc.ID, Args: args, SessionID: turn.SessionID, Turn: turn, run: run})
	default:
		result = a.safeRun(ctx, tool, &Call{ID: tc.ID, Args: args, SessionID: turn.SessionID, Turn: turn, run: run, hookAllowed: d.Action == "allow"})
	}
	failure := toolFailure(name, result)
	p := &hooks.ToolResult{ToolName: name, Args: args, Result: result, TaskID: turn.SessionID, SessionID: turn.SessionID, ToolCallID: tc.ID, DurationMS: time.Since(start).Milliseconds(),
		Failure: failure, Interrupted: failure != "" && ctx.Err() != nil, Denied: denied(result), Claude: run.claude()}
	// in line: a formatter hook's work is done before the next tool runs
	fb := reg.Feedback(ctx, hooks.PostToolCallHook, p)
	postContext := run.feedback(&fb)
	if reg.Has(hooks.TransformToolResultHook) {
		q := *p
		if out, ok := reg.TransformToolResult(ctx, &q); ok {
			result = out
		}
	}
	reason := ""
	if fb.Block {
		reason = fb.Reason
	}
	return withHookContext(result, reason, joinNonEmpty([]string{preContext, postContext}, "\n\n"))
}

// withHookContext adds to a tool result what hooks meant for the model
// (Claude Code's PostToolUse block reason and additionalContext).
func withHookContext(result, reason, context string) string {
	if reason != "" {
		result += "\n\nPostToolUse hook feedback:\n" + reason
	}
	if context != "" {
		result += "\n\nAdditional context from a hook:\n" + context
	}
	return result
}

func joinNonEmpty(parts []string, sep string) string {
	out := ""
	for _, p := range parts {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if out != "" {
			out += sep
		}
		out += p
	}
	return out
}

func describeCall(name string, args map[string]any) string {
	if c, ok := args["command"].(string); ok && name == "terminal" {
		return c
	}
	b, _ := json.Marshal(args)
	return name + " " + string(b)
}

// safeRun is the recover boundary around a tool: tools may come from
// other packages.
func (a *Agent) safeRun(ctx context.Context, t Tool, c *Call) (out string) {
	defer func() {
		if p := recover(); p != nil {
			a.logger().Error("tool panicked", "tool", t.Name(), "panic", fmt.Sprint(p))
			out = toolError(fmt.Sprintf("tool %s crashed: %v", t.Name(), p))
		}
	}()
	res, err := t.Run(ctx, c)
	if err != nil {
		return toolError(a.redact(err.Error()))
	}
	return a.redact(res)
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

func (a *Agent) hooks() *hooks.Registry {
	if a.Hooks == nil {
		return noHooks
	}
	return a.Hooks
}

func (a *Agent) redact(s string) string { return a.Redactor.Redact(s) }

func snip(s string) string {
	if len(s) > snippetSize {
		return s[:snippetSize] + "…"
	}
	return s
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cleanHistory drops what a cut-off history may start with that no model
// accepts: tool results whose assistant message is gone.
func cleanHistory(h []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	i := 0
	for i < len(h) && h[i].Role == openai.ChatMessageRoleTool {
		i++
	}
	return h[i:]
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
