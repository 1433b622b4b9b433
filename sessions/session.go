package sessions

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/heraldgw/herald"
)

// Session is one conversation: the messages between two resets of a chat.
type Session struct {
	ID           string     `json:"session_id"`
	Key          string     `json:"session_key"`
	Platform     string     `json:"platform"`
	ChatID       string     `json:"chat_id"`
	ChatType     string     `json:"chat_type"`
	UserID       string     `json:"user_id"`
	UserName     string     `json:"user_name"`
	ThreadID     string     `json:"thread_id"`
	Model        string     `json:"model"`
	Title        string     `json:"title"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
	EndedAt      *time.Time `json:"ended_at,omitempty"`
	EndReason    string     `json:"end_reason,omitempty"`
	MessageCount int        `json:"message_count"`
}

// Message is one stored message of a session, in OpenAI roles (user,
// assistant, tool, system).
type Message struct {
	ID         int64     `json:"id"`
	SessionID  string    `json:"session_id"`
	Role       string    `json:"role"`
	Content    string    `json:"content"`
	ToolCalls  string    `json:"tool_calls,omitempty"` // JSON, as the model sent it
	ToolCallID string    `json:"tool_call_id,omitempty"`
	ToolName   string    `json:"tool_name,omitempty"`
	PlatformID string    `json:"platform_message_id,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// NewSessionID makes an id in Hermes' form, YYYYmmdd_HHMMSS_<8 hex>.
func NewSessionID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102_150405") + "_" + hex.EncodeToString(b[:])
}

// NewSession fills a Session for src under key, not yet stored.
func NewSession(key string, src herald.Source, now time.Time) *Session {
	return &Session{
		ID: NewSessionID(now), Key: key, Platform: string(src.Platform), ChatID: src.ChatID,
		ChatType: string(src.ChatType), UserID: src.UserID, UserName: src.UserName, ThreadID: src.ThreadID,
		CreatedAt: now, UpdatedAt: now,
	}
}

const sessionCols = `id, key, platform, chat_id, chat_type, user_id, user_name, thread_id, model, title, created_at, updated_at, ended_at, end_reason, message_count`

func scanSession(sc interface{ Scan(...any) error }) (*Session, error) {
	var s Session
	var created, updated int64
	var ended sql.NullInt64
	if err := sc.Scan(&s.ID, &s.Key, &s.Platform, &s.ChatID, &s.ChatType, &s.UserID, &s.UserName, &s.ThreadID, &s.Model, &s.Title, &created, &updated, &ended, &s.EndReason, &s.MessageCount); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt, s.EndedAt = fromMS(created), fromMS(updated), fromNullMS(ended)
	return &s, nil
}

// OpenSession returns the open session for key, or nil when there is none.
func (s *Store) OpenSession(ctx context.Context, key string) (*Session, error) {
	row := s.rdb.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE key = ? AND ended_at IS NULL ORDER BY created_at DESC LIMIT 1`, key)
	sess, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessions: open session %s: %w", key, err)
	}
	return sess, nil
}

// ErrNoSession is returned (wrapped) by Session for an id that names no
// stored session.
var ErrNoSession = errors.New("sessions: no session")

// Session returns the session with that id.
func (s *Store) Session(ctx context.Context, id string) (*Session, error) {
	row := s.rdb.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id)
	sess, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w %s", ErrNoSession, id)
	}
	return sess, err
}

// CreateSession stores a new session (nothing happens when a session with
// its id is stored already).
func (s *Store) CreateSession(ctx context.Context, sess *Session) error {
	return s.writeSimple(ctx, func(tx *sql.Tx) error { return s.insertSession(tx, sess) })
}

func (s *Store) insertSession(tx *sql.Tx, sess *Session) error {
	_, err := tx.Stmt(s.stInsertSession).Exec(sess.ID, sess.Key, sess.Platform, sess.ChatID, sess.ChatType, sess.UserID, sess.UserName, sess.ThreadID, sess.Model, sess.Title, ms(sess.CreatedAt), ms(sess.UpdatedAt))
	if err != nil {
		return fmt.Errorf("sessions: create %s: %w", sess.ID, err)
	}
	return nil
}

// EndSession marks a session ended (reset, expiry) with a reason.
func (s *Store) EndSession(ctx context.Context, id, reason string, at time.Time) error {
	return s.writeSimple(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL`, ms(at), reason, id)
		return err
	})
}

