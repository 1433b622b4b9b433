package hooks

// Results: what interceptors answer. Go callbacks return these (or nil);
// out-of-process answers are parsed into them by ParseAnswer.

// ToolDecision answers pre_tool_call.
type ToolDecision struct {
	// Action is "block", "modify", "approve" (ask a person), "allow"
	// (run without herald's own approval prompt: Claude Code's
	// permissionDecision "allow") or "" (no opinion).
	Action  string         `json:"action,omitempty"`
	Message string         `json:"message,omitempty"`
	Args    map[string]any `json:"args,omitempty"`
	// Feedback carries Claude Code's other fields (additionalContext for
	// the model, systemMessage, continue: false).
	Feedback *Feedback `json:"-"`
}

// Block is a ToolDecision that blocks with msg.
func Block(msg string) *ToolDecision { return &ToolDecision{Action: "block", Message: msg} }

// LLMContext answers pre_llm_call: text appended to this turn's user
// message.
type LLMContext struct {
	Context string `json:"context"`
	// Feedback carries Claude Code's other fields: decision "block" (the
	// prompt never reaches the model), systemMessage, continue: false.
	Feedback *Feedback `json:"-"`
}

// Feedback is what a hook may say besides its decision, in Claude Code's
// terms, and the answer on the observer points Claude Code lets a hook
// speak on (PostToolUse, Stop, SubagentStop, SessionStart): context for
// the model, a block with its reason, a message for the person in the
// chat, or a halt of the whole turn. Go plugins may return it too.
type Feedback struct {
	// Context is additionalContext (or a SessionStart hook's plain
	// stdout): text for the model.
	Context string `json:"additional_context,omitempty"`
	// Block is decision "block" (or exit 2): on post_tool_call Reason is
	// shown to the model; on post_llm_call and subagent_stop the agent
	// goes on with Reason as its next instruction; on pre_llm_call the
	// prompt is refused and Reason shown to the person.
	Block  bool   `json:"block,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Notice is systemMessage: shown to the person in the chat.
	Notice string `json:"system_message,omitempty"`
	// Halt is continue: false: the turn ends, StopReason is shown to the
	// person (never to the model).
	Halt       bool   `json:"halt,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
	// Suppress is suppressOutput: the hook's output is not logged.
	Suppress bool `json:"-"`
}

// Merge folds another answer into f: texts joined in order, any block or
// halt wins, the first stop reason is kept.
func (f *Feedback) Merge(o *Feedback) {
	if o == nil {
		return
	}
	f.Context = joinText(f.Context, o.Context, "\n\n")
	if o.Block {
		f.Block = true
		f.Reason = joinText(f.Reason, o.Reason, "\n")
	}
	f.Notice = joinText(f.Notice, o.Notice, "\n")
	if o.Halt {
		if !f.Halt {
			f.StopReason = o.StopReason
		}
		f.Halt = true
	}
}

// Empty reports whether f says nothing.
func (f *Feedback) Empty() bool {
	return f == nil || (f.Context == "" && !f.Block && f.Notice == "" && !f.Halt)
}

func joinText(a, b, sep string) string {
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + sep + b
}

// Replace answers the transform_* points: the replacement text.
type Replace struct {
	Text string `json:"result"`
}

// DispatchDecision answers pre_gateway_dispatch.
type DispatchDecision struct {
	// Action is "skip", "rewrite" or "allow"; anything else is not
	// recognised and scanning goes on.
	Action string `json:"action"`
	Text   string `json:"text,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Ingest, with skip, records the message in the session's transcript
	// without a reply (herald's extension).
	Ingest bool `json:"ingest,omitempty"`
	// textSet distinguishes a rewrite to "" from a rewrite with no text.
	TextSet bool `json:"-"`
}

// CommandDecision answers command:<name>.
type CommandDecision struct {
	// Decision is allow, deny, handled or rewrite.
	Decision    string `json:"decision"`
	Message     string `json:"message,omitempty"`
	CommandName string `json:"command_name,omitempty"`
	MessageSet  bool   `json:"-"`
}
