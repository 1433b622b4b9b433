// Package gateway is the Runner: it runs every adapter, takes each inbound
// message through dispatch, runs agent turns, and delivers what comes out
// through one delivery path. It implements adapters.Sink, herald.Deliverer,
// herald.Replier and herald.TranscriptAppender, agent.Approver for
// chats, and adapters.PressSink for approval buttons (press.go: Press
// never waits on a turn).
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
// Inbound journal: Receive stores every platform message (not internal
// ones) in state.db before it returns — one commit's time, never a turn's
// — so an adapter that acknowledges a message once Receive returned
// (Telegram's offset and webhook answer, Slack's envelope ack and Events
// API answer, the local API) acknowledges only what is stored. A message
// that cannot be stored is refused (the receipt resolves skipped with an
// error, adapters.Refused) and the user is told it was not saved. The
// journal is the dedup: a (platform, chat, message id) already in it is
// skipped, also after a restart. A row is finished when its receipt
// resolves (a queued or approval-waiting message: when its chat next goes
// idle); rows a crash left unfinished are handed to dispatch when Run
// starts, before any adapter runs, once (a row unfinished after its
// replay is given up, logged). Messages refused at shutdown keep their
// rows for the next start. The sweep prunes finished rows older than 7
// days and beyond the newest 100,000.
//
// Concurrency: each chat (session key) has its own intake goroutine,
// handling its messages in arrival order, and at most one running turn;
// chats never wait for one another, and a slow hook or model delays only
// its own chat. Receive never waits for a turn; the Receipt resolves when
// the message's handling is over and its replies were sent (or, for
// queued messages, when queued; for approval prompts, with
// awaiting_input). Every receipt resolves, also at shutdown. A turn's
// messages are committed to the store before its reply is delivered;
// when the commit fails the answer is withheld, the user is told the
// message could not be saved, and Health (so /healthz) reports the store
// failing until a write succeeds. What is stored as said is what was
// delivered: an answer complete before a newer message interrupted its
// turn is delivered, one cut short (or ended by /stop, /new or shutdown)
// is neither delivered nor stored; the user's message and the tool calls
// that ran are kept.
//
// Bounds: per chat, at most MaxQueue messages wait for the intake and
// MaxQueue turns queue behind the running one; over that the user is
// told the message was not taken. A chat left with nothing (a stranger
// refused by auth) is freed when its intake ends, and the sweep frees
// idle chats — no open session, or none used for 24 hours (a chat owing
// a reset notice: 7 days) — never one with a running turn or pending
// work; a freed chat's next message reloads its session from the store.
// Every agent:start is paired with an agent:end, emitted from a defer,
// with failed/error on failure or interruption.
//
// Sessions: session:start fires on the first message of a new, reset or
// expired session only. Each turn tells the agent why its session starts
// (Claude Code's SessionStart source): startup for a new session, clear
// after /new, resume for a session read from the store that this chat has
// not run a turn on yet (after a restart, or once an idle chat was freed);
// /new's on_session_finalize carries SessionEnd's reason clear, the
// others other. The sweep also deletes session transcripts not written
// for 30 days. /new fires on_session_finalize(old), session:end,
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
// fences, " (i/N)" suffixes; sends and edits are paced per chat
// (adapters.Pacer) and a retry-after closes the chat to both until it has
// passed (pace.go); rate limits and network errors are retried with
// backoff, then the user is told delivery failed (paced, once a minute
// per chat at most); a retry-after beyond the retry cap queues the rest
// in the store, delivered after it, also after a restart (outbox.go); a
// send that timed out after it was written is not repeated; a refused
// markup is resent once as plain text. Deliver records
// what it sent in every open session of the target chat (any chat type),
// and returns ErrNotRecorded when it could not. Inbound messages are
// de-duplicated by (platform, chat, message id) through the journal.
// Adapters
// that can edit get streamed replies, edited at most once per
// StreamInterval. Adapters and the agent run under recover boundaries.
//
// Replicas: with a Config.Coordinator (package replica, PostgreSQL) the
// journal's part is the database's: Receive claims the message id and
// queues the message in its chat's queue there before it returns (a
// duplicate on any replica is skipped), and the replica holding the
// chat's lease takes the queue in order into the chat's intake; a replica
// that does not hold it wakes the one that does and resolves its receipt
// queued. A queued message is dispatched only after the lease is checked
// (refused messages go back to the queue), leaves the queue when its
// handling (or its turn) ends, and the lease is given up when the chat is
// idle with nothing queued. An approval can be answered by a button on
// another replica. Internal messages stay on the replica they were made
// on (replicas.go).
//
// Adapters: an adapter whose Run returns or panics (the panic is logged)
// is restarted after a jittered wait that doubles from 1 s up to 2
// minutes, and starts from 1 s again after a connection that lasted a
// minute; an adapters.FatalError stops it for good, reported by Health.
package gateway
