package hooks

import (
	"encoding/json"

	"github.com/heraldgw/herald"
)

// Payloads: one struct per hook point. Field tags are Hermes' keys; the
// JSON of a payload is its "context" in the gateway-hook envelope and the
// kwargs of the shell-hook envelope. New fields may be added; none is ever
// renamed.

// Startup is gateway:startup.
type Startup struct {
	Platforms []string `json:"platforms"`
}

// SessionStart is session:start.
type SessionStart struct {
	Platform   string `json:"platform"`
	UserID     string `json:"user_id"`
	SessionID  string `json:"session_id"`
	SessionKey string `json:"session_key"`
}

// SessionBoundary is session:end and session:reset.
type SessionBoundary struct {
	Platform   string `json:"platform"`
	UserID     string `json:"user_id"`
	SessionKey string `json:"session_key"`
}

// AgentStart is agent:start. Message is cut to 500 characters.
type AgentStart struct {
	Platform  string `json:"platform"`
	UserID    string `json:"user_id"`
	ChatID    string `json:"chat_id"`
	SessionID string `json:"session_id"`
	Message   string `json:"message"`
	ThreadID  string `json:"thread_id"`
	ChatType  string `json:"chat_type"`
	// Media are the message's attachments (herald's extension).
	Media []MediaInfo `json:"media,omitempty"`
}

// AgentEnd is agent:end: agent:start's keys plus the response (cut to 500
// characters) and, for a failed turn, failed and error.
type AgentEnd struct {
	AgentStart
	Response string `json:"response"`
	Model    string `json:"model,omitempty"`
	Failed   bool   `json:"failed,omitempty"`
	Error    string `json:"error,omitempty"`
}

// AgentStep is agent:step, once per iteration of the tool loop.
type AgentStep struct {
	Platform  string   `json:"platform"`
	UserID    string   `json:"user_id"`
	SessionID string   `json:"session_id"`
	Iteration int      `json:"iteration"`
	ToolNames []string `json:"tool_names"`
	Tools     []any    `json:"tools"`
}

// Command is command:<name>.
type Command struct {
	Platform   string `json:"platform"`
	UserID     string `json:"user_id"`
	Command    string `json:"command"`
	RawCommand string `json:"raw_command"`
	Args       string `json:"args"`
	RawArgs    string `json:"raw_args"`
}

// PreToolCall is pre_tool_call.
type PreToolCall struct {
	ToolName   string         `json:"tool_name"`
	Args       map[string]any `json:"args"`
	TaskID     string         `json:"task_id"`
	SessionID  string         `json:"session_id"`
	ToolCallID string         `json:"tool_call_id"`
	Claude     Claude         `json:"-"`
}

// ToolResult is post_tool_call and transform_tool_result.
type ToolResult struct {
	ToolName   string         `json:"tool_name"`
	Args       map[string]any `json:"args"`
	Result     string         `json:"result"`
	TaskID     string         `json:"task_id"`
	SessionID  string         `json:"session_id"`
	ToolCallID string         `json:"tool_call_id"`
	DurationMS int64          `json:"duration_ms"`
	// Failure says why the call failed ("" when it succeeded);
	// Interrupted is set when the turn was cancelled while it ran. Only
	// the claude dialect reads them (PostToolUse or PostToolUseFailure).
	Failure     string `json:"-"`
	Interrupted bool   `json:"-"`
	// Denied is set when the call was refused an approval: Claude Code
	// fires neither PostToolUse nor PostToolUseFailure for a denied
	// permission.
	Denied bool   `json:"-"`
	Claude Claude `json:"-"`
}

// TerminalOutput is transform_terminal_output. Hermes' code passes
// returncode and env_type, its docs exit_code and cwd: both are sent.
type TerminalOutput struct {
	Command    string `json:"command"`
	Output     string `json:"output"`
	ReturnCode int    `json:"returncode"`
	ExitCode   int    `json:"exit_code"`
	Cwd        string `json:"cwd"`
	TaskID     string `json:"task_id"`
	EnvType    string `json:"env_type"`
}

