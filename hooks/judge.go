package hooks

// judge.go: the model behind `prompt` and `agent` hooks. The hooks
// package renders the hook's prompt and reads the verdict; the model call
// itself (one completion, or a one-shot read-only sub-agent) is the
// agent's, reached through Judge so that hooks does not import agent.

import "context"

// Hook types of an attachment (config.yaml `type:`, HOOK.yaml `type:`).
const (
	TypeCommand = "command"
	TypeHTTP    = "http"
	TypePrompt  = "prompt"
	TypeAgent   = "agent"
)

// JudgeRequest is one prompt or agent hook asking the model.
type JudgeRequest struct {
	// Kind is TypePrompt (one model call, no tools) or TypeAgent (a
	// one-shot sub-agent with read-only tools).
	Kind string
	// Prompt is the hook's prompt with $ARGUMENTS replaced by the
	// payload JSON; it is the whole user message.
	Prompt string
	// System is the instruction that asks for the verdict's shape
	// ({"ok": true} or {"ok": false, "reason": "…"}, or free text on
	// post_compact).
	System string
	// Model is the model to ask; "" is the gateway's model.
	Model string
	// MaxIterations bounds an agent hook's model calls (0: 5).
	MaxIterations int
	// SessionID and Event name the hook point, for logs and
	// transcripts.
	SessionID string
	Event     string
}

// Judge runs the model for prompt and agent hooks and returns its final
// answer as text; the hooks package parses the verdict. An error (model
// unreachable, timeout, the budget spent without an answer) is a failure
// of the hook.
type Judge interface {
	Judge(ctx context.Context, req JudgeRequest) (string, error)
}
