// Package discord is herald's Discord platform, built on discordgo: a
// gateway connection for inbound messages and REST for sends, edits and
// the typing indicator. It only translates; deduplication, auth,
// splitting and retries are the gateway's.
//
// Inbound: MESSAGE_CREATE becomes a herald.Message whose ID is Discord's
// message id (so a message replayed after a RESUME is dropped by the
// gateway's dedup). A message with no guild is a DM; a guild channel is a
// group (an announcement channel a channel); a thread keeps its parent as
// the chat and itself as Source.ThreadID. Mentioned is set when the bot is
// mentioned or the message replies to one of the bot's; the mention is
// cut from the text (and /cmd@the_bot's_name reads as /cmd). A guild
// member's role ids are Message.UserRoles. The bot's own messages are dropped, as are other
// bots' unless Config.AllowBots lets them in. Messages reach the Sink one at a time, in
// gateway order. Each attachment becomes a herald.Media (kind from the
// content type, or the file name when Discord sent none; a voice message,
// flagged IS_VOICE_MESSAGE or carrying duration_secs/waveform, is voice,
// other audio is audio; Ref is the attachment id); a message with
// attachments and no text arrives with empty text.
//
// Outbound: a target's ThreadID, when set, is the channel written to.
// Replies may mention users but never @everyone, @here or roles. Errors:
// a 429 is *adapters.RetryAfterError with Discord's retry_after (the
// library's own unbounded retry is off); a 401 is *adapters.FatalError
// naming DISCORD_BOT_TOKEN; network failures and 5xx are
// *adapters.TemporaryError; other refusals (400 for more than 2000
// characters, 403 missing permission) are plain errors. Edit skips an edit
// to the text a message already has.
//
// Media: Fetch (adapters.Fetcher) downloads an attachment from Discord's
// CDN only (Config.MediaHosts over https, plus the API base's host when
// it is not Discord's), sends no credentials, re-checks every redirect,
// and fails past Config.FetchLimit rather than truncating. SendFile
// (adapters.FileSender) uploads one file with its caption as the text,
// as a reply when asked; a caption over 2000 characters follows the file
// as text messages. MaxFileSize is Config.MaxUpload (10 MiB by default).
// Downloads and uploads are bounded by Config.MediaTimeout.
//
// Run: the token is checked (GET /users/@me) before the gateway; 401/403,
// or gateway close codes 4004/4013/4014, are fatal. Each handshake is
// bounded by Config.OpenTimeout: discordgo's Open takes no context and can
// hang — when the socket under it is closed and it still does not return
// (discordgo#513, op 7 during the handshake), that session is abandoned
// with its one blocked goroutine, which nothing can end, and a new session
// identifies. A dropped connection resumes the session; failed connects
// are retried with capped, jittered exponential backoff. Run returns nil
// when ctx ends, after closing the connection (discordgo spends 1 s in
// Close), and the goroutines it started have ended.
//
// Config.APIBase points REST and gateway discovery elsewhere (a
// self-hosted proxy, or discordtest's fake in tests); discordgo's endpoint
// URLs are fixed at init, so requests are rewritten in the transport.
package discord
