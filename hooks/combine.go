package hooks

import (
	"context"
	"fmt"
	"strings"
)

// The combiners: each interceptor point's answers folded into one decision
// exactly as Hermes folds them.

// PreToolCall asks pre_tool_call subscribers about a tool call. The first
// valid block wins (a block with no message gets the default text);
// modify answers are shallow-merged in order; an "approve" asks a person;
// an "allow" with no block or approve skips herald's own approval prompt
// (Claude Code's precedence: deny, then ask, then allow). Feedback from
// every answer is merged. A Go subscriber that panics or overruns, or any
// fail_closed subscriber that fails, blocks.
func (r *Registry) PreToolCall(ctx context.Context, p *PreToolCall) ToolDecision {
	var out ToolDecision
	var blocked, allowed bool
	var fb Feedback
	fold := func(a *Answer) {
		if d := asToolDecision(a.Value); d != nil && !a.Failed() {
			fb.Merge(d.Feedback)
		}
		if blocked {
			return
		}
		if a.Failed() {
			if a.FailClosed || (a.Attach == AttachGo && (a.Panicked || a.TimedOut)) {
				blocked = true
				out = ToolDecision{Action: "block", Message: failMessage(a)}
			}
			return
		}
		d := asToolDecision(a.Value)
		if d == nil {
			return
		}
		switch d.Action {
		case "block":
			blocked = true
			msg := d.Message
			if strings.TrimSpace(msg) == "" {
				msg = DefaultBlockMessage
			}
			out = ToolDecision{Action: "block", Message: msg}
		case "modify", "allow":
			if len(d.Args) > 0 && out.Args == nil {
				out.Args = map[string]any{}
			}
			for k, v := range d.Args {
				out.Args[k] = v
			}
			if out.Action == "" && len(d.Args) > 0 {
				out.Action = "modify"
			}
			allowed = allowed || d.Action == "allow"
		case "approve":
			out.Action = "approve"
			if out.Message == "" {
				out.Message = d.Message
			}
			for k, v := range d.Args {
				if out.Args == nil {
					out.Args = map[string]any{}
				}
				out.Args[k] = v
			}
		}
	}
	r.callUntil(ctx, PreToolCallHook, p, func(a *Answer) bool { fold(a); return blocked })
	// approve with modify: the action stays "approve" and Args carries the
	// merged changes, so a person is asked about the modified call
	if allowed && (out.Action == "" || out.Action == "modify") {
		out.Action = "allow"
	}
	if !fb.Empty() {
		out.Feedback = &fb
	}
	return out
}

// DefaultBlockMessage is the text of a block that came without one.
const DefaultBlockMessage = "Blocked by shell hook."

func failMessage(a *Answer) string { return failMessageAt(PreToolCallHook, a) }

// failMessageAt is the reason of a block for a hook that failed: the
// hook's name and its failure.
func failMessageAt(event string, a *Answer) string {
	switch {
	case a.Panicked:
		return fmt.Sprintf("%s hook %s raised: %v", event, a.Hook, a.Err)
	case a.TimedOut:
		return fmt.Sprintf("%s hook %s timed out or is still running", event, a.Hook)
	}
	return fmt.Sprintf("hook %s failed closed: %v", a.Hook, a.Err)
}

func asToolDecision(v any) *ToolDecision {
	switch d := v.(type) {
	case *ToolDecision:
		return d
	case ToolDecision:
		return &d
	case map[string]any:
		action, _ := d["action"].(string)
		msg, _ := d["message"].(string)
		if action == "block" && strings.TrimSpace(msg) == "" {
			return nil // Hermes: a Go/Python block needs a non-empty message
		}
		if action == "allow" {
			return nil // Hermes has no allow; only Claude Code's answer means it
		}
		args, _ := d["args"].(map[string]any)
		return &ToolDecision{Action: action, Message: msg, Args: args}
	}
	return nil
}

// PreLLMCall collects pre_llm_call contexts, joined with a blank line in
// call order.
func (r *Registry) PreLLMCall(ctx context.Context, p *PreLLMCall) string {
	c, _ := r.UserPrompt(ctx, p)
	return c
}

// UserPrompt asks pre_llm_call subscribers about a prompt: their contexts
// joined with a blank line in call order, and their merged Feedback
// (Claude Code's UserPromptSubmit: a block refuses the prompt).
func (r *Registry) UserPrompt(ctx context.Context, p *PreLLMCall) (string, Feedback) {
	var parts []string
	var fb Feedback
	r.callUntil(ctx, PreLLMCallHook, p, func(a *Answer) bool {
		userPromptAnswer(a, &parts, &fb)
		return fb.Block
	})
	return strings.Join(parts, "\n\n"), fb
}

// userPromptAnswer folds one pre_llm_call answer: its context, its
// Feedback, and, for a block_on_failure hook that failed, a block naming
// it.
func userPromptAnswer(a *Answer, parts *[]string, fb *Feedback) {
	if a.Failed() {
		if a.FailClosed {
			fb.Merge(&Feedback{Block: true, Reason: failMessageAt(PreLLMCallHook, a)})
		}
		return
	}
	switch v := a.Value.(type) {
	case *LLMContext:
		if v != nil {
			fb.Merge(v.Feedback)
		}
		if v != nil && strings.TrimSpace(v.Context) != "" {
			*parts = append(*parts, v.Context)
		}
	case LLMContext:
		if strings.TrimSpace(v.Context) != "" {
			*parts = append(*parts, v.Context)
		}
	case string:
		if strings.TrimSpace(v) != "" {
			*parts = append(*parts, v)
		}
	case map[string]any:
		if c, ok := v["context"]; ok && c != nil && c != "" {
			*parts = append(*parts, fmt.Sprint(c))
		}
	}
}

