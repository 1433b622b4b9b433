// Package telegramtest is a fake Telegram Bot API server for tests. It
// listens on 127.0.0.1 and speaks the small part of the Bot API a bot
// needs — getMe, getUpdates (long polling), sendMessage, editMessageText,
// sendChatAction, setWebhook and deleteWebhook, setMyCommands, getFile and the file
// endpoint, and the uploads sendPhoto, sendDocument, sendVoice, sendAudio
// and sendVideo — with the JSON envelopes
// real Telegram uses, so the real client library (and herald's telegram
// adapter) runs against it unchanged. Users of herald can point their
// gateway at it to test their own hooks with no network and no token.
//
//	srv := telegramtest.New(telegramtest.Options{})
//	defer srv.Close()
//	// platforms.telegram.api_endpoint: srv.Endpoint(), token: srv.Token()
//	srv.DM(42, "alice", "hello")
//	calls, err := srv.WaitCalls(ctx, "sendMessage", 1)
//
// Inbound: DM, GroupMessage, Mention, Topic and AddUpdate queue updates;
// update ids increase by one from 1. getUpdates honours offset (an offset
// confirms, and forgets, every update below it, as Telegram does), limit
// and timeout, and returns early when the request's context ends.
//
// Files: AddFile stores bytes under a file_path and returns the file_id;
// DMMedia queues a message carrying it (a photo, voice note, document, …,
// shaped as Telegram shapes each kind, with an optional caption).
// getFile describes a stored file (400 "file is too big" over 20 MB, as
// AddLargeFile can show) and GET /file/bot<token>/<file_path> serves its
// bytes; a wrong token there is a 404, as on Telegram. Downloads are
// counted, failed and dropped under the method name "download".
//
// Uploads: sendPhoto, sendDocument, sendVoice, sendAudio and sendVideo
// take a multipart part named after the method ("photo", …); each is
// recorded as a Call with its chat, thread, caption, parse mode, reply,
// file name and bytes. Captions get Telegram's checks with a 1024-unit
// limit; a photo whose dimensions Telegram refuses (width + height over
// 10000, or a ratio over 20) or that is no image gets its 400.
//
// Outbound: every successful sendMessage, editMessageText and
// sendChatAction is recorded in arrival order as a Call with its chat,
// thread, parse mode and text; Calls and WaitCalls read them. Requests
// that failed (injected or refused) are counted by Attempts but not
// recorded as calls.
//
// Faults: Fail makes the next n requests of a method answer with an error
// envelope (429 with retry_after, 401, a 400 about entities, …); Drop makes
// the next n requests of a method lose their connection with no answer;
// CloseConnections cuts every open connection, after any answer being
// written, so a call seen recorded is never cut off. A request whose
// token is not the server's is answered 401 Unauthorized, as Telegram
// does.
//
// The fake checks what Telegram checks and tests trip over: empty text,
// more than 4096 UTF-16 units after entity parsing, unbalanced or unknown
// HTML tags with parse_mode=HTML, and editing a message to identical text
// ("message is not modified"). It tolerates entities=null, which the
// library sends when a message has no entities.
//
// A chat's life: SetWebhook leaves a webhook set as another deployment
// would, so getUpdates answers 409 until deleteWebhook (recorded as a
// Call); setMyCommands stores the menu per scope type, read by Commands,
// with Telegram's checks on names and descriptions; DeleteTopic makes
// requests naming a forum topic answer 400 "message thread not found";
// MigrateGroup upgrades a group to a supergroup, queueing both service
// messages (migrate_to_chat_id, migrate_from_chat_id) and answering
// requests to the old id with 400 and migrate_to_chat_id.
//
// Buttons: sendMessage and editMessageText take an inline keyboard
// (reply_markup), checked as Telegram checks it (callback_data of 1 to 64
// bytes, button text), recorded as Call.Keyboard and kept per message
// (Keyboard); an edit with no keyboard or an empty one takes it away, and
// an edit that changes only the keyboard is a change. PressButton queues
// the callback_query a press makes (PressUpdate builds it for a webhook);
// answerCallbackQuery is recorded with the query's id and text, and
// refused for a query answered already or never made. getUpdates honours
// allowed_updates (AllowedUpdates reads the last one asked for).
//
// All methods are safe for concurrent use.
package telegramtest
