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
// naming DISCORD_BOT_TOKEN (except on an interaction's webhook, where it
// is that interaction's token); network failures and 5xx are
// *adapters.TemporaryError; other refusals (400 for more than 2000
// characters, 403 missing permission) are plain errors. Edit skips an edit
// to the text a message already has.
//
// Buttons (adapters.ButtonSender): Outgoing.Buttons are drawn as one
// action row under the message (custom_id = Button.Data; "primary" is
// blurple, "danger" red, anything else grey); CloseButtons edits the text
// and sends an empty components list, which takes them off. A press
// (INTERACTION_CREATE, message component) goes to a Sink that implements
// adapters.PressSink, with the presser Discord names (member.user in a
// guild, user in a DM) and the chat as for a message; it is answered as
// soon as Press returns, with the sink's reply as an ephemeral message (flags 64) or a
// deferred update when the reply is "". A sink without PressSink gets
// NoLongerWorks shown.
//
// Slash commands (adapters.CommandMenu): the catalogue SetCommands gives
// is registered at connect by bulk overwrite, globally or in each of
// Config.CommandGuilds, each command with its description (fitted to 100
// characters) and an optional string option ArgsOption; names Discord
// cannot take are left out. A refusal is logged and tried again at the
// next connect; an unchanged list is not registered again. An invocation
// is answered with a deferred response ("thinking…") as it arrives, on
// the gateway's reading goroutine, so that messages queued before it
// cannot make it miss Discord's 3 s; then, in order with them, it reaches
// the Sink as "/name args" from the invoking user, with Mentioned set; its
// ID is the interaction's. The first reply with that Cause replaces the
// deferred response (PATCH …/messages/@original), later ones are
// follow-ups, and edits and deletes of them (streaming, CloseButtons) go
// through the interaction's webhook, all while its token lives (15
// minutes, less a margin). After that, or once Discord refuses the token,
// replies are channel messages and edits use the channel endpoint. When
// the turn ends with nothing sent, the response is set to DoneText (a
// queued command, or one waiting for an approval, is left for the reply
// still to come).
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
// or gateway close codes 4004/4013/4014, are fatal. Config.ShardID and
// ShardCount make the connection one shard of the bot (one per replica);
// a shard outside 0 <= id < count is fatal before anything connects. Each handshake is
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
