// Package openaiapi is the OpenAI-compatible API, platform "api", served
// on the local platform's listener behind its token and Host check, so
// that any OpenAI client or chat front end (the openai SDKs, Open WebUI,
// LibreChat) can talk to the herald agent:
//
//	GET    /v1/models             "herald", and the configured model as an alias
//	POST   /v1/chat/completions   OpenAI's shapes; "stream": true answers with
//	                              SSE chat.completion.chunks ending in [DONE]
//	POST   /v1/responses          the Responses API; previous_response_id
//	                              continues the session of that response;
//	                              "stream": true answers with its events
//	GET    /v1/responses/{id}     a stored response
//	DELETE /v1/responses/{id}     forget it
//
// Every request is a message on platform "api" handed to the gateway's
// Sink like any adapter's, so hooks, tools, approvals and transcripts
// apply; what the gateway sends back for it (matched by Outgoing.Cause,
// adapters.Replies) is the answer. The Adapter is an adapters.Editor: the
// gateway's streamed edits become the deltas of a streamed answer.
//
// Stateless by default: each request without a session header runs in a
// new chat, whose session is seeded with the earlier messages of the
// request (through herald.TranscriptAppender) before its last user
// message is handed over as the prompt. X-Herald-Session-Id (or Hermes'
// X-Hermes-Session-Id) names a stored "api" session to continue instead:
// only the last user message is then sent, the stored session being the
// history. Every answer carries X-Herald-Session-Id. Requests on one chat
// run one at a time: a second waits for the first.
//
// An approval asked mid-turn ends the answer with the prompt and how to
// answer it over the API (a request with /approve or /deny continuing
// the session); the turn waits for that answer as in any chat. A
// stateless request whose last message is /approve… or /deny after an
// answer ending with that hint continues the session the hint names, so
// front ends that cannot set headers can answer too.
//
// Errors have OpenAI's shape, {"error":{"message","type","param","code"}}:
// 401 for a missing or wrong token, 400 naming the field of a malformed
// request, 404 for an unknown model, session or response.
//
// Response ids of /v1/responses are kept in state.db's kv table (with
// the stored response and its session), so previous_response_id works
// across restarts. An answer's usage is the sum of its turn's model
// calls, read from the post_api_request hook point (Config.Observe): a
// finished turn's answer waits (at most endWait) for its agent:end, so
// that every call is counted.
package openaiapi
