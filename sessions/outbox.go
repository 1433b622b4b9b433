package sessions

// outbox.go: what the gateway sent to a chat whose clients fetch their
// messages (the local API) rather than being pushed them. A message is
// committed here before the send is reported done, so a reply that comes
// after its request gave up can still be read. Ids are the table's
// AUTOINCREMENT key: they only grow, also across restarts and pruning, so
// "after id" never misses or repeats a message.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Outbox retention: a chat keeps its messages for OutboxMaxAge, and at
// most its newest OutboxPerChat.
const (
	OutboxMaxAge  = 7 * 24 * time.Hour
	OutboxPerChat = 1000
)

// OutboxMessage is one message sent to a chat.
type OutboxMessage struct {
	ID       int64
	Platform string
	ChatID   string
	Text     string
	// File describes a file sent with the text, as JSON ("" for none).
	File string
	// Buttons are the choices under the message, as JSON ("" for none).
	Buttons   string
	CreatedAt time.Time
	// EditedAt is when the message was last edited (zero: never).
	EditedAt time.Time
}

// AppendOutbox stores m and returns it with its id. It returns once the
// row is committed. The same transaction drops what retention no longer
// keeps: messages older than OutboxMaxAge, and m's chat's beyond its
// newest OutboxPerChat.
func (s *Store) AppendOutbox(ctx context.Context, m OutboxMessage) (OutboxMessage, error) {
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRow(`INSERT INTO outbox(platform, chat_id, text, file, buttons, created_at) VALUES (?,?,?,?,?,?) RETURNING id`,
			m.Platform, m.ChatID, m.Text, m.File, m.Buttons, ms(m.CreatedAt)).Scan(&m.ID)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`DELETE FROM outbox WHERE created_at < ?`, ms(m.CreatedAt.Add(-OutboxMaxAge))); err != nil {
			return err
		}
		_, err = tx.Exec(`DELETE FROM outbox WHERE platform = ? AND chat_id = ? AND id <= (
			SELECT id FROM outbox WHERE platform = ? AND chat_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
			m.Platform, m.ChatID, m.Platform, m.ChatID, OutboxPerChat)
		return err
	})
	if err != nil {
		return OutboxMessage{}, fmt.Errorf("sessions: store the message to %s/%s: %w", m.Platform, m.ChatID, err)
	}
	return m, nil
}

// OutboxAfter returns the messages to a chat with an id above after,
// oldest first (after 0: all that are kept).
func (s *Store) OutboxAfter(ctx context.Context, platform, chatID string, after int64) ([]OutboxMessage, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, text, file, buttons, created_at, edited_at FROM outbox
		WHERE platform = ? AND chat_id = ? AND id > ? ORDER BY id`, platform, chatID, after)
	if err != nil {
		return nil, fmt.Errorf("sessions: read the messages to %s/%s: %w", platform, chatID, err)
	}
	defer rows.Close()
	out := []OutboxMessage{}
	for rows.Next() {
		m := OutboxMessage{Platform: platform, ChatID: chatID}
		var at int64
		var edited sql.NullInt64
		if err := rows.Scan(&m.ID, &m.Text, &m.File, &m.Buttons, &at, &edited); err != nil {
			return nil, fmt.Errorf("sessions: read the messages to %s/%s: %w", platform, chatID, err)
		}
		m.CreatedAt = fromMS(at)
		if edited.Valid {
			m.EditedAt = fromMS(edited.Int64)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: read the messages to %s/%s: %w", platform, chatID, err)
	}
	return out, nil
}

// ErrNoOutboxMessage is returned (wrapped) by EditOutbox for an id that
// names no kept message of the chat.
var ErrNoOutboxMessage = errors.New("sessions: no such outbox message")

// EditOutbox replaces the text and buttons of the message id to a chat
// and marks it edited at.
func (s *Store) EditOutbox(ctx context.Context, platform, chatID string, id int64, text, buttons string, at time.Time) error {
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE outbox SET text = ?, buttons = ?, edited_at = ? WHERE id = ? AND platform = ? AND chat_id = ?`,
			text, buttons, ms(at), id, platform, chatID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("%w: %d", ErrNoOutboxMessage, id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sessions: edit the message %d to %s/%s: %w", id, platform, chatID, err)
	}
	return nil
}
