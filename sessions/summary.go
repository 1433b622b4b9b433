package sessions

// summary.go: the session list of the local API's console (GET
// /v1/sessions): each session with when its last message came and what
// it said, newest activity first.

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Summary is a session with its last message.
type Summary struct {
	Session
	// LastMessageAt is when its last message was stored (its start when
	// it has none).
	LastMessageAt time.Time
	// LastMessage is the text of its last user or assistant message.
	LastMessage string
}

// SummaryOptions filters Summaries.
type SummaryOptions struct {
	Platform string
	ChatID   string
	// Limit bounds the answer (<= 0: no bound).
	Limit int
}

// Summaries returns sessions with their last message, the one with the
// newest message first.
func (s *Store) Summaries(ctx context.Context, o SummaryOptions) ([]Summary, error) {
	var where []string
	var args []any
	if o.Platform != "" {
		where = append(where, "platform = ?")
		args = append(args, o.Platform)
	}
	if o.ChatID != "" {
		where = append(where, "chat_id = ?")
		args = append(args, o.ChatID)
	}
	q := `SELECT ` + sessionCols + `,
		coalesce((SELECT max(m.created_at) FROM messages m WHERE m.session_id = sessions.id), created_at) AS last_at,
		coalesce((SELECT m.content FROM messages m WHERE m.session_id = sessions.id AND m.role IN ('user','assistant') AND m.content != ''
			ORDER BY m.id DESC LIMIT 1), '')
		FROM sessions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY last_at DESC, created_at DESC"
	if o.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, o.Limit)
	}
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: list with last messages: %w", err)
	}
	defer rows.Close()
	out := []Summary{}
	for rows.Next() {
		var sum Summary
		var last int64
		sess, err := scanSession(withExtra{rows, []any{&last, &sum.LastMessage}})
		if err != nil {
			return nil, fmt.Errorf("sessions: list with last messages: %w", err)
		}
		sum.Session, sum.LastMessageAt = *sess, fromMS(last)
		out = append(out, sum)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: list with last messages: %w", err)
	}
	return out, nil
}

// withExtra scans a session row followed by more columns into extra.
type withExtra struct {
	rows  interface{ Scan(...any) error }
	extra []any
}

func (w withExtra) Scan(dest ...any) error { return w.rows.Scan(append(dest, w.extra...)...) }
