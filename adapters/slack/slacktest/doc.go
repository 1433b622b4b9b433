// Package slacktest is a fake Slack for tests: the Web API methods a bot
// uses (auth.test, apps.connections.open, chat.postMessage, chat.update,
// files.getUploadURLExternal, files.completeUploadExternal), the file
// host (url_private, served only to the bot token; anything else is
// redirected to a 200 HTML sign-in page, as Slack does), the upload URL,
// and the Socket Mode websocket (hello, events_api envelopes with
// envelope_id, acks, server pings, disconnect), on 127.0.0.1. The real
// slack-go client connects to it with slack.OptionAPIURL(srv.APIURL()).
//
// A test injects inbound events (DM, channel mention, thread reply, file
// share, any raw event), adds files and reads which requests fetched them
// with which Authorization, reads what the bot posted and uploaded
// (channel, thread_ts, initial_comment, name, bytes) in order, makes the next posts
// fail (429 with Retry-After, or an API error such as invalid_auth),
// drops or disconnects the websocket, re-delivers an envelope, and checks
// that every envelope was acknowledged in time. It keeps each channel's
// history (injected messages, the bot's posts, and messages added with
// AddMessage as if the bot had missed them) and serves it through
// conversations.replies; it records assistant.threads.setStatus calls and
// the bot's reactions (reactions.add/remove, answering already_reacted
// and no_reaction as Slack does). Sign builds the signature
// headers of an Events API request.
//
// Buttons: the Block Kit blocks of chat.postMessage, chat.postEphemeral
// and chat.update are recorded (Post.Blocks), and refused with
// invalid_blocks where Slack's documented limits refuse them (3000
// characters in a section, 25 elements in an actions block, distinct
// action ids, …); Shown is a message as it shows after its updates. A
// test presses a button by its label: PressPayload builds Slack's
// block_actions payload, PressButton sends it over Socket Mode in an
// "interactive" envelope, InteractiveForm is the signed form body Slack
// posts to an Interactivity Request URL.
//
// Envelopes injected while no client is connected are queued and sent,
// in order, when one connects; as with Slack, envelopes a connection took
// but never acknowledged are sent again (retry_attempt > 0) on the next. Every method is safe for concurrent use;
// Wait* methods block until their condition holds or ctx ends. The fake
// never checks scopes or rate limits unless told to fail.
//
// Users of herald can drive their own hooks through a real gateway with
// it; slack-go's own slacktest speaks the legacy RTM protocol and cannot
// drive Socket Mode.
package slacktest
