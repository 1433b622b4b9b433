// Package adapters defines what a platform connector is: an Adapter that
// runs until its context ends, hands inbound messages to a Sink and sends
// what the gateway gives it. Adapters only translate. Dedup, auth,
// formatting and splitting, retries, rate limits and per-chat queues live
// once, in the gateway.
//
// Optional capabilities (editing or deleting a sent message, a typing
// indicator, a health state, a command menu, the platform's per-chat
// pace) are separate interfaces found by type assertion. The gateway's
// Sink has one too: ChatMover, for a chat that changed its id (a
// Telegram group upgraded to a supergroup).
//
// Errors from Send tell the gateway what to do: *RetryAfterError (a rate
// limit: hold the chat that long, then retry), *TemporaryError (network:
// retry with backoff), *MaybeSentError (no answer after the request went
// out: do not send again), *FatalError (bad token: stop this adapter),
// anything else (the platform refused this message: try plain text, then
// give up).
//
// Every HTTP listener an adapter opens (the local API, the Telegram
// webhook, the Slack Events API) is served by ServeHTTP under HTTPLimits:
// header, body and idle timeouts, header and body size caps, and a cap on
// connections open at once, so no client can hold the listener's file
// descriptors or memory.
package adapters
