// Package agent is the model loop: it sends a conversation to an
// OpenAI-compatible chat-completions endpoint (or the offline echo model),
// runs the tools the model calls, and loops until the model answers
// without tool calls, the iteration budget runs out or the context ends.
//
// # Promises
//
// Run is safe to call from many goroutines at once; one Run is one turn
// of one session. It blocks until the turn ends and returns a Result in
// every case: on error or interruption, Messages hold what happened so
// far, and every tool call the model made has a tool result, so the
// history stays valid for the next turn.
//
// Cancellation: when ctx ends, the model request (plain or streamed) and
// any running tool stop (the terminal tool kills its process group), and
// Run returns within about 100 ms with Interrupted set and ctx's error.
//
// Model errors: 429 and 5xx answers are retried (Agent.Retries, default 3,
// with exponential backoff from 1 s); then, or for any other error, Run
// returns the error and the caller apologises. An answer that cannot be
// decoded is a *MalformedError, logged with the start of the raw body
// (redacted), never a panic.
//
// Context window: each request is estimated at characters/4 tokens and
// kept within ContextWindow (minus MaxTokens): old tool outputs are
// replaced by a note first, then the oldest turns are dropped; the system
// prompt and the current turn never are. The log says what was dropped.
// Stored messages are never changed. A cut deeper than any before in the
// run fires pre_compact, then post_compact (always paired, in that order,
// from Run's goroutine; post_compact is awaited); the context its hooks
// answer is kept as compaction notes, a system message after the system
// prompt in every later cut request of the run, never stored.
//
// Judge answers prompt and agent hooks (hooks.Judge) with the agent's
// model: one completion, or a sub-agent with read_file and a terminal
// that refuses any command needing approval (nobody is asked), bounded
// by its iterations. Its model and tool calls fire no hook point.
//
// # Hook points
//
// Run emits, on the registry it is given, exactly as Hermes does:
// on_session_start (first turn: no history), pre_llm_call (once per turn;
// its context is appended to this turn's user message in the request
// only), pre_api_request/post_api_request (every attempt), pre_tool_call
// (once per tool execution: a block becomes the tool result
// {"error": message} and the tool does not run; modify merges arguments;
// approve asks a person), post_tool_call (with duration_ms),
// transform_tool_result (after it), agent:step (per iteration with tool
// calls), transform_llm_output and post_llm_call (only with a final
// response and not interrupted), on_session_end (every run). The terminal
// tool fires transform_terminal_output; approvals fire
// pre_approval_request and post_approval_response; delegate_task fires
// subagent_stop once per child, in task order, from the parent's
// goroutine after all children ended.
//
// For Claude Code's dialect, payloads also carry hooks.Claude (never in
// Hermes' wire shape) and ToolResult says whether the call failed or was
// denied; on_session_start also fires, marked ClaudeOnly (only subscribers
// with an Accept filter get it), for Options.SessionSource "resume" and
// once a run when the window drops old turns ("compact").
//
// # Transcripts
//
// With TranscriptDir set, each session's messages are appended, as they
// happen, to TranscriptDir/<session id>.jsonl in Claude Code's transcript
// format (a sub-agent's to its own file), redacted, 0600; the final
// answer is written before post_llm_call fires. A failed write is logged,
// never the turn's. PruneTranscripts deletes old ones.
//
// # Confinement
//
// The terminal tool asks for approval when DetectDangerous, which parses
// the command with a shell parser, finds a reason; a command it cannot
// parse, or whose command name is only known when it runs, needs
// approval too. Terminal.Sandbox, when set, runs the command through
// package sandbox (Landlock or bubblewrap, capabilities dropped).
// read_file, write_file and patch refuse paths outside Paths.Workdir and
// Paths.Allowed, inside Paths.Home (by name and by device and inode;
// Home's media/ may be read) and under /proc, open what they checked
// without following any link, and never write a file with more than one
// hard link.
//
// # For the gateway
//
// Options.Stream: set it to receive the growing text of each model answer
// while it streams (SSE); it is called on Run's goroutine, so it must
// return quickly (throttle edits on your side). Leave it nil for plain
// requests.
//
// Options.Approver: the person who answers approval prompts. Approve is
// called on Run's goroutine, may block until the person answers, and gets
// a ctx bounded by Agent.ApprovalTimeout (5 minutes): return
// ChoiceTimeout when it ends. A nil Approver denies (BOOT.md, cron).
// "session" answers are remembered per Turn.SessionKey in memory,
// "always" answers per pattern key through ApprovalMemory (state.db).
// TerminalApprover is the y/N prompt for a terminal.
package agent
