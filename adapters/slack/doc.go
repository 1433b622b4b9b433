// Package slack connects herald to Slack through github.com/slack-go/slack:
// Socket Mode (the default, an outbound websocket, no public URL) or the
// Events API over HTTP (mode "events", requests verified with the signing
// secret). It only translates: dedup, auth, splitting and retries are the
// gateway's.
//
// Inbound: "message" events (DMs, channels, private channels, group DMs)
// and "app_mention" become herald.Messages whose ID is Slack's ts, so a
// re-delivered event and the message/app_mention pair Slack sends for one
// mention are dropped by the gateway's dedup. Bot messages and edits,
// deletes and other subtypes are ignored. Mentions of the bot are removed
// from the text. A thread's ts is the Source's ThreadID; a top-level
// channel message gets its own ts as ThreadID, so the reply (and the
// session) lives in a thread under it. DMs are answered in place.
//
// Files: the files on a message (subtype file_share, or files on an
// ordinary message or app_mention) become herald.Media (kind from the
// MIME type; Slack's audio clips are voice), with url_private_download as
// URL and the file id as Ref; the text, possibly empty, stays the text.
// Fetch reads them with the bot token, which it sends only to Slack's
// file host (Config.FilesURL) or the Web API's host, never to a URL
// elsewhere or across a redirect; a token that cannot read the file gets
// Slack's sign-in page, which Fetch reports as an error naming the file
// and the files:read scope. SendFile uploads with files.uploadV2's three
// steps into the target's channel and thread, the caption in mrkdwn as
// its initial comment.
//
// Socket Mode: an envelope is acknowledged once its event was handed to
// the Sink and the Sink took it (the gateway stores it first, one commit's
// time, well inside the 3 s after which Slack re-sends envelopes not
// acked); one the Sink refused (it could not store it, or it is shutting
// down) is not acked, so Slack re-sends it. The events channel is always
// drained. A disconnect request or a dropped socket reconnects inside Run
// with slack-go's capped backoff. Events API: once the signature is
// checked the event is handed on, and the request is answered 200 when
// the Sink took it, 503 when it refused it (Slack retries); bad or stale
// signatures get 401.
//
// Threads: the threads the bot posted in are remembered (Config.Threads,
// state.db's kv table, so across restarts; expiring after ThreadTTL,
// bounded by MaxThreads), and a reply in one counts as a mention; a
// thread this process does not know is looked up in the store, so with
// several replicas on one store a reply counts wherever it arrives. A
// message addressed to the bot in a thread this process has not seen
// carries the thread's earlier messages, those after the bot's last post
// there, bounded, in ThreadContext (read with conversations.replies before
// the event is acknowledged, within 2 s; a failed read only loses them).
//
// Feedback (through the shared tracker, adapters.Reactions): Typing
// (called by the gateway while a turn runs) sets the thread's status with
// assistant.threads.setStatus on the oldest message in work in that chat
// and thread, renewed every 90 s, or, when the app cannot (remembered),
// puts :eyes: on the message; both are taken down when the message's
// Receipt resolves. Config.Reactions adds :eyes: while a turn runs and
// :white_check_mark: or :x: after it. Run waits for this clean-up.
//
// Outbound: chat.postMessage in mrkdwn (Markdown is converted), plain text
// with mrkdwn=false when Outgoing.Plain is set; chat.update for edits,
// skipping an edit that would not change the text. Errors map to the
// adapters types: a 429 is a *RetryAfterError, a refused token a
// *FatalError naming SLACK_BOT_TOKEN or SLACK_APP_TOKEN, a network failure
// a *TemporaryError, anything else (msg_too_long, channel_not_found) a
// plain error.
//
// Buttons (adapters.ButtonSender): an Outgoing with Buttons is posted
// with Block Kit blocks, the formatted text in mrkdwn sections of at most
// 3000 characters (a ``` block cut between two is closed and reopened)
// and the buttons in an actions block under them (value = Button.Data,
// action ids herald_button_0…, style primary or danger); the text itself
// stays the notification's fallback. CloseButtons is a chat.update with
// the new text in sections and no actions block. A press (block_actions)
// arrives over Socket Mode as an "interactive" envelope, acknowledged at
// once, or at the Events API receiver as a signed form (field payload),
// answered 200 at once; a bad signature gets 401 and goes nowhere. The
// press goes to the Sink when it implements adapters.PressSink, with the
// presser, channel, thread and message ts Slack reports and the button's
// value, in the order pressed; its reply (none when "") is shown to the
// presser alone with chat.postEphemeral, in the thread. A Sink without
// PressSink gets every press answered "This button no longer works."
// Other interactions (menus, modals, shortcuts) are acknowledged and
// ignored.
//
// Run returns nil when ctx ends, a *FatalError for a missing or refused
// token, and a *TemporaryError when Slack cannot be reached (the gateway
// restarts it). Send and Edit are safe to call from many goroutines.
package slack
