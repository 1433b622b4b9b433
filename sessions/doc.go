// Package sessions is herald's state: one SQLite database (state.db, WAL
// mode, pure Go through modernc.org/sqlite) holding sessions and their
// messages, pairings, remembered approvals, platform offsets and cron jobs,
// plus the session-key rules and the reset policy.
//
// Writes go through one writer goroutine that commits whatever is waiting
// in one transaction (group commit), so that many chats writing at once cost
// one fsync, not one each; a write returns only after its transaction has
// committed. Reads use a separate pool and never wait for the writer.
//
// The schema is versioned (table schema_version) and migrated forward on
// Open; a database from a newer herald is refused rather than damaged.
// Migrations run in one BEGIN IMMEDIATE transaction that reads the version
// again, so any number of processes may open a new database at once.
package sessions
