// Package gateway is the Runner: it runs every adapter, takes each inbound
// message through dispatch, runs agent turns, and delivers what comes out
// through one delivery path. It implements adapters.Sink, herald.Deliverer,
// herald.Replier and herald.TranscriptAppender, and agent.Approver for
// chats.
//
// The order of one message: internal messages (cron, BOOT.md, notices)
// skip hooks and auth; pre_gateway_dispatch (skip, skip with ingest,
// rewrite, allow; the first recognised action wins, a failing hook means
// normal dispatch); auth (allowlists, GATEWAY_ALLOW_ALL_USERS, pairings
// read from the store on every check; unknown DM users get one pairing
// code or nothing, groups nothing; no user id: dropped); a busy chat
// (commands bypass, plain text interrupts or queues); commands
// (command:<name> hooks first); the turn.
//
// Concurrency: each chat (session key) has its own intake goroutine,
// handling its messages in arrival order, and at most one running turn;
// chats never wait for one another, and a slow hook or model delays only
// its own chat. Receive returns at once; the Receipt resolves when the
// message's handling is over and its replies were sent (or, for queued
// messages, when queued; for approval prompts, with awaiting_input). A
// turn's messages are committed to the store before its reply is
// delivered; when the commit fails the answer is withheld, the user is
// told the message could not be saved, and Health (so /healthz) reports
// the store failing until a write succeeds. What is stored as said is
// what was delivered: an answer complete before a newer message
// interrupted its turn is delivered, one cut short (or ended by /stop,
// /new or shutdown) is neither delivered nor stored; the user's message
// and the tool calls that ran are kept. Every agent:start is paired with
// an agent:end, emitted from a defer, with failed/error on failure or
// interruption.
//
// Sessions: session:start fires on the first message of a new, reset or
// expired session only. /new fires on_session_finalize(old), session:end,
// session:reset, on_session_reset(new). The reset policy ends sessions
// idle or past the daily hour: the next message gets a notice (when the
// conversation had something in it), and a sweep every SweepInterval
// fires on_session_finalize for expired idle chats. A running turn's
// session never expires under it: an ingested message or a transcript
// line written meanwhile joins that session. Shutdown fires on_session_finalize (platform "gateway") for each
// running turn, then waits for turns up to ShutdownGrace before
// cancelling them; Run returns only after every goroutine it started has
// ended.
//
// Delivery: split to the adapter's Limits (formatted length when the
// adapter reports one), preferring newlines, closing and reopening code
// fences, " (i/N)" suffixes; rate limits and network errors are retried
// with backoff honouring retry-after, then the user is told delivery
// failed; a refused markup is resent once as plain text. Deliver records
// what it sent in every open session of the target chat (any chat type),
// and returns ErrNotRecorded when it could not. Inbound
// messages are de-duplicated by (platform, chat, message id). Adapters
// that can edit get streamed replies, edited at most once per
// StreamInterval. Adapters and the agent run under recover boundaries.
//
// Adapters: an adapter whose Run returns or panics (the panic is logged)
// is restarted after a jittered wait that doubles from 1 s up to 2
// minutes, and starts from 1 s again after a connection that lasted a
// minute; an adapters.FatalError stops it for good, reported by Health.
package gateway