// OpenSessionsOfChat returns the open sessions of one chat (of any chat
// type, and every participant's where groups are per user), most recently
// used first.
func (s *Store) OpenSessionsOfChat(ctx context.Context, platform, chatID, threadID string) ([]*Session, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE ended_at IS NULL AND platform = ? AND chat_id = ? AND thread_id = ? ORDER BY updated_at DESC`, platform, chatID, threadID)
	if err != nil {
		return nil, fmt.Errorf("sessions: open sessions of %s:%s: %w", platform, chatID, err)
	}
	defer rows.Close()
	var out []*Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("sessions: open sessions of %s:%s: %w", platform, chatID, err)
		}
		out = append(out, sess)
	}
	return out, rows.Err()
}

// MoveChat re-keys the open sessions of chat from on platform to chat to
// (a Telegram group upgraded to a supergroup gets a new id), so their
// conversations go on there, and returns how many moved. A session whose
// new key already has an open session stays where it was (the policy
// expires it); ended sessions keep the chat they happened in.
func (s *Store) MoveChat(ctx context.Context, platform, from, to string) (int, error) {
	moved := 0
	err := s.Write(ctx, func(tx *sql.Tx) error {
		moved = 0
		rows, err := tx.Query(`SELECT id, key FROM sessions WHERE ended_at IS NULL AND platform = ? AND chat_id = ?`, platform, from)
		if err != nil {
			return err
		}
		type row struct{ id, key string }
		var open []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.key); err != nil {
				rows.Close()
				return err
			}
			open = append(open, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range open {
			key, ok := RekeyChat(r.key, from, to)
			if !ok {
				key = r.key // a key of another shape: only the chat id moves
			}
			var taken int
			if err := tx.QueryRow(`SELECT COUNT(*) FROM sessions WHERE ended_at IS NULL AND key = ?`, key).Scan(&taken); err != nil {
				return err
			}
			if taken > 0 && key != r.key {
				continue
			}
			if _, err := tx.Exec(`UPDATE sessions SET key = ?, chat_id = ? WHERE id = ?`, key, to, r.id); err != nil {
				return err
			}
			moved++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sessions: move chat %s:%s to %s: %w", platform, from, to, err)
	}
	return moved, nil
}

// ReplaceSession ends old (if not nil) and creates next in one transaction.
func (s *Store) ReplaceSession(ctx context.Context, old *Session, reason string, next *Session) error {
	return s.writeSimple(ctx, func(tx *sql.Tx) error {
		if old != nil {
			if _, err := tx.Exec(`UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL`, ms(next.CreatedAt), reason, old.ID); err != nil {
				return err
			}
		}
		return s.insertSession(tx, next)
	})
}

// Append stores messages (all of one session or several) and bumps each
// session's updated_at and message_count, in one committed transaction.
// The session is created first when create is not nil and not stored yet
// (so a new session and its first messages cost one commit, and two
// writers that both hold a new session may both pass it).
func (s *Store) Append(ctx context.Context, create *Session, msgs ...Message) error {
	if len(msgs) == 0 && create == nil {
		return nil
	}
	return s.writeSimple(ctx, func(tx *sql.Tx) error {
		if create != nil {
			if err := s.insertSession(tx, create); err != nil {
				return err
			}
		}
		return s.appendTx(tx, msgs)
	})
}

func (s *Store) appendTx(tx *sql.Tx, msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	stmt := tx.Stmt(s.stInsertMsg)
	counts := make(map[string]int, 1)
	last := make(map[string]int64, 1)
	for _, m := range msgs {
		if m.CreatedAt.IsZero() {
			m.CreatedAt = time.Now()
		}
		if _, err := stmt.Exec(m.SessionID, m.Role, m.Content, m.ToolCalls, m.ToolCallID, m.ToolName, m.PlatformID, ms(m.CreatedAt)); err != nil {
			return fmt.Errorf("sessions: append to %s: %w", m.SessionID, err)
		}
		counts[m.SessionID]++
		last[m.SessionID] = ms(m.CreatedAt)
	}
	for id, n := range counts {
		if _, err := tx.Stmt(s.stBumpSession).Exec(n, last[id], id); err != nil {
			return err
		}
	}
	return nil
}

// Messages returns the last limit messages of a session in order (all
// when limit <= 0).
func (s *Store) Messages(ctx context.Context, sessionID string, limit int) ([]Message, error) {
	q := `SELECT id, session_id, role, content, tool_calls, tool_call_id, tool_name, platform_message_id, created_at FROM messages WHERE session_id = ? ORDER BY id`
	args := []any{sessionID}
	if limit > 0 {
		q = `SELECT * FROM (SELECT id, session_id, role, content, tool_calls, tool_call_id, tool_name, platform_message_id, created_at FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT ?) AS recent ORDER BY id`
		args = append(args, limit)
	}
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: messages of %s: %w", sessionID, err)
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var m Message
		var at int64
		if err := rows.Scan(&m.ID, &m.SessionID, &m.Role, &m.Content, &m.ToolCalls, &m.ToolCallID, &m.ToolName, &m.PlatformID, &at); err != nil {
			return nil, err
		}
		m.CreatedAt = fromMS(at)
		out = append(out, m)
	}
	return out, rows.Err()
}

// ListOptions filters List.
type ListOptions struct {
	Platform string
	Limit    int
	OpenOnly bool
}

// List returns sessions, most recently updated first.
func (s *Store) List(ctx context.Context, o ListOptions) ([]Session, error) {
	var where []string
	var args []any
	if o.Platform != "" {
		where = append(where, "platform = ?")
		args = append(args, o.Platform)
	}
	if o.OpenOnly {
		where = append(where, "ended_at IS NULL")
	}
	q := `SELECT ` + sessionCols + ` FROM sessions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY updated_at DESC"
	if o.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, o.Limit)
	}
	out, err := s.querySessions(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sessions: list: %w", err)
	}
	return out, nil
}

