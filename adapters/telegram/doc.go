// Package telegram connects herald to Telegram through
// github.com/go-telegram-bot-api/telegram-bot-api/v5 (v5.5.1). It only
// translates: updates become herald.Messages for the gateway's Sink, and
// the gateway's Outgoing messages become sendMessage calls. Splitting,
// retries, dedup and auth are the gateway's.
//
// Receiving. Run checks the token with getMe, then either long-polls
// getUpdates in its own loop (the library's GetUpdatesChan cannot stop
// early) or, with Config.WebhookListen set, serves a webhook that accepts
// only requests carrying the X-Telegram-Bot-Api-Secret-Token header
// (compared in constant time; 401 otherwise). Every request carries the
// caller's context, so a held poll ends as soon as Run's context does.
//
// Offsets. An update is confirmed to Telegram (the next getUpdates offset
// moves past it) and its offset stored in state.db only after the Sink
// accepted it, one update at a time in update_id order; on start Run polls
// from the stored offset. The gateway accepts a message only once it is
// stored in its inbound journal, and hands what a crash left unfinished
// to dispatch again at its next start. A restart therefore neither replays
// an update the gateway took nor loses one, even one whose turn a crash
// cut short: updates fetched but not yet handed over when Run stops are
// fetched again. If the gateway refuses an update (it is shutting down,
// or could not store it), polling pauses without moving past it. In
// webhook mode Telegram keeps retrying until it gets a 2xx, which is sent
// only once the Sink accepted the update (503 when refused).
//
// Messages. Private chats are herald.ChatDM, groups and supergroups
// herald.ChatGroup, channels herald.ChatChannel. In groups Mentioned is set
// when a mention entity names the bot, a text_mention points at it, the
// text contains its @username, or the message replies to one of its
// messages. v5.5.1 predates forum topics, so message_thread_id,
// is_topic_message and is_forum are read from the raw update: a topic
// message's thread becomes Source.ThreadID, and replies to that target go
// back into the topic.
//
// Sending. Text is the model's Markdown, converted to Telegram's HTML
// subset (parse_mode=HTML); Outgoing.Plain sends it as it is. Errors tell
// the gateway what to do and never carry the token (request URLs are
// stripped from them): 429 → *adapters.RetryAfterError with Telegram's
// retry_after; 401/404 → *adapters.FatalError naming TELEGRAM_BOT_TOKEN;
// network failures, 5xx and unreadable answers → *adapters.TemporaryError;
// any other refusal (a 400 about entities, say) is a plain error, which
// the gateway answers by resending as plain text. Send never retries by
// itself. Edit skips edits to identical text and treats "message is not
// modified" as success; it falls back to plain text on its own, because an
// edit has no Plain flag. Typing sends sendChatAction "typing".
//
// Failure. Network loss while polling is retried inside Run with capped
// exponential backoff and jitter (Health says "reconnecting"); a refused
// token ends Run with a *adapters.FatalError.
//
// Concurrency. Send, Edit, Typing and Health may be called from any
// goroutine, before, during or after Run. Run must not be called twice at
// the same time.
package telegram