// HistoryMessage is one entry of conversation_history (OpenAI format).
type HistoryMessage struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCalls  any    `json:"tool_calls,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
}

// PreLLMCall is pre_llm_call, once per turn before the tool loop.
type PreLLMCall struct {
	SessionID           string           `json:"session_id"`
	UserMessage         string           `json:"user_message"`
	ConversationHistory []HistoryMessage `json:"conversation_history"`
	IsFirstTurn         bool             `json:"is_first_turn"`
	Model               string           `json:"model"`
	Platform            string           `json:"platform"`
	SenderID            string           `json:"sender_id"`
	Claude              Claude           `json:"-"`
	// Media are the attachments of the user's message (herald's
	// extension).
	Media []MediaInfo `json:"media,omitempty"`
}

// PostLLMCall is post_llm_call.
type PostLLMCall struct {
	SessionID           string           `json:"session_id"`
	UserMessage         string           `json:"user_message"`
	AssistantResponse   string           `json:"assistant_response"`
	ConversationHistory []HistoryMessage `json:"conversation_history"`
	Model               string           `json:"model"`
	Platform            string           `json:"platform"`
	// StopHookActive is set when a Stop hook already sent the agent back
	// to work in this turn (Claude Code's stop_hook_active).
	StopHookActive bool   `json:"-"`
	Claude         Claude `json:"-"`
}

// LLMOutput is transform_llm_output.
type LLMOutput struct {
	ResponseText string `json:"response_text"`
	SessionID    string `json:"session_id"`
	Model        string `json:"model"`
	Platform     string `json:"platform"`
}

// APIRequest is pre_api_request.
type APIRequest struct {
	TaskID            string `json:"task_id"`
	SessionID         string `json:"session_id"`
	Platform          string `json:"platform"`
	Model             string `json:"model"`
	Provider          string `json:"provider"`
	BaseURL           string `json:"base_url"`
	APIMode           string `json:"api_mode"`
	APICallCount      int    `json:"api_call_count"`
	MessageCount      int    `json:"message_count"`
	ToolCount         int    `json:"tool_count"`
	ApproxInputTokens int    `json:"approx_input_tokens"`
	RequestCharCount  int    `json:"request_char_count"`
	MaxTokens         int    `json:"max_tokens"`
}

// APIResponse is post_api_request.
type APIResponse struct {
	TaskID                 string         `json:"task_id"`
	SessionID              string         `json:"session_id"`
	Platform               string         `json:"platform"`
	Model                  string         `json:"model"`
	Provider               string         `json:"provider"`
	BaseURL                string         `json:"base_url"`
	APIMode                string         `json:"api_mode"`
	APICallCount           int            `json:"api_call_count"`
	APIDuration            float64        `json:"api_duration"`
	FinishReason           string         `json:"finish_reason"`
	MessageCount           int            `json:"message_count"`
	ResponseModel          string         `json:"response_model"`
	Usage                  map[string]int `json:"usage"`
	AssistantContentChars  int            `json:"assistant_content_chars"`
	AssistantToolCallCount int            `json:"assistant_tool_call_count"`
	Error                  string         `json:"error,omitempty"`
}

// SessionStarted is on_session_start.
type SessionStarted struct {
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	Platform  string `json:"platform"`
	// Source is Claude Code's SessionStart source: startup, resume,
	// clear or compact ("" is startup).
	Source string `json:"-"`
	// ClaudeOnly marks a SessionStart Hermes has no event for (a stored
	// session resumed, the context trimmed): only subscribers with an
	// Accept filter (claude-dialect shell hooks) are given it.
	ClaudeOnly bool   `json:"-"`
	Claude     Claude `json:"-"`
}

// SessionEnded is on_session_end, at the end of every run (the claude
// dialect's SessionEnd is on_session_finalize: a session's end, not a
// run's).
type SessionEnded struct {
	SessionID   string `json:"session_id"`
	Completed   bool   `json:"completed"`
	Interrupted bool   `json:"interrupted"`
	Model       string `json:"model"`
	Platform    string `json:"platform"`
}

// SessionFinalized is on_session_finalize; SessionID is nil when no
// session existed.
type SessionFinalized struct {
	SessionID *string `json:"session_id"`
	Platform  string  `json:"platform"`
	// Reason is Claude Code's SessionEnd reason: clear for /new and
	// /reset, other ("" too) for expiry, policy resets and shutdown.
	Reason string `json:"-"`
	Claude Claude `json:"-"`
}

// SessionWasReset is on_session_reset, with the new session's id.
type SessionWasReset struct {
	SessionID string `json:"session_id"`
	Platform  string `json:"platform"`
}

// SubagentStop is subagent_stop, once per delegate_task child.
type SubagentStop struct {
	ParentSessionID string  `json:"parent_session_id"`
	ChildRole       *string `json:"child_role"`
	ChildSummary    *string `json:"child_summary"`
	ChildStatus     string  `json:"child_status"`
	DurationMS      int64   `json:"duration_ms"`
	// StopHookActive is set when a SubagentStop hook already sent this
	// child back to work (Claude Code's stop_hook_active).
	StopHookActive bool `json:"-"`
	// AgentID is the child's session id, AgentTranscriptPath its
	// transcript (Claude Code's agent_id and agent_transcript_path).
	AgentID             string `json:"-"`
	AgentTranscriptPath string `json:"-"`
	Claude              Claude `json:"-"`
}

// Approval is pre_approval_request and, with Choice, post_approval_response.
type Approval struct {
	Command     string   `json:"command"`
	Description string   `json:"description"`
	PatternKey  string   `json:"pattern_key"`
	PatternKeys []string `json:"pattern_keys"`
	SessionKey  string   `json:"session_key"`
	Surface     string   `json:"surface"`
	Choice      string   `json:"choice,omitempty"`
}

// Compaction is what pre_compact and post_compact both carry. Trigger is
// "auto" (herald trims on its own; Claude Code's /compact would be
// "manual"); TokensBefore estimates the request before the cut;
// DroppedHistory is the turns the cut request lacks, as stored (OpenAI
// format, like pre_llm_call's conversation_history), so a hook can save
// them or say what in them must be kept.
type Compaction struct {
	SessionID      string           `json:"session_id"`
	Trigger        string           `json:"trigger"`
	Model          string           `json:"model"`
	Platform       string           `json:"platform"`
	ContextWindow  int              `json:"context_window"`
	TokensBefore   int              `json:"tokens_before"`
	DroppedHistory []HistoryMessage `json:"dropped_history"`
	Claude         Claude           `json:"-"`
}

// PreCompact is pre_compact: the agent's request is about to be cut to
// fit the context window. The counts say what the cut request will lack
// of the conversation as stored: old tool outputs replaced by a note,
// whole turns dropped and the messages in them.
type PreCompact struct {
	Compaction
	TurnsToDrop       int `json:"turns_to_drop"`
	MessagesToDrop    int `json:"messages_to_drop"`
	ToolOutputsToDrop int `json:"tool_outputs_to_drop"`
}

// PostCompact is post_compact, after every pre_compact (also when the
// cut failed): what was dropped, and the estimate after. Its answers'
// context is kept as compaction notes in every later request of the
// turn.
type PostCompact struct {
	Compaction
	TokensAfter        int `json:"tokens_after"`
	TurnsDropped       int `json:"turns_dropped"`
	MessagesDropped    int `json:"messages_dropped"`
	ToolOutputsDropped int `json:"tool_outputs_dropped"`
}

// Dispatch is pre_gateway_dispatch. Go plugins get the message and two
// side channels; out-of-process hooks get {"event": <message>}.
type Dispatch struct {
	Message    herald.Message            `json:"event"`
	Replier    herald.Replier            `json:"-"`
	Transcript herald.TranscriptAppender `json:"-"`
}

// Claude is what Claude Code's hook input carries beyond Hermes' keys.
// It is never part of Hermes' wire shape (json:"-"): the claude dialect
// (ClaudePayload) reads it, Go plugins may.
type Claude struct {
	// TranscriptPath is the session's transcript, JSON lines in Claude
	// Code's format ("" when herald writes none).
	TranscriptPath string
	// PermissionMode is Claude Code's name for herald's approval mode.
	PermissionMode string
	// Cwd is the agent's working directory (relative tool paths are
	// resolved against it); "" is the process's.
	Cwd string
	// SessionID, AgentID and AgentType are set inside a sub-agent: the
	// session that delegated (Claude's session_id), the sub-agent's own
	// session and its type.
	SessionID string
	AgentID   string
	AgentType string
}

// claudeCarrier is implemented by the payloads that carry Claude.
type claudeCarrier interface{ claude() *Claude }

func (p *PreToolCall) claude() *Claude      { return &p.Claude }
func (p *ToolResult) claude() *Claude       { return &p.Claude }
func (p *PreLLMCall) claude() *Claude       { return &p.Claude }
func (p *PostLLMCall) claude() *Claude      { return &p.Claude }
func (p *SessionStarted) claude() *Claude   { return &p.Claude }
func (p *SessionFinalized) claude() *Claude { return &p.Claude }
func (p *SubagentStop) claude() *Claude     { return &p.Claude }
func (p *Compaction) claude() *Claude       { return &p.Claude }

// ToolNamer is implemented by payloads that name a tool, so matchers can
// filter on it.
type ToolNamer interface{ HookToolName() string }

func (p *PreToolCall) HookToolName() string { return p.ToolName }
func (p *ToolResult) HookToolName() string  { return p.ToolName }

// Context returns the JSON object a payload is sent as, for
// out-of-process subscribers.
func Context(payload any) (json.RawMessage, error) {
	if payload == nil {
		return json.RawMessage(`{}`), nil
	}
	return json.Marshal(payload)
}
