package sessions

// kv.go: small named values kept in state.db's kv table (the OpenAI
// Responses API's response ids, say), for state that needs no table of
// its own.

import (
	"context"
	"database/sql"
	"errors"
)

// GetKV returns the value stored under key (ok false when none).
func (s *Store) GetKV(ctx context.Context, key string) (value string, ok bool, err error) {
	err = s.rdb.QueryRowContext(ctx, `SELECT value FROM kv WHERE key = ?`, key).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return value, true, nil
}

// SetKV stores value under key, replacing what was there.
func (s *Store) SetKV(ctx context.Context, key, value string) error {
	return s.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO kv(key, value) VALUES (?,?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
}

// DeleteKV removes key; it reports whether it was there.
func (s *Store) DeleteKV(ctx context.Context, key string) (bool, error) {
	var n int64
	err := s.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`DELETE FROM kv WHERE key = ?`, key)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n > 0, err
}
