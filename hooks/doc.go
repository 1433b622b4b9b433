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
//   - Call (interceptor points) is awaited. Before a subscriber's
//     interceptor runs, that subscriber's queued observer events are
//     delivered, so a plugin's on_session_start runs before its
//     pre_llm_call. Go callbacks run on the caller's goroutine with a
//     deadline context (no goroutine per call) and are expected to honour
//     it; out-of-process subscribers run concurrently and their answers
//     are combined in declared order: Go plugins, directory hooks, shell
//     hooks; within a kind, exact names before "base:*" wildcards, then
//     registration order.
//   - A panic, error or overrun in any hook is recovered and logged with
//     the hook's name. Interceptors fail open with a warning, except that a
//     Go pre_tool_call that panics or overruns, and any fail_closed
//     subscriber that fails, blocks the tool call.
//   - Close drains every queue, bounded by its context.
//
// Each point has a typed payload (payloads.go) and, for interceptors, a
// typed result (results.go); their JSON forms use Hermes' snake_case keys
// and are covered by golden files.
package hooks
