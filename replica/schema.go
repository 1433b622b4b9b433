package replica

// schema.go: the coordination tables, created by Open under an advisory
// lock, so that replicas starting together migrate once. Each statement is
// idempotent; herald_replica_schema records the version reached.

import (
	"context"
	"database/sql"
	"fmt"
)

// schemaVersion is the version migrate brings the tables to.
const schemaVersion = 1

// Advisory lock keys (pg_advisory_lock's bigint space is shared by every
// application on the database: these are herald's).
const (
	migrateLockKey int64 = 0x6865726c64_01 // "herld" 1
	cronLockKey    int64 = 0x6865726c64_02
)

var schema = []string{
	`CREATE TABLE IF NOT EXISTS herald_replica_schema (version integer NOT NULL)`,
	// inbound dedup: a platform message id is claimed once over all replicas
	`CREATE TABLE IF NOT EXISTS herald_inbound_claims (
		platform text NOT NULL, chat_id text NOT NULL, message_id text NOT NULL,
		replica text NOT NULL, claimed_at timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (platform, chat_id, message_id))`,
	`CREATE INDEX IF NOT EXISTS herald_inbound_claims_at ON herald_inbound_claims (claimed_at)`,
	// each chat's queue, in id order; taken_by is the replica handling it
	`CREATE TABLE IF NOT EXISTS herald_chat_queue (
		id bigserial PRIMARY KEY, chat_key text NOT NULL,
		platform text NOT NULL, chat_id text NOT NULL, message_id text NOT NULL,
		message bytea NOT NULL, received_at timestamptz NOT NULL, received_by text NOT NULL,
		taken_by text, attempts integer NOT NULL DEFAULT 0)`,
	`CREATE INDEX IF NOT EXISTS herald_chat_queue_key ON herald_chat_queue (chat_key, id)`,
	// a chat's turn runs on the replica holding its lease
	`CREATE TABLE IF NOT EXISTS herald_chat_leases (
		chat_key text PRIMARY KEY, owner text NOT NULL,
		acquired_at timestamptz NOT NULL DEFAULT now(), expires_at timestamptz NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS herald_chat_leases_owner ON herald_chat_leases (owner)`,
	// approvals waiting on some replica, answerable from any
	`CREATE TABLE IF NOT EXISTS herald_approvals (
		token text PRIMARY KEY, chat_key text NOT NULL,
		platform text NOT NULL, chat_id text NOT NULL, thread_id text NOT NULL, asker text NOT NULL,
		replica text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
		choice text, answered_by text, answered_at timestamptz)`,
}

// migrate creates the tables once, under a transaction-scoped advisory
// lock.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("replica: migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockKey); err != nil {
		return fmt.Errorf("replica: migrate: lock: %w", err)
	}
	for _, stmt := range schema {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("replica: migrate: %w", err)
		}
	}
	var have sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(version) FROM herald_replica_schema`).Scan(&have); err != nil {
		return fmt.Errorf("replica: migrate: %w", err)
	}
	if have.Int64 > schemaVersion {
		return fmt.Errorf("replica: the database's coordination tables are version %d, newer than this herald's %d: upgrade herald", have.Int64, schemaVersion)
	}
	if have.Int64 < schemaVersion {
		if _, err := tx.ExecContext(ctx, `INSERT INTO herald_replica_schema (version) VALUES ($1)`, schemaVersion); err != nil {
			return fmt.Errorf("replica: migrate: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("replica: migrate: %w", err)
	}
	return nil
}
