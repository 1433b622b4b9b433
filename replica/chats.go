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

// takeSQL takes the chat's lease (free, expired or this replica's: its row
// is locked first, so Release and another Take wait for it) and, when it
// got it, the queued messages this replica has not taken, in one
// statement. Its rows: the lease's owner before, whether this replica
// holds it now, whether it did not before, and a taken message per row
// (none: NULLs).
const takeSQL = `WITH cur AS (
		SELECT owner, expires_at > now() AS live FROM herald_chat_leases WHERE chat_key = $1 FOR UPDATE),
	claimed AS (
		INSERT INTO herald_chat_leases (chat_key, owner, expires_at)
		SELECT $1, $2, now() + $3 * interval '1 millisecond' WHERE NOT EXISTS (SELECT 1 FROM cur)
		ON CONFLICT DO NOTHING RETURNING true AS fresh),
	renewed AS (
		UPDATE herald_chat_leases l SET owner = $2, expires_at = now() + $3 * interval '1 millisecond',
			acquired_at = CASE WHEN cur.owner = $2 THEN l.acquired_at ELSE now() END
		FROM cur WHERE l.chat_key = $1 AND (cur.owner = $2 OR NOT cur.live) RETURNING cur.owner <> $2 AS fresh),
	held AS (SELECT fresh FROM claimed UNION ALL SELECT fresh FROM renewed),
	taken AS (
		UPDATE herald_chat_queue SET taken_by = $2, attempts = attempts + 1
		WHERE chat_key = $1 AND taken_by IS DISTINCT FROM $2 AND EXISTS (SELECT 1 FROM held)
		RETURNING id, platform, chat_id, message_id, message, received_at, attempts)
	SELECT coalesce((SELECT owner FROM cur), ''), EXISTS (SELECT 1 FROM held), coalesce((SELECT bool_or(fresh) FROM held), false),
		t.id, t.platform, t.chat_id, t.message_id, t.message, t.received_at, t.attempts
	FROM (SELECT 1) one LEFT JOIN taken t ON true`

// Take takes the chat's lease and its queued messages (takeSQL).
func (c *Coordinator) Take(ctx context.Context, key string) (gateway.Taken, error) {
	var t gateway.Taken
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return t, err
	}
	rows, err := c.db.QueryContext(ctx, takeSQL, key, c.cfg.ID, c.ttl())
	if err != nil {
		return t, fmt.Errorf("replica: take chat: %w", err)
	}
	defer rows.Close()
	var owner string
	for rows.Next() {
		var id sql.NullInt64
		var attempts sql.NullInt32
		var receivedAt sql.NullTime
		var platform, chatID, messageID sql.NullString
		var message []byte
		if err := rows.Scan(&owner, &t.Held, &t.Fresh, &id, &platform, &chatID, &messageID, &message, &receivedAt, &attempts); err != nil {
			return gateway.Taken{}, fmt.Errorf("replica: take chat: %w", err)
		}
		if id.Valid {
			t.Messages = append(t.Messages, gateway.SharedInbound{ID: id.Int64, Key: key, Platform: platform.String, ChatID: chatID.String,
				MessageID: messageID.String, Message: message, ReceivedAt: receivedAt.Time, Attempts: int(attempts.Int32)})
		}
	}
	if err := rows.Err(); err != nil {
		return gateway.Taken{}, fmt.Errorf("replica: take chat: %w", err)
	}
	if !t.Held {
		t.Messages = nil
		if owner != c.cfg.ID {
			t.Holder = owner // "": another replica was taking it at that moment
		}
		return t, nil
	}
	if t.Fresh && owner != "" && owner != c.cfg.ID {
		c.log.Info("taking over a chat whose lease expired", "session_key", key, "from", owner)
	}
	sort.Slice(t.Messages, func(i, j int) bool { return t.Messages[i].ID < t.Messages[j].ID })
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
// queued for the chat; waiting counts the queued messages no replica took
// (0 when the lease is not this replica's).
func (c *Coordinator) Release(ctx context.Context, key string) (int, error) {
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err != nil {
		return 0, err
	}
	// One statement: a message queued after its snapshot is either seen
	// by its receiver's Take once this commits (the lease is gone: it
	// takes the chat) or, when this waited for that Take's lock, its
	// receiver woke this replica, which then takes the chat again.
	var waiting int
	err = c.db.QueryRowContext(ctx, `WITH queued AS (
			SELECT count(*) AS total, count(*) FILTER (WHERE taken_by IS DISTINCT FROM $2) AS waiting
			FROM herald_chat_queue WHERE chat_key = $1),
		gone AS (
			DELETE FROM herald_chat_leases WHERE chat_key = $1 AND owner = $2 AND (SELECT total FROM queued) = 0 RETURNING 1)
		SELECT CASE WHEN EXISTS (SELECT 1 FROM herald_chat_leases WHERE chat_key = $1 AND owner = $2)
			THEN (SELECT waiting FROM queued) ELSE 0 END`, key, c.cfg.ID).Scan(&waiting)
	if err != nil {
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
