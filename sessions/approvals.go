package sessions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Approval is one remembered "always" answer: commands matching the
// pattern key run without asking.
type Approval struct {
	Pattern   string
	Command   string // the command that was approved first
	CreatedAt time.Time
}

// RememberApproval stores an "always" answer for a pattern key. A pattern
// already remembered keeps its first command and time.
func (s *Store) RememberApproval(ctx context.Context, pattern, command string) error {
	if pattern == "" {
		return errors.New("sessions: remember approval: empty pattern")
	}
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO approvals(pattern, command, created_at) VALUES (?, ?, ?) ON CONFLICT(pattern) DO NOTHING`,
			pattern, command, time.Now().UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("sessions: remember approval %s: %w", pattern, err)
	}
	return nil
}

// ApprovedPattern reports whether a pattern key was approved "always".
func (s *Store) ApprovedPattern(ctx context.Context, pattern string) (bool, error) {
	var one int
	err := s.rdb.QueryRowContext(ctx, `SELECT 1 FROM approvals WHERE pattern = ?`, pattern).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sessions: read approval %s: %w", pattern, err)
	}
	return true, nil
}

// Approvals lists the remembered approvals, oldest first.
func (s *Store) Approvals(ctx context.Context) ([]Approval, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT pattern, command, created_at FROM approvals ORDER BY created_at, pattern`)
	if err != nil {
		return nil, fmt.Errorf("sessions: list approvals: %w", err)
	}
	defer rows.Close()
	var out []Approval
	for rows.Next() {
		var a Approval
		var at int64
		if err := rows.Scan(&a.Pattern, &a.Command, &at); err != nil {
			return nil, fmt.Errorf("sessions: list approvals: %w", err)
		}
		a.CreatedAt = time.UnixMilli(at)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: list approvals: %w", err)
	}
	return out, nil
}

// ForgetApproval removes a remembered approval; it reports whether there
// was one.
func (s *Store) ForgetApproval(ctx context.Context, pattern string) (bool, error) {
	var n int64
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM approvals WHERE pattern = ?`, pattern)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("sessions: forget approval %s: %w", pattern, err)
	}
	return n > 0, nil
}
