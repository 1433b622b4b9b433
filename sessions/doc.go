// Package sessions is herald's state: sessions and their messages,
// pairings, remembered approvals, platform offsets, the inbound journal,
// the outbox and send queue, small kv records and cron jobs, plus the
// session-key rules and the reset policy. It is the only package that
// speaks SQL.
//
// The state lives in one of two engines behind the one Store type:
//
//   - SQLite (Open; $HERALD_HOME/state.db, WAL mode, pure Go through
//     modernc.org/sqlite), the embedded default for one process. Writes
//     go through one writer goroutine that commits whatever is waiting in
//     one transaction (group commit), so that many chats writing at once
//     cost one fsync, not one each. Reads use a separate pool and never
//     wait for the writer.
//   - PostgreSQL (OpenURL; pgx through database/sql), for several
//     replicas sharing one database. Writes go straight to a pool, each in
//     its own transaction: read committed for the hot paths whose
//     statements stand on their own (writeSimple), serializable — run
//     again when PostgreSQL reports a collision with another — for every
//     step that reads and then decides (Write), so that it sees the
//     database as if it ran alone, as it does on SQLite.
//
// Either way a write returns only after its transaction has committed.
// The SQL is written once with ? placeholders (dialect.go says how the two
// engines are told apart where they must be), and one test suite
// (sessions/storetest) runs on both.
//
// The schema is versioned (table schema_version, one migration list per
// engine with the same versions) and migrated forward on open; a database
// from a newer herald is refused rather than damaged. Migrations run in one
// transaction that reads the version again — under BEGIN IMMEDIATE on
// SQLite, under an advisory lock on PostgreSQL — so any number of
// processes may open a new database at once.
package sessions
