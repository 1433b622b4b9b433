package sessions

// kv.go reads and writes the kv table: small named values that parts of
// herald keep across restarts (an adapter's remembered threads, say).
// Keys are namespaced by their owner with a prefix ("slack.thread/…").

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// KV returns the value stored under key, and whether there is one.
func (s *Store) KV(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := s.rdb.QueryRowContext(ctx, `SELECT value FROM kv WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("sessions: read kv %s: %w", key, err)
	}
	return v, true, nil
}

// KVWithPrefix returns every key starting with prefix and its value.
func (s *Store) KVWithPrefix(ctx context.Context, prefix string) (map[string]string, error) {
	if prefix == "" {
		return nil, errors.New("sessions: read kv: empty prefix")
	}
	where, args := s.dialect.kvPrefix(prefix)
	rows, err := s.rdb.QueryContext(ctx, `SELECT key, value FROM kv WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: read kv %s*: %w", prefix, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("sessions: read kv %s*: %w", prefix, err)
		}
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: read kv %s*: %w", prefix, err)
	}
	return out, nil
}

// prefixEnd is the least string greater than every string starting with
// prefix (prefix with its last byte below 0xff incremented).
func prefixEnd(prefix string) string {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	// all 0xff: no upper bound fits in a string; \xff… sorts last anyway
	return prefix + "\xff"
}

// SetKV stores value under key, replacing any value there.
func (s *Store) SetKV(ctx context.Context, key, value string) error {
	if key == "" {
		return errors.New("sessions: write kv: empty key")
	}
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO kv(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	})
	if err != nil {
		return fmt.Errorf("sessions: write kv %s: %w", key, err)
	}
	return nil
}

// DeleteKV removes keys, in one transaction; absent keys are no error.
func (s *Store) DeleteKV(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	err := s.writeSimple(ctx, func(tx *sql.Tx) error {
		for _, k := range keys {
			if _, err := tx.Exec(`DELETE FROM kv WHERE key = ?`, k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sessions: delete %d kv keys: %w", len(keys), err)
	}
	return nil
}
