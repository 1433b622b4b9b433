// Package webhook is the webhook platform: named routes, served at POST
// /webhooks/<name> on the shared inbound listener, turn signed HTTP
// requests from other services (GitHub, GitLab, anything that can sign
// its body with HMAC-SHA256) into agent runs, or into plain deliveries
// with no model (deliver_only), as Hermes' webhook platform does.
//
// A request is checked in this order, each step answering on its own:
// the body's size (413, before it is read when its length is declared),
// the signature against the route's secret (401; constant-time
// comparisons), the route's rate limit (429), the payload (400 unless
// JSON), the events filter (200 {"status":"ignored"}), and the delivery
// id (200 {"status":"duplicate"} for one already taken, also across a
// restart: ids are kept in state.db's kv table for a week).
//
// A run is handed to the gateway through adapters.Sink like any
// platform's message — platform "webhook", chat the route's name, thread
// the delivery id (so each delivery is a session of its own and none
// interrupts another), user the sender (GitHub's sender.login, GitLab's
// user.username, else "webhook:<route>") — and the request is answered
// 202 {"status":"accepted"} as soon as the gateway stored it: the run is
// not tied to the request. What the gateway then says in the route's chat
// (the answer, notices) Send relays to the route's target through the
// gateway's Deliverer, the one delivery path cron and BOOT.md use; a
// route without a target delivers to the local chat named after it
// (local:<route>, read from its outbox), and "log" only logs. A
// deliver_only route delivers the rendered text before answering: 200
// {"status":"delivered"}, or 502 and the id forgotten, so that the
// sender's retry can succeed.
//
// Secrets never reach logs: the adapter logs routes, delivery ids and
// remote addresses, never a header value or a body.
package webhook
