// Package matrix connects herald to a Matrix homeserver through the
// client-server API (maunium.net/go/mautrix as the client). It only
// translates: dedup, auth, splitting, pacing and retries are the
// gateway's.
//
// Login: an access token (checked with whoami), or a user id and
// password (m.login.password), reusing one device across restarts (the
// configured device id, else the one the first login got, kept in the
// store) so restarts do not pile up devices. The token a login gets is
// held in memory only.
//
// Inbound: a /sync long poll (up to 100 events per room and sync). The
// since token is stored (Store, the state.db kv table) after every
// message of a batch was taken by the gateway, so a restart resumes where
// the last one stopped: nothing is replayed, nothing is lost. A batch the
// gateway refused (it was stopping, or could not store a message) is
// synced again after a pause; what of it was taken twice is dropped by
// the gateway's dedup on the event id. The first sync of every start
// does not wait (Health says "connected" once it went through); on the
// very first start it answers none of the backlog. A timeline the
// homeserver cut (limited) is logged.
//
// m.text and m.emote messages become herald.Messages: a room with two
// members (the bot and one other) is a DM, any other a group, where the
// bot is mentioned when m.mentions.user_ids names it, its pill links to
// it, the body holds its user id or display name (a leading "Name: " is
// then dropped), or the message replies to one of the bot's recent
// messages. An m.thread relation is the ThreadID, m.in_reply_to the
// ReplyTo (a reply fallback quote is dropped from the text). Notices
// (other bots), edits and the bot's own events are ignored; media are
// not read yet.
//
// Invites: the bot joins a room when a user in AllowedUsers ("*": anyone)
// or one Paired invites it; other invites are left alone (and logged).
//
// Encryption is not supported. In a room with m.room.encryption state, or
// on an m.room.encrypted event, herald sends one plain notice
// (EncryptionNotice; once per room, remembered in the store) and answers
// nothing there; a send to such a room fails with ErrEncrypted.
//
// Outbound: m.text with the Markdown as body and its HTML
// (org.matrix.custom.html, rendered by mautrix's format package with raw
// HTML escaped) as formatted_body; an empty m.mentions so no name in an
// answer pings anyone; m.thread for a thread (falling back to a reply to
// its root), m.in_reply_to for a reply. Edit sends an m.replace with
// m.new_content (streamed replies); Delete redacts (a preview whose final
// edit failed). Typing sends a typing notification
// of 30 s, renewed at most every 20 s, and taken down when the answer
// is sent.
//
// Errors: 429 M_LIMIT_EXCEEDED is *adapters.RetryAfterError after the
// answer's retry_after_ms; M_UNKNOWN_TOKEN and 401 are
// *adapters.FatalError naming MATRIX_ACCESS_TOKEN; 5xx and network
// failures *adapters.TemporaryError; a send that timed out
// *adapters.MaybeSentError. The client's own retries are off: retrying
// is the gateway's. The access token and password never reach a log or
// an error.
package matrix
