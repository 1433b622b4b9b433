// Package discordtest is a fake Discord for tests: a REST API and a
// websocket gateway on 127.0.0.1 that the real discordgo client connects
// to. herald's own tests use it, and so can anyone testing hooks or
// plugins against herald's Discord adapter.
//
//	srv := discordtest.New()
//	defer srv.Close()
//	// point the adapter (or discordgo) at srv.APIBase()
//	srv.Inject(srv.DM("42", "alice", "hello"))
//	sent, err := srv.WaitSent(ctx, 1)
//
// What it speaks:
//
//	GET   /api/v9/gateway                      {"url": ws URL of this server}
//	GET   /api/v9/gateway/bot                  the same, with shards and session limits
//	GET   /api/v9/users/@me                    the bot user (BotID, BotName)
//	GET   /api/v9/channels/{id}                channels added with AddChannel, else 404
//	POST  /api/v9/channels/{id}/messages       recorded in order (Sent); 400 above 2000 characters;
//	                                           multipart uploads (payload_json + files[n]) recorded
//	                                           with their files (Message.Files), 413 (code 40005)
//	                                           past SetUploadLimit (10 MiB by default)
//	PATCH /api/v9/channels/{id}/messages/{mid} recorded (Edits)
//	DELETE /api/v9/channels/{id}/messages/{mid} recorded (Deleted); 204
//	POST  /api/v9/channels/{id}/typing         counted (Typing); 204
//	GET   /attachments/{channel}/{id}/{name}   attachments added with AddAttachment (or uploaded),
//	                                           as Discord's CDN serves them; counted (Downloads)
//	POST  /api/v9/interactions/{id}/{token}/callback
//	                                           the answer to an injected interaction (Interaction):
//	                                           one only (400 code 40060 after), type 4/5 create the
//	                                           original response, 6/7 only for a button press
//	PATCH /api/v9/webhooks/{app}/{token}/messages/{mid}
//	                                           edits "@original" or a follow-up (Edits, Webhook set)
//	POST  /api/v9/webhooks/{app}/{token}       a follow-up (?wait=true answers the message)
//	DELETE /api/v9/webhooks/{app}/{token}/messages/{mid}
//	PUT   /api/v9/applications/{app}/commands  bulk overwrite of the application commands
//	PUT   /api/v9/applications/{app}/guilds/{guild}/commands
//	                                           (CommandSets); names, descriptions and options
//	                                           checked against Discord's rules (400 code 50035)
//
// and a gateway that sends HELLO, answers IDENTIFY with READY (carrying
// the bot user), RESUME with RESUMED followed by the events the client
// missed, and heartbeats with ACKs.
//
// Inbound messages: Inject dispatches a MESSAGE_CREATE. Events injected
// while no client is connected are kept and sent, in order, once one is
// (after READY or RESUMED). Each event is sent once per connection, in
// Inject order.
//
// Components: a message's components (buttons in action rows) are
// checked against Discord's limits and kept as sent (Message.Components,
// Buttons); an edit without components keeps them, an empty list removes
// them.
//
// Interactions: SlashCommand and ButtonPress build an interaction in
// Discord's shape (the user as member.user in a guild, user in a DM);
// InjectInteraction dispatches it as INTERACTION_CREATE, like Inject. The
// callback, the original response and the follow-ups are recorded per
// interaction (Interaction, WaitInteraction); their messages are not in
// Sent, which holds channel messages only, but Message and WaitMessage
// read them. Webhook calls need the interaction's token and AppID (the
// application READY names), not the bot token; ExpireInteraction makes
// the token stop working (401 code 50027), as 15 minutes do. Command
// registration needs AppID too (403 otherwise); FailCommands makes the
// next ones fail.
//
// Attachments: AddAttachment serves bytes on the fake's own host and
// returns the attachment to set on an injected message; VoiceMessage
// builds a voice message (the IS_VOICE_MESSAGE flag, an audio/ogg
// attachment with duration_secs and waveform, which Inject adds to the
// JSON since discordgo's struct has no field for them); MovedAttachment
// answers with a redirect; ChunkedDownloads leaves Content-Length out of
// downloads and StallDownloads stops them after the first kilobyte;
// Downloads counts them, and those that carried credentials.
//
// Failures on demand: RateLimitSends makes the next n message sends answer
// 429 with retry_after; RejectSends makes them answer another status (401,
// 403, 500…); RequireToken makes every REST call and IDENTIFY with another
// token fail (401, and close code 4004 on the gateway); Drop closes the
// socket so the client RESUMEs, optionally replaying already delivered
// events to test deduplication; RefuseConnections turns the next
// websocket handshakes away with 503; ReconnectDuringHandshake answers the next
// IDENTIFY with op 7 instead of READY (the handshake that deadlocks
// discordgo's Open).
//
// Concurrency: every method is safe for concurrent use; writes to a
// websocket are serialised. Wait* methods block until their condition
// holds or ctx ends; nothing needs a sleep. Close stops the server and
// waits for its goroutines.
package discordtest
