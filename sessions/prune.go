package sessions

// prune.go: finding sessions by a prefix of their id, and deleting
// sessions with their messages (herald sessions delete and prune). The
// files a session left beside the database (its transcripts, its media)
// are the caller's to remove.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// SessionsWithPrefix returns the sessions whose id starts with prefix,
// oldest first, at most limit of them (<= 0: all).
func (s *Store) SessionsWithPrefix(ctx context.Context, prefix string, limit int) ([]Session, error) {
	if prefix == "" {
		return nil, fmt.Errorf("sessions: find by id: empty id")
	}
	// LIKE with its wildcards escaped (ids hold _): standard SQL, and
	// what a user types goes to the database as it is (a range's upper
	// bound could be a byte sequence PostgreSQL refuses as text). SQLite's
	// LIKE ignores ASCII case, hence the check below.
	like := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix) + "%"
	q := `SELECT ` + sessionCols + ` FROM sessions WHERE id LIKE ? ESCAPE '\' ORDER BY id`
	args := []any{like}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	out, err := s.querySessions(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: find %s*: %w", prefix, err)
	}
	kept := out[:0]
	for _, sess := range out {
		if strings.HasPrefix(sess.ID, prefix) {
			kept = append(kept, sess)
		}
	}
	return kept, nil
}

// PruneFilter chooses the sessions PruneSessions deletes.
type PruneFilter struct {
	// Before: sessions whose last message (or start) is older than this.
	Before time.Time
	// EndedOnly keeps sessions that are still open.
	EndedOnly bool
}

func (f PruneFilter) where() (string, []any) {
	w, args := `updated_at < ?`, []any{ms(f.Before)}
	if f.EndedOnly {
		w += ` AND ended_at IS NOT NULL`
	}
	return w, args
}

// PrunableSessions returns the sessions PruneSessions would delete now,
// least recently updated first.
func (s *Store) PrunableSessions(ctx context.Context, f PruneFilter) ([]Session, error) {
	w, args := f.where()
	out, err := s.querySessions(ctx, `SELECT `+sessionCols+` FROM sessions WHERE `+w+` ORDER BY updated_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: find sessions to prune: %w", err)
	}
	return out, nil
}

// PruneSessions deletes the sessions f chooses, with their messages, and
// returns the ids it deleted. The choice and the deletion are one
// transaction, so a session that gets a message meanwhile is kept.
func (s *Store) PruneSessions(ctx context.Context, f PruneFilter) ([]string, error) {
	var ids []string
	err := s.Write(ctx, func(tx *sql.Tx) error {
		ids = ids[:0]
		w, args := f.where()
		rows, err := tx.Query(`SELECT id FROM sessions WHERE `+w+` ORDER BY updated_at, id`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = deleteSessionsTx(tx, ids)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sessions: prune: %w", err)
	}
	return ids, nil
}

// DeleteSession deletes one session and its messages; it reports false
// when no session has that id.
func (s *Store) DeleteSession(ctx context.Context, id string) (bool, error) {
	var n int64
	err := s.Write(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = deleteSessionsTx(tx, []string{id})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sessions: delete %s: %w", id, err)
	}
	return n > 0, nil
}

// deleteSessionsTx deletes sessions and their messages (messages first:
// they refer to their session) and returns how many sessions went.
func deleteSessionsTx(tx *sql.Tx, ids []string) (int64, error) {
	var n int64
	for _, id := range ids {
		if _, err := tx.Exec(`DELETE FROM messages WHERE session_id = ?`, id); err != nil {
			return 0, err
		}
		res, err := tx.Exec(`DELETE FROM sessions WHERE id = ?`, id)
		if err != nil {
			return 0, err
		}
		k, _ := res.RowsAffected()
		n += k
	}
	return n, nil
}

// querySessions runs a query selecting sessionCols on the readers.
func (s *Store) querySessions(ctx context.Context, q string, args ...any) ([]Session, error) {
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *sess)
	}
	return out, rows.Err()
}
