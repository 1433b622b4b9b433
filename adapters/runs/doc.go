// Package runs is herald's runs API, platform "runs", served on the local
// platform's listener behind its token and Host check: a turn started
// over HTTP that runs on its own, is watched as it goes, and answered
// when it asks for an approval.
//
//	POST /v1/runs                 {"input", "session_id"?} starts a turn and
//	                              answers 202 {"run_id","session_id"?} at once
//	GET  /v1/runs/{id}            the run's state
//	GET  /v1/runs/{id}/events     Server-Sent Events: the run's log from its
//	                              start, then live, ending after run.completed,
//	                              run.failed or run.stopped
//	POST /v1/runs/{id}/approval   {"choice": "once"|"session"|"always"|"deny"}
//	POST /v1/runs/{id}/stop       interrupt the run
//
// A run is a message on platform "runs" handed to the gateway's Sink like
// any adapter's, so hooks, tools, approvals and transcripts apply. A run
// without session_id opens a chat (and so a session) of its own; one with
// session_id continues that stored session of platform runs, in its chat
// (a session that has ended meanwhile gives way to the chat's next one, as
// in any chat; the run's state names the session it ran in).
// One run at a time runs in a chat: a second on the same session is
// refused with 409 while the first runs. An approval is answered, and a
// run stopped, exactly as a person in the chat would: the adapter hands
// "/approve <choice>", "/deny" or "/stop" to the Sink as a message of the
// run's user in the run's chat.
//
// A run is not tied to the request that started it: the message is
// handed over with a context that outlives the request, and the run goes
// on when its client goes away. Runs are kept in memory only: a finished
// run is kept for Config.Keep (default 1 h), at most Config.MaxRuns
// (default 1000) of them, and fewer when their event logs together pass
// Config.MaxTotalLog bytes (the oldest go first); a restart forgets them
// (their sessions and transcripts are in state.db).
//
// Events. Each run keeps a log of its events, each with an id growing from
// 1: run.started; every hook point that fires for the run's chat, session
// or session key (as /v1/events carries it, {"event_type","context"}, with
// secrets masked; hook points that name none of them, such as command:*,
// are not the run's); tool.started and tool.completed (with duration_ms)
// from pre_tool_call and post_tool_call; approval.requested (command,
// reason) and approval.answered (choice) from pre_approval_request and
// post_approval_response; message.delta as the reply's text grows (a
// streamed reply's edits); and one of run.completed (output),
// run.failed (error) or run.stopped, the last. A subscriber gets the log
// from its start (or after its Last-Event-ID) and then live events, each
// once, in log order. The log is in the order things happened: hook
// points reach the adapter off the turn's hot path (as every observer
// gets them), so a text delta waits for the hook points emitted before it
// (by their emission time: until a later one arrives, at most 250 ms),
// and the final event waits (at most EndWait) for the turn's agent:end. A
// log keeps at most Config.MaxLog bytes (default 1 MiB): past it the
// oldest events go, and a subscriber that asked for them is first told
// how many it missed (event "dropped").
//
// The output is the text of what the gateway sent to the run's chat,
// messages a blank line apart, without the approval prompts (shown as
// approval.requested) and the answers to the adapter's own /approve,
// /deny and /stop messages. An approval prompt is known as the last
// message sent before the turn's receipt resolved awaiting_input, so a
// message is shown (as a delta) only once something follows it: a later
// message, an edit, or the end of the message's handling.
//
// Errors are the local API's, {"error": "…"}: 400 for a malformed body
// or choice, 401 for a missing or wrong token (the listener's), 404 for an
// unknown run or session, 409 for a session busy with another run, an
// approval when none is pending, or a stop of a finished run.
package runs
