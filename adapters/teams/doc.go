// Package teams connects herald to Microsoft Teams through the Bot
// Framework activity protocol. It only translates: dedup, auth of users,
// splitting, pacing and retries are the gateway's.
//
// Inbound: Teams (the Bot Framework Connector) POSTs each activity to
// InboundPath on the shared inbound listener. Every request must carry a
// Bearer JWT that Microsoft signed: RS256 only, with a key from the
// OpenID metadata document's jwks_uri (cached; fetched again when a token
// names an unknown key id, at most once a minute), issuer
// https://api.botframework.com, audience the bot's app id, exp and nbf
// checked with 5 minutes of clock skew; a key that lists endorsements
// must endorse the activity's channelId, and the token's serviceurl claim,
// when present, must equal the activity's serviceUrl. Anything else is
// answered 401 and reaches nothing. The activity's id is the
// herald.Message ID, so an activity Teams sends again is dropped by the
// gateway's dedup.
//
// Activities: a message in a personal chat (a DM), a group chat or a
// channel becomes a herald.Message; in a channel only a message that
// mentions the bot (an entity of type mention naming the bot's id) is
// taken, and the mention's text is removed. The conversation id (less a
// channel thread's ";messageid=" suffix) is the chat, the thread's
// message id its ThreadID; the sender's AAD object id (from.aadObjectId,
// else from.id) is the user. conversationUpdate and other activities are
// answered 200 and ignored. A press of an approval button arrives as a
// message whose value carries the button's data (Action.Submit), or as an
// adaptiveCard/action invoke; either becomes an adapters.Press.
//
// Outbound: replies POST to {serviceUrl}/v3/conversations/{id}/activities
// with a client-credentials token for https://api.botframework.com/.default
// from the token endpoint, cached until a minute before it expires. The
// bot token is only ever sent to a serviceUrl that arrived in a validated
// activity for that conversation (kept in memory and, when a Store is
// given, in state.db so a restart can still reach the conversation).
// Edits PUT the activity, deletes DELETE it, typing posts a typing
// activity; buttons are an Adaptive Card of Action.Submit actions. A 429
// is an adapters.RetryAfterError with the Retry-After header's wait.
// Text is sent with textFormat "markdown" (see format.go for what is
// converted).
package teams