// Offset returns a platform's stored offset ("" when none).
func (s *Store) Offset(ctx context.Context, platform string) (string, error) {
	var v string
	err := s.rdb.QueryRowContext(ctx, `SELECT value FROM platform_offsets WHERE platform = ?`, platform).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetOffset stores a platform's offset (e.g. Telegram's next update_id).
func (s *Store) SetOffset(ctx context.Context, platform, value string) error {
	return s.writeSimple(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO platform_offsets(platform, value, updated_at) VALUES (?,?,?) ON CONFLICT(platform) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, platform, value, ms(time.Now()))
		return err
	})
}

// Check runs SQLite's quick_check over the whole database and returns an
// error naming the damage it finds (nil when there is none). It reads
// every page, so on a large store it takes a while: run it off any path a
// message waits on. On PostgreSQL, whose server looks after its own pages,
// it checks that the database answers with a schema this herald knows.
func (s *Store) Check(ctx context.Context) error {
	if s.dialect != sqliteDialect {
		v, err := s.SchemaVersion(ctx)
		if err != nil {
			return fmt.Errorf("sessions: check %s: %w", s.where, err)
		}
		if v != len(s.dialect.migrations) {
			return fmt.Errorf("sessions: %s has schema version %d, want %d", s.where, v, len(s.dialect.migrations))
		}
		return nil
	}
	rows, err := s.rdb.QueryContext(ctx, `PRAGMA quick_check(5)`)
	if err != nil {
		return fmt.Errorf("sessions: check %s: %w", s.path, err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("sessions: check %s: %w", s.path, err)
		}
		found = append(found, line)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sessions: check %s: %w", s.path, err)
	}
	if len(found) == 1 && found[0] == "ok" {
		return nil
	}
	return fmt.Errorf("sessions: %s is damaged: %s", s.path, strings.Join(found, "; "))
}
