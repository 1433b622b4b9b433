package sessions

// inbox.go: the inbound journal. The gateway stores every platform message
// here when it arrives, before the adapter tells the platform it was
// received, and marks the row finished when the message's handling ends.
// Rows are keyed by (platform, chat, message id), so the journal is also
// the persisted dedup: a message already in it is not taken again, also
// after a restart. Rows left unfinished by a crash are handed to the
// gateway again at its next start, once.

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Inbound journal states.
const (
	// InboundReceived: stored, not yet handled to the end.
	InboundReceived = "received"
	// InboundReplayed: left unfinished by a crash and handed to the
	// gateway again; a second crash does not replay it a third time.
	InboundReplayed = "replayed"
	// InboundDone: handled (answered, skipped, refused by auth…).
	InboundDone = "done"
	// InboundAbandoned: unfinished after its one replay.
	InboundAbandoned = "abandoned"
)

// Inbound is one journal row.
type Inbound struct {
	Platform  string
	ChatID    string
	MessageID string
	// Message is the message as JSON; it is cleared when the row is
	// finished (the key alone serves dedup).
	Message    string
	ReceivedAt time.Time
	State      string
}

// RecordInbound stores a newly arrived message and reports whether it is
// new: false means a message with the same (platform, chat, message id)
// is already in the journal. It returns once the row is committed.
func (s *Store) RecordInbound(ctx context.Context, in Inbound) (fresh bool, err error) {
	err = s.writeSimple(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT INTO inbox(platform, chat_id, message_id, message, received_at, state) VALUES (?,?,?,?,?,?)
			ON CONFLICT(platform, chat_id, message_id) DO NOTHING`,
			in.Platform, in.ChatID, in.MessageID, in.Message, ms(in.ReceivedAt), InboundReceived)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		fresh = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sessions: journal message %s/%s/%s: %w", in.Platform, in.ChatID, in.MessageID, err)
	}
	return fresh, nil
}

// SetInboundState sets an unfinished row's state; InboundDone and
// InboundAbandoned finish it (see FinishInbound).
func (s *Store) SetInboundState(ctx context.Context, platform, chatID, messageID, state string, at time.Time) error {
	if state == InboundDone || state == InboundAbandoned {
		return s.FinishInbound(ctx, []InboundKey{{platform, chatID, messageID}}, state, at)
	}
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE inbox SET state = ? WHERE platform = ? AND chat_id = ? AND message_id = ? AND finished_at IS NULL`,
			state, platform, chatID, messageID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sessions: mark message %s/%s/%s %s: %w", platform, chatID, messageID, state, err)
	}
	return nil
}

// InboundKey names a journal row.
type InboundKey struct{ Platform, ChatID, MessageID string }

// FinishInbound finishes the rows of keys (InboundDone or
// InboundAbandoned) in one transaction: the message bodies are cleared and
// at is kept as their finishing time. Rows already finished are left as
// they are.
func (s *Store) FinishInbound(ctx context.Context, keys []InboundKey, state string, at time.Time) error {
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		st, err := tx.Prepare(`UPDATE inbox SET state = ?, finished_at = ?, message = '' WHERE platform = ? AND chat_id = ? AND message_id = ? AND finished_at IS NULL`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, k := range keys {
			if _, err := st.Exec(state, ms(at), k.Platform, k.ChatID, k.MessageID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sessions: mark %d inbound messages %s: %w", len(keys), state, err)
	}
	return nil
}

// UnfinishedInbound returns the rows not finished, oldest first.
func (s *Store) UnfinishedInbound(ctx context.Context) ([]Inbound, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT platform, chat_id, message_id, message, received_at, state FROM inbox
		WHERE finished_at IS NULL ORDER BY received_at, rowid`)
	if err != nil {
		return nil, fmt.Errorf("sessions: read unfinished messages: %w", err)
	}
	defer rows.Close()
	var out []Inbound
	for rows.Next() {
		var in Inbound
		var at int64
		if err := rows.Scan(&in.Platform, &in.ChatID, &in.MessageID, &in.Message, &at, &in.State); err != nil {
			return nil, fmt.Errorf("sessions: read unfinished messages: %w", err)
		}
		in.ReceivedAt = fromMS(at)
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: read unfinished messages: %w", err)
	}
	return out, nil
}

// PruneInbound deletes finished rows finished before cutoff, then the
// oldest finished rows beyond keep, and returns how many it deleted.
// Unfinished rows are never deleted.
func (s *Store) PruneInbound(ctx context.Context, cutoff time.Time, keep int) (int64, error) {
	var n int64
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM inbox WHERE finished_at IS NOT NULL AND finished_at < ?`, ms(cutoff))
		if err != nil {
			return err
		}
		old, _ := res.RowsAffected()
		res, err = tx.Exec(`DELETE FROM inbox WHERE finished_at IS NOT NULL AND rowid NOT IN (
			SELECT rowid FROM inbox WHERE finished_at IS NOT NULL ORDER BY finished_at DESC LIMIT ?)`, max(keep, 0))
		if err != nil {
			return err
		}
		over, _ := res.RowsAffected()
		n = old + over
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sessions: prune the inbound journal: %w", err)
	}
	return n, nil
}
