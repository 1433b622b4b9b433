// Package whatsapp connects herald to the WhatsApp Business Cloud API (the
// Graph API's /{phone-number-id}/messages and /media endpoints, and the
// webhook Meta posts to). It only translates: dedup, auth, splitting,
// pacing and retries are the gateway's.
//
// Inbound: the webhook is served at WebhookPath on the shared inbound
// listener. A GET is Meta's verification handshake (hub.mode=subscribe
// and hub.verify_token, compared in constant time, answered with
// hub.challenge; anything else is 403). A POST must carry
// X-Hub-Signature-256, the HMAC-SHA256 of the raw body under the app
// secret, compared in constant time; a missing or wrong one is 401 and
// nothing in the body is read further. Messages (text, image, audio,
// voice, video, document, sticker, location, template quick replies)
// become herald.Messages in a DM whose chat and user are the sender's
// wa_id and whose ID is the platform's message id (wamid), so a payload
// Meta delivers again is dropped by the gateway's dedup. Media carry the
// media id as Ref; Fetch asks the Graph API for its URL and downloads it
// with the access token. Interactive replies (button_reply, list_reply)
// are presses for the sink's adapters.PressSink. Statuses (sent,
// delivered, read, failed) are ignored. The POST is answered 200 once
// every message in it was taken, 503 when the gateway refused one (Meta
// then delivers the payload again).
//
// Outbound: text up to 4096 characters, its Markdown turned into
// WhatsApp's markup (format.go), files uploaded to /media then
// sent by id (FileSender), and buttons: up to three as reply buttons,
// more (an approval prompt's four) as one list message whose rows are the
// choices; either way the text keeps its typed instructions. WhatsApp
// cannot edit a message or take its buttons away, so CloseButtons sends
// nothing: the presser is answered with a message of its own, and a later
// press of a closed prompt answers that it no longer waits.
//
// Typing marks the user's last message read with the typing indicator
// (the only form the Cloud API has), renewed at most every 20 seconds.
//
// The 24-hour customer-service window: a business may send free-form
// messages to a user only within 24 hours of that user's last message.
// The adapter remembers each user's last inbound time (in the store when
// one is configured, so a restart keeps it) and refuses a send outside
// the window with a *WindowError naming it, as it does when the Graph API
// answers error 131047; nothing is dropped silently.
//
// Errors: HTTP 429 and Graph's throughput codes (4, 80007, 130429,
// 131056) are *adapters.RetryAfterError (Retry-After when given), a
// refused token (401, code 190) is *adapters.FatalError naming
// WHATSAPP_ACCESS_TOKEN, 5xx and network failures are
// *adapters.TemporaryError. The access token and app secret never reach
// a log or an error.
package whatsapp
