package hooks

// Results: what interceptors answer. Go callbacks return these (or nil);
// out-of-process answers are parsed into them by ParseAnswer.

// ToolDecision answers pre_tool_call.
type ToolDecision struct {
	// Action is "block", "modify", "approve" (ask a person) or "" (no
	// opinion).
	Action  string         `json:"action,omitempty"`
	Message string         `json:"message,omitempty"`
	Args    map[string]any `json:"args,omitempty"`
}

// Block is a ToolDecision that blocks with msg.
func Block(msg string) *ToolDecision { return &ToolDecision{Action: "block", Message: msg} }

// LLMContext answers pre_llm_call: text appended to this turn's user
// message.
type LLMContext struct {
	Context string `json:"context"`
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
