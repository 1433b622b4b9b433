// Package agent is the model loop: it sends a conversation to an
// OpenAI-compatible chat-completions endpoint (or the offline echo model),
// runs the tools the model calls, and loops until the model answers
// without tool calls, the iteration budget runs out or the context ends.
//
// It emits the agent-level hook points (pre_llm_call, pre/post_api_request,
// pre/post_tool_call, transform_*, post_llm_call, on_session_start/end,
// agent:step) on the registry it is given. Run is safe to call from many
// goroutines at once; one Run is one turn of one session.
package agent
