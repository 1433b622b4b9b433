package sessions

// sendqueue.go: the send queue (the outbound queue). When a platform's rate limit asks the
// gateway to wait longer than it waits in line, the messages not yet sent
// are stored here with the time they may go, and sent from here when it
// has passed, also after a restart. Rows are kept in the order queued;
// a row is deleted once it is delivered (or given up).

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Outbound is one queued message.
type Outbound struct {
	ID       int64
	Platform string
	ChatID   string
	ThreadID string
	// Text is the message as it is to be sent (already redacted and
	// split to the platform's limit).
	Text        string
	Cause       string
	Part, Parts int
	Plain       bool
	// EditID, when set, is a message already shown (a streamed preview)
	// that Text replaces.
	EditID    string
	NotBefore time.Time
	CreatedAt time.Time
}

// QueueOutbound stores rows, in order, in one transaction.
func (s *Store) QueueOutbound(ctx context.Context, rows ...Outbound) error {
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		st, err := tx.Prepare(`INSERT INTO send_queue(platform, chat_id, thread_id, text, cause, part, parts, plain, edit_id, not_before, created_at)
			VALUES (?,?,?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, o := range rows {
			if _, err := st.Exec(o.Platform, o.ChatID, o.ThreadID, o.Text, o.Cause, o.Part, o.Parts, o.Plain, o.EditID, ms(o.NotBefore), ms(o.CreatedAt)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sessions: queue %d outbound messages: %w", len(rows), err)
	}
	return nil
}

// PendingOutbound returns every queued row, in the order queued.
func (s *Store) PendingOutbound(ctx context.Context) ([]Outbound, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, platform, chat_id, thread_id, text, cause, part, parts, plain, edit_id, not_before, created_at
		FROM send_queue ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("sessions: read the outbound queue: %w", err)
	}
	defer rows.Close()
	var out []Outbound
	for rows.Next() {
		var o Outbound
		var nb, at int64
		if err := rows.Scan(&o.ID, &o.Platform, &o.ChatID, &o.ThreadID, &o.Text, &o.Cause, &o.Part, &o.Parts, &o.Plain, &o.EditID, &nb, &at); err != nil {
			return nil, fmt.Errorf("sessions: read the outbound queue: %w", err)
		}
		o.NotBefore, o.CreatedAt = fromMS(nb), fromMS(at)
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: read the outbound queue: %w", err)
	}
	return out, nil
}

// DeleteOutbound removes a delivered (or abandoned) row.
func (s *Store) DeleteOutbound(ctx context.Context, id int64) error {
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`DELETE FROM send_queue WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sessions: remove outbound message %d: %w", id, err)
	}
	return nil
}

// DeferOutbound moves the chat's queued rows to notBefore at the earliest.
func (s *Store) DeferOutbound(ctx context.Context, platform, chatID string, notBefore time.Time) error {
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE send_queue SET not_before = `+s.dialect.greatest+`(not_before, ?) WHERE platform = ? AND chat_id = ?`, ms(notBefore), platform, chatID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sessions: defer the outbound queue of %s/%s: %w", platform, chatID, err)
	}
	return nil
}