// Feedback publishes an observer event (Notify) and merges what its
// in-line subscribers answered.
func (r *Registry) Feedback(ctx context.Context, name string, payload any) Feedback {
	var fb Feedback
	r.Notify(ctx, name, payload, func(a *Answer) { mergeAnswer(&fb, a) })
	return fb
}

// InlineFeedback calls only the in-line subscribers of an observer event
// (CallInline) and merges their answers.
func (r *Registry) InlineFeedback(ctx context.Context, name string, payload any) Feedback {
	var fb Feedback
	r.CallInline(ctx, name, payload, func(a *Answer) { mergeAnswer(&fb, a) })
	return fb
}

func mergeAnswer(fb *Feedback, a *Answer) {
	if a.Failed() {
		return
	}
	switch v := a.Value.(type) {
	case *Feedback:
		fb.Merge(v)
	case Feedback:
		fb.Merge(&v)
	}
}

// transform runs a transform_* point: the first answer that is a string
// wins (for transform_llm_output, the first non-empty one).
func (r *Registry) transform(ctx context.Context, name string, p any, nonEmpty bool) (string, bool) {
	var out string
	var got bool
	r.Call(ctx, name, p, func(a *Answer) {
		if got || a.Failed() {
			return
		}
		var s string
		switch v := a.Value.(type) {
		case *Replace:
			if v == nil {
				return
			}
			s = v.Text
		case Replace:
			s = v.Text
		case string:
			s = v
		default:
			return
		}
		if nonEmpty && s == "" {
			return
		}
		out, got = s, true
	})
	return out, got
}

// TransformToolResult returns the replacement for a tool result, if any.
func (r *Registry) TransformToolResult(ctx context.Context, p *ToolResult) (string, bool) {
	return r.transform(ctx, TransformToolResultHook, p, false)
}

// TransformTerminalOutput returns the replacement for raw terminal output.
func (r *Registry) TransformTerminalOutput(ctx context.Context, p *TerminalOutput) (string, bool) {
	return r.transform(ctx, TransformTerminalOutputHook, p, false)
}

// TransformLLMOutput returns the replacement final response, if any.
func (r *Registry) TransformLLMOutput(ctx context.Context, p *LLMOutput) (string, bool) {
	return r.transform(ctx, TransformLLMOutputHook, p, true)
}

// PreGatewayDispatch returns the first recognised action (skip, rewrite or
// allow); the zero decision means normal dispatch.
func (r *Registry) PreGatewayDispatch(ctx context.Context, p *Dispatch) DispatchDecision {
	var out DispatchDecision
	var done bool
	r.callUntil(ctx, PreGatewayDispatchHook, p, func(a *Answer) bool {
		if done || a.Failed() {
			return done
		}
		var d DispatchDecision
		switch v := a.Value.(type) {
		case *DispatchDecision:
			if v == nil {
				return false
			}
			d = *v
		case DispatchDecision:
			d = v
		case map[string]any:
			d.Action, _ = v["action"].(string)
			d.Reason, _ = v["reason"].(string)
			d.Ingest, _ = v["ingest"].(bool)
			if t, ok := v["text"].(string); ok {
				d.Text, d.TextSet = t, true
			}
		default:
			return false
		}
		switch d.Action {
		case "skip", "allow":
			out, done = d, true
		case "rewrite":
			if !d.TextSet && d.Text != "" {
				d.TextSet = true
			}
			out, done = d, true
		}
		return done
	})
	return out
}

// CommandOutcome is the combined answer of command:<name> hooks.
type CommandOutcome struct {
	// Decision is "" (go on), "deny", "handled" or "rewrite".
	Decision string
	// Reply is the text to send for deny/handled ("" sends nothing for
	// handled).
	Reply string
	// Rewrite is the command name to dispatch instead.
	Rewrite string
}

// Command asks command:<canonical> hooks. typed is the command as the user
// typed it, for the default deny text.
func (r *Registry) Command(ctx context.Context, p *Command) CommandOutcome {
	var out CommandOutcome
	var done bool
	r.callUntil(ctx, CommandPrefix+p.Command, p, func(a *Answer) bool {
		if done || a.Failed() {
			return done
		}
		var d CommandDecision
		switch v := a.Value.(type) {
		case *CommandDecision:
			if v == nil {
				return false
			}
			d = *v
		case CommandDecision:
			d = v
		case map[string]any:
			d.Decision = fmt.Sprint(v["decision"])
			d.Message, _ = v["message"].(string)
			d.CommandName, _ = v["command_name"].(string)
		default:
			return false
		}
		switch strings.ToLower(strings.TrimSpace(d.Decision)) {
		case "deny":
			msg := d.Message
			if strings.TrimSpace(msg) == "" {
				msg = fmt.Sprintf("Command `/%s` was blocked by a hook.", strings.TrimPrefix(p.RawCommand, "/"))
			}
			out, done = CommandOutcome{Decision: "deny", Reply: msg}, true
		case "handled":
			out, done = CommandOutcome{Decision: "handled", Reply: d.Message}, true
		case "rewrite":
			name := strings.TrimPrefix(strings.TrimSpace(d.CommandName), "/")
			if name == "" {
				return false
			}
			out, done = CommandOutcome{Decision: "rewrite", Rewrite: name}, true
		}
		return done
	})
	return out
}
