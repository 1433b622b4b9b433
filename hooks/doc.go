// Package hooks is herald's one hook bus: the catalogue of hook points, the
// registry every attachment subscribes to, and the attachments themselves
// (compiled-in Go plugins, HOOK.yaml directory hooks, config.yaml shell
// hooks).
//
// Ordering and blocking:
//
//   - Emit (observer points) never blocks. Each subscriber has its own
//     bounded queue and goroutine, so it sees events in the order they
//     were emitted, and a slow or broken subscriber delays nobody else. A
//     full queue drops the event; drops are counted (Dropped) and logged.
//   - Call (interceptor points) is awaited, never past a subscriber's
//     timeout (Go: 30 s, others: 60 s, unless set) nor past the caller's
//     context. Before a subscriber's interceptor runs, that subscriber's
//     queued observer events are delivered (within the same timeout), so
//     a plugin's on_session_start runs before its pre_llm_call. Go
//     callbacks run one after another, each on its own goroutine with a
//     context.WithTimeout context: one that ignores its context is
//     abandoned at the deadline, after a 100 ms grace to notice it (the
//     call counts as timed out; its
//     goroutine is left to finish, logged once per hook and counted by
//     Stuck). Out-of-process subscribers run concurrently and their
//     answers are combined in declared order: Go plugins, directory
//     hooks, shell hooks; within a kind, exact names before "base:*"
//     wildcards, then registration order.
//   - Priority (Subscription.Priority) orders an event's subscribers
//     before all of the above: a lower priority is called only once every
//     higher one has answered, and not at all once an answer at an event
//     that can block (pre_tool_call, pre_llm_call, pre_gateway_dispatch,
//     command:*) has blocked. Observer queues are not ordered by it.
//   - Every attachment has a type (hooktypes.go): command, http (the
//     payload POSTed; the dialed address checked, hookhttp.go), prompt or
//     agent (a Judge asked for {"ok", "reason"}). All answer through the
//     same combiners.
//   - A panic, error or overrun in any hook is recovered and logged with
//     the hook's name. Interceptors fail open with a warning, except that a
//     Go pre_tool_call that panics or overruns, and any fail_closed
//     (block_on_failure) subscriber that fails, blocks the tool call (on
//     pre_llm_call: refuses the prompt).
//   - Persistent shell hooks get each request written under the call's
//     deadline and context: a hook that does not read its input is killed
//     (its process group) and restarted on the next call. No lock is held
//     across a spawn, a restart backoff or a directory scan, and a scan
//     never blocks on a HOOK.yaml (one that is not a regular file is
//     refused).
//   - Close drains every queue, bounded by its context.
//
// Each point has a typed payload (payloads.go) and, for interceptors, a
// typed result (results.go); their JSON forms use Hermes' snake_case keys
// and are covered by golden files.
package hooks
