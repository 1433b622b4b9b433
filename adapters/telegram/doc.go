// Package telegram connects herald to Telegram through
// github.com/go-telegram-bot-api/telegram-bot-api/v5 (v5.5.1). It only
// translates: updates become herald.Messages for the gateway's Sink, and
// the gateway's Outgoing messages become sendMessage calls. Splitting,
// retries, dedup and auth are the gateway's.
//
// Receiving. Run checks the token with getMe, then either long-polls
// getUpdates in its own loop (the library's GetUpdatesChan cannot stop
// early) or, with Config.WebhookURL or WebhookListen set, serves a webhook
// (on the shared inbound listener, or a listener of its own) that accepts
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
// messages; a command addressed to it (/cmd@its_username) arrives as /cmd
// and counts as a mention, one for another bot is left as it is. v5.5.1 predates forum topics, so message_thread_id,
// is_topic_message and is_forum are read from the raw update: a topic
// message's thread becomes Source.ThreadID, and replies to that target go
// back into the topic.
//
// Media. A photo (its largest size), voice note, audio file, video, video
// note, animation, document or static sticker becomes one herald.Media
// with its kind, MIME type, file name (the sender's, or photo.jpg,
// voice.ogg, … when Telegram gives none), declared size and file_id as
// Ref; the caption is the text, and a message with media and no caption
// is passed on with empty text. Animated and video stickers are left out.
// An album arrives as one message per item, as Telegram sends it: they
// are not merged, since each update is confirmed on its own. Fetch (an
// adapters.Fetcher) downloads the bytes: getFile, then GET
// <base>/file/bot<token>/<file_path>, where <base> is Config.APIEndpoint
// without its "bot%s/%s" tail. That URL holds the token, so it is never
// stored, logged or put in an error (errors name the file_id). Files
// over 20 MB, which the Bot API does not let bots download, fail with
// ErrTooLarge, before any request when the update declared the size.
//
// Sending files. SendFile (an adapters.FileSender) uploads by kind: image
// → sendPhoto (sendDocument for a GIF, a photo over 10 MB, or one
// Telegram refuses), voice → sendVoice (sendDocument when the user takes
// no voice messages), audio → sendAudio, video → sendVideo, anything else
// → sendDocument, into the target's chat and forum topic, as a reply
// when asked. The caption is formatted as text is
// and resent plain when Telegram refuses its markup; a caption over 1024
// UTF-16 units goes after the file as a message of its own. Files over
// 50 MB fail with ErrTooLarge before any request; 429 is an
// *adapters.RetryAfterError as for text.
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
// Native behaviour. Polling mode sends deleteWebhook before the first
// getUpdates (a webhook left set answers every poll with 409). The
// command catalogue the gateway gives through adapters.CommandMenu is set
// with setMyCommands after getMe, for the default, all_private_chats and
// all_group_chats scopes (menu.go); a refusal is logged and retried at
// the next Run. A send, upload or typing aimed at a forum topic Telegram
// says is gone is made once more without the topic; one aimed at a group
// that became a supergroup is made once more there, and the move is
// remembered for later sends and edits. The service messages of such an
// upgrade are reported to the Sink when it is an adapters.ChatMover (the
// gateway moves the chat's sessions); an update whose move failed is not
// confirmed (migrate.go).
//
// Buttons (buttons.go). Outgoing.Buttons go out as one row of an inline
// keyboard (reply_markup; each button's Data as its callback_data;
// Telegram has no button colours, so Style is not drawn). CloseButtons
// (adapters.ButtonSender) is an editMessageText with the new text and an
// empty inline keyboard. getUpdates and setWebhook ask for message,
// channel_post and callback_query updates; a callback_query is a press:
// when the Sink is an adapters.PressSink it gets an adapters.Press (the
// presser from callback_query.from, the chat from the message the button
// is under, its forum topic as for messages), and the query is always
// answered with answerCallbackQuery, with Press's text (cut to 200
// characters) or, for a Sink that takes no presses or a message Telegram
// does not name, NoPressText, so the presser's client stops waiting.
//
// Failure. Network loss while polling is retried inside Run with capped
// exponential backoff and jitter (Health says "reconnecting"); a refused
// token ends Run with a *adapters.FatalError.
//
// Concurrency. Send, SendFile, Fetch, Edit, CloseButtons, Typing and Health may be
// called from any goroutine, before, during or after Run. Run must not be
// called twice at the same time.
package telegram
