package replica

// chats.go: inbound claims, chat queues and chat leases (the gateway's
// Submit, Take, Wake, Holds, Done, Release, Leave).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"

	"github.com/heraldgw/herald/gateway"
)

// Submit claims the message's id and queues it, in one statement; the
// claim is the inbound dedup across replicas.
func (c *Coordinator) Submit(ctx context.Context, in gateway.SharedInbound) (bool, error) {
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return false, err
	}
	var id int64
	err = c.db.QueryRowContext(ctx, `WITH claim AS (
			INSERT INTO herald_inbound_claims (platform, chat_id, message_id, replica) VALUES ($1, $2, $3, $4)
			ON CONFLICT DO NOTHING RETURNING 1)
		INSERT INTO herald_chat_queue (chat_key, platform, chat_id, message_id, message, received_at, received_by)
		SELECT $5, $1, $2, $3, $6, $7, $4 FROM claim RETURNING id`,
		in.Platform, in.ChatID, in.MessageID, c.cfg.ID, in.Key, in.Message, in.ReceivedAt).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("replica: queue message: %w", err)
	}
	return true, nil
}

// Take takes the chat's lease (free, expired or this replica's) and the
// queued messages not taken by this replica, in one transaction. The lease
// row is locked first, so Release and another Take wait for it.
func (c *Coordinator) Take(ctx context.Context, key string) (gateway.Taken, error) {
	var t gateway.Taken
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return t, err
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return t, fmt.Errorf("replica: take chat: %w", err)
	}
	defer tx.Rollback()
	var owner string
	var live bool
	err = tx.QueryRowContext(ctx, `SELECT owner, expires_at > now() FROM herald_chat_leases WHERE chat_key = $1 FOR UPDATE`, key).Scan(&owner, &live)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		res, err := tx.ExecContext(ctx, `INSERT INTO herald_chat_leases (chat_key, owner, expires_at)
			VALUES ($1, $2, now() + $3 * interval '1 millisecond') ON CONFLICT DO NOTHING`, key, c.cfg.ID, c.ttl())
		if err != nil {
			return t, fmt.Errorf("replica: take chat: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return t, nil // another replica is taking it now
		}
		t.Fresh = true
	case err != nil:
		return t, fmt.Errorf("replica: take chat: %w", err)
	case owner != c.cfg.ID && live:
		t.Holder = owner
		return t, nil
	default:
		if owner != c.cfg.ID {
			t.Fresh = true
			c.log.Info("taking over a chat whose lease expired", "session_key", key, "from", owner)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE herald_chat_leases SET owner = $2, expires_at = now() + $3 * interval '1 millisecond',
			acquired_at = CASE WHEN owner = $2 THEN acquired_at ELSE now() END WHERE chat_key = $1`, key, c.cfg.ID, c.ttl()); err != nil {
			return t, fmt.Errorf("replica: take chat: %w", err)
		}
	}
	rows, err := tx.QueryContext(ctx, `UPDATE herald_chat_queue SET taken_by = $2, attempts = attempts + 1
		WHERE chat_key = $1 AND taken_by IS DISTINCT FROM $2
		RETURNING id, platform, chat_id, message_id, message, received_at, attempts`, key, c.cfg.ID)
	if err != nil {
		return t, fmt.Errorf("replica: take chat: %w", err)
	}
	for rows.Next() {
		in := gateway.SharedInbound{Key: key}
		if err := rows.Scan(&in.ID, &in.Platform, &in.ChatID, &in.MessageID, &in.Message, &in.ReceivedAt, &in.Attempts); err != nil {
			rows.Close()
			return t, fmt.Errorf("replica: take chat: %w", err)
		}
		t.Messages = append(t.Messages, in)
	}
	if err := rows.Err(); err != nil {
		return t, fmt.Errorf("replica: take chat: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return gateway.Taken{}, fmt.Errorf("replica: take chat: %w", err)
	}
	sort.Slice(t.Messages, func(i, j int) bool { return t.Messages[i].ID < t.Messages[j].ID })
	t.Held = true
	return t, nil
}

// Wake notifies holder that messages wait in the chat's queue.
func (c *Coordinator) Wake(ctx context.Context, holder, key string) error {
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return err
	}
	_, err = c.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, chanChat, holder+"|"+key)
	return err
}

// Holds renews the chat's lease if this replica still holds it: a lease
// past its expiry that no other replica took is still this replica's.
func (c *Coordinator) Holds(ctx context.Context, key string) (bool, error) {
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return false, err
	}
	res, err := c.db.ExecContext(ctx, `UPDATE herald_chat_leases SET expires_at = now() + $3 * interval '1 millisecond'
		WHERE chat_key = $1 AND owner = $2`, key, c.cfg.ID, c.ttl())
	if err != nil {
		return false, fmt.Errorf("replica: check lease: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// Done removes handled messages from their queues, whoever took them
// since: a message answered here is not to be answered again.
func (c *Coordinator) Done(ctx context.Context, ids []int64) error {
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return err
	}
	if _, err := c.db.ExecContext(ctx, `DELETE FROM herald_chat_queue WHERE id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("replica: remove handled messages: %w", err)
	}
	return nil
}

// Return puts messages this replica took back in their queues, untaken,
// as if it had never taken them.
func (c *Coordinator) Return(ctx context.Context, ids []int64) error {
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return err
	}
	if _, err := c.db.ExecContext(ctx, `UPDATE herald_chat_queue SET taken_by = NULL, attempts = greatest(attempts - 1, 0)
		WHERE id = ANY($1) AND taken_by = $2`, ids, c.cfg.ID); err != nil {
		return fmt.Errorf("replica: return messages: %w", err)
	}
	return nil
}

// Release deletes the chat's lease if it is this replica's and nothing is
// queued for the chat; waiting counts the queued messages no replica took.
func (c *Coordinator) Release(ctx context.Context, key string) (int, error) {
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return 0, err
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("replica: release chat: %w", err)
	}
	defer tx.Rollback()
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM herald_chat_leases WHERE chat_key = $1 AND owner = $2 FOR UPDATE`, key, c.cfg.ID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil // not ours (any more)
	}
	if err != nil {
		return 0, fmt.Errorf("replica: release chat: %w", err)
	}
	var total, waiting int
	if err := tx.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE taken_by IS DISTINCT FROM $2)
		FROM herald_chat_queue WHERE chat_key = $1`, key, c.cfg.ID).Scan(&total, &waiting); err != nil {
		return 0, fmt.Errorf("replica: release chat: %w", err)
	}
	if total == 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM herald_chat_leases WHERE chat_key = $1`, key); err != nil {
			return 0, fmt.Errorf("replica: release chat: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("replica: release chat: %w", err)
	}
	return waiting, nil
}

// Leave deletes every lease of this replica (a clean shutdown): messages
// it took and did not finish are taken by the next replica to take the
// chat.
func (c *Coordinator) Leave(ctx context.Context) error {
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return err
	}
	_, err = c.db.ExecContext(ctx, `DELETE FROM herald_chat_leases WHERE owner = $1`, c.cfg.ID)
	return err
}
