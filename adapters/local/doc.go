// Package local is the built-in HTTP platform: a JSON API and the web
// console on 127.0.0.1, so herald can be tried, scripted and tested with
// no bot token.
//
//	POST /v1/messages   send a message; waits (?wait= seconds, default 60,
//	                    at most 600) for the turn it starts or joins and
//	                    returns the replies it caused
//	GET  /v1/chats/{chat_id}/messages
//	                    the chat's outbox: what the gateway sent it, oldest
//	                    first (?after=<id>, ?wait= up to MaxMessagesWait)
//	GET  /v1/events     Server-Sent Events: every hook point as it fires,
//	                    in the directory-hook form {"event_type","context"},
//	                    "message" {"chat_id","id","text"} for each
//	                    message stored in an outbox, and
//	                    "message_update" for each edit of one (a streamed
//	                    reply growing, stream.go; a closed prompt)
//	GET  /v1/files/{id} a file the gateway sent (returned with the replies
//	                    as {"text", "file": {"id","name","mime","size","url"}})
//	GET  /healthz       each platform's state, the store's, and delivery counters
//	GET  /              the web console (console/index.html; its other
//	                    files under /console/, console.go)
//
// Every /v1/ call needs "Authorization: Bearer <token>" (the token is in
// $HERALD_HOME/local.token). Requests whose Host is not a loopback name (or
// one of platforms.local.allowed_hosts) are refused with 403, so a web page
// cannot drive the agent by DNS rebinding.
//
// A message may carry attachments, "media": [{"name","mime","data"}] with
// the bytes in base64, checked against Config.MaxUpload before they are
// decoded and held until the gateway fetches them (docs/media.md).
//
// A message body is one JSON object; ids (chat_id, user_id, thread_id,
// message_id) are at most 256 bytes. Replies are matched to the request by
// chat and message id: a message_id in flight for another chat is refused
// with 409, and a message without one gets a random id. An events client
// that falls more than EventBuffer bytes behind is disconnected; when it
// reconnects with Last-Event-ID, the stream's first event is "dropped",
// with the number of events it missed. The listener has the limits every
// herald listener shares (adapters.HTTPLimits): header, body and idle
// timeouts, header and body size, and a connection cap.
//
// With Config.Outbox set, Send and SendFile store the message before they
// return, and fail if it cannot be stored: nothing is reported sent to a
// local chat unless GET /v1/chats/{chat_id}/messages can return it, whether
// or not a request was waiting for it. Outbox ids grow within a chat, and a
// waiting GET is woken by the next message to its chat (docs/api.md).
package local
