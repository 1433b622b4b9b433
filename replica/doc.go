// Package replica lets several herald gateway replicas share one
// PostgreSQL database for coordination: it implements gateway.Coordinator
// (chat leases and queues, inbound dedup, approvals) and cron.Leader (one
// scheduler among the replicas) on a database/sql handle opened with the
// pgx driver. Its tables (herald_chat_leases, herald_chat_queue,
// herald_inbound_claims, herald_approvals, herald_replica_schema) are
// created by Open under an advisory lock; nothing else reads them.
//
// Promises:
//
//   - A platform message is claimed by (platform, chat, message id) and
//     queued in its chat's queue in one statement before Receive returns:
//     a redelivery to any replica is dropped, and a stored message is
//     never lost (it stays queued until a replica finished it).
//   - A chat's messages are handled in queue order by the one replica
//     holding the chat's lease (owner, expiry). The lease is renewed every
//     RenewEvery and checked (and renewed) before each queued message is
//     dispatched; it is given up when the chat is idle with nothing
//     queued. A replica receiving a message for a chat another replica
//     holds wakes that replica (NOTIFY herald_chat_wake); every replica
//     also polls every PollEvery for chats whose lease expired with
//     messages queued, and takes them. A replica that dies loses its chats
//     after LeaseTTL; the next replica takes their queued messages, the one
//     being answered included (taken a second time; a message taken twice
//     without being finished is given up).
//   - An approval waiting on a replica is a row; a button pressed on
//     another replica answers it once (NOTIFY herald_approval, and the
//     waiter's poll). A typed /approve reaches the waiting replica through
//     the chat's queue, as any message does.
//   - The cron leader holds pg_try_advisory_lock on a connection of its
//     own, checked every tick; the others try every tick, so a lost leader
//     (its connection gone) is replaced within one tick. cron's claim rows
//     still keep each slot to one run. LeaderFor(name) elects a leader
//     the same way for another purpose, on a lock of its own keyed by the
//     name ("telegram-polling": the one replica that long-polls Telegram).
//
// Failure: a Coordinator lives as long as the context given to Open. Once
// that ends it makes no more changes (every call returns ErrStopped) and
// releases nothing: its leases expire as a dead replica's would. A clean
// shutdown calls Leave first (gateway.Runner does).
//
// Not covered: a replica that stalls past LeaseTTL in the middle of a turn
// (its lease taken over meanwhile) may still deliver that turn's answer,
// and the replica that took the chat answers the message again.
package replica
