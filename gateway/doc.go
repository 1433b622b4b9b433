// Package gateway is the Runner: it runs every adapter, takes each inbound
// message through dispatch (pre_gateway_dispatch, auth, busy chats,
// commands), runs agent turns, and delivers what comes out through one
// delivery path (format, split, retry, transcript). It implements
// herald.Deliverer, herald.Replier and herald.TranscriptAppender, and the
// adapters' Sink.
//
// Concurrency: each chat (session key) has its own intake, handled in
// arrival order, and at most one running turn; chats never wait for one
// another. Receive returns at once. A message and its reply are committed
// to the store before the reply is delivered. Every agent:start is paired
// with an agent:end, emitted from a defer, with failed/error on failure.
//
// Adapters run under a recover boundary; one that fails is restarted with
// capped backoff unless its error is fatal, and never stops the others.
package gateway
