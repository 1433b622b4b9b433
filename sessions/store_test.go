package sessions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald"
)

func open(t *testing.T) (*Store, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, p
}

func TestSchemaVersionAndWAL(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	v, err := s.SchemaVersion(ctx)
	if err != nil || v != len(migrations) {
		t.Fatalf("version = %d, %v", v, err)
	}
	var mode string
	if err := s.DB().QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v", mode, err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	s, p := open(t)
	if err := s.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE schema_version SET version = 999`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(p); err == nil {
		t.Fatal("a newer schema must be refused")
	}
}

func TestSessionsAndMessagesPersist(t *testing.T) {
	s, p := open(t)
	ctx := context.Background()
	src := herald.Source{Platform: "local", ChatID: "c1", ChatType: herald.ChatDM, UserID: "u1"}
	key := Key(src, KeyOptions{GroupPerUser: true})
	sess := NewSession(key, src, time.Now())
	if err := s.Append(ctx, sess, Message{SessionID: sess.ID, Role: "user", Content: "hi"}, Message{SessionID: sess.ID, Role: "assistant", Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.OpenSession(ctx, key)
	if err != nil || got == nil || got.ID != sess.ID || got.MessageCount != 2 {
		t.Fatalf("OpenSession = %+v, %v", got, err)
	}
	msgs, err := s2.Messages(ctx, sess.ID, 0)
	if err != nil || len(msgs) != 2 || msgs[0].Content != "hi" || msgs[1].Role != "assistant" {
		t.Fatalf("Messages = %+v, %v", msgs, err)
	}
	last, _ := s2.Messages(ctx, sess.ID, 1)
	if len(last) != 1 || last[0].Content != "hello" {
		t.Fatalf("Messages(limit 1) = %+v", last)
	}
}

// Concurrent writers share transactions; a failing write rolls back only
// its own changes.
func TestGroupCommitIsolatesFailures(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	src := herald.Source{Platform: "local", ChatID: "g", UserID: "u"}
	sess := NewSession("k", src, time.Now())
	if err := s.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 200)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%10 == 0 {
				errs[i] = s.Write(ctx, func(tx *sql.Tx) error {
					tx.Exec(`INSERT INTO messages(session_id, role, content, created_at) VALUES (?, 'user', 'doomed', 0)`, sess.ID)
					return errors.New("boom")
				})
				return
			}
			errs[i] = s.Append(ctx, nil, Message{SessionID: sess.ID, Role: "user", Content: fmt.Sprint(i)})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i%10 == 0) != (err != nil) {
			t.Fatalf("write %d: err = %v", i, err)
		}
	}
	msgs, _ := s.Messages(ctx, sess.ID, 0)
	if len(msgs) != 180 {
		t.Fatalf("stored %d messages, want 180", len(msgs))
	}
	for _, m := range msgs {
		if m.Content == "doomed" {
			t.Fatal("a failed write's insert was committed")
		}
	}
}

func TestKeys(t *testing.T) {
	for _, tc := range []struct {
		src  herald.Source
		o    KeyOptions
		want string
	}{
		{herald.Source{Platform: "telegram", ChatID: "42", ChatType: "dm", UserID: "7"}, KeyOptions{GroupPerUser: true}, "agent:main:telegram:dm:42"},
		{herald.Source{Platform: "telegram", ChatID: "42", ChatType: "dm", ThreadID: "9"}, KeyOptions{GroupPerUser: true}, "agent:main:telegram:dm:42:9"},
		{herald.Source{Platform: "discord", ChatID: "c", ChatType: "group", UserID: "u"}, KeyOptions{GroupPerUser: true}, "agent:main:discord:group:c:u"},
		{herald.Source{Platform: "discord", ChatID: "c", ChatType: "group", UserID: "u"}, KeyOptions{}, "agent:main:discord:group:c"},
		{herald.Source{Platform: "slack", ChatID: "c", ChatType: "channel", UserID: "u", ThreadID: "t"}, KeyOptions{GroupPerUser: true}, "agent:main:slack:channel:c:t"},
		{herald.Source{Platform: "slack", ChatID: "c", ChatType: "channel", UserID: "u", ThreadID: "t"}, KeyOptions{GroupPerUser: true, ThreadPerUser: true}, "agent:main:slack:channel:c:t:u"},
	} {
		if got := Key(tc.src, tc.o); got != tc.want {
			t.Errorf("Key(%+v) = %q, want %q", tc.src, got, tc.want)
		}
	}
	if p := KeyPlatform("agent:main:slack:channel:c"); p != "slack" {
		t.Errorf("KeyPlatform = %q", p)
	}
}

// A session created twice (a turn and an ingest both holding the turn's
// new session) is stored once, with the messages of both; the open
// sessions of a chat are found whatever its key; a healthy store passes
// its integrity check.
func TestIdempotentCreateAndChatSessions(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	now := time.Now()
	src := herald.Source{Platform: "telegram", ChatID: "-100", ChatType: herald.ChatGroup, UserID: "7"}
	sess := NewSession(Key(src, KeyOptions{GroupPerUser: true}), src, now)
	for i := range 2 {
		if err := s.Append(ctx, sess, Message{SessionID: sess.ID, Role: "user", Content: fmt.Sprint("m", i), CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Session(ctx, sess.ID)
	if err != nil || got.MessageCount != 2 {
		t.Fatalf("session %+v %v", got, err)
	}
	chatSessions, err := s.OpenSessionsOfChat(ctx, "telegram", "-100", "")
	if err != nil || len(chatSessions) != 1 || chatSessions[0].ID != sess.ID {
		t.Fatalf("open sessions of the chat: %+v %v", chatSessions, err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
}
