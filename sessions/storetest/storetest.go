// Package storetest is the test suite every backend of sessions.Store
// passes: SQLite and PostgreSQL run the same cases (sessions/backends_test.go),
// so a behaviour the gateway relies on cannot hold on one engine only.
//
// A case gets a new, empty database; Opener opens it, and opening it again
// after Close is how a case checks that what it stored survives a restart.
package storetest

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/sessions"
)

// Opener opens one database; every call opens the same one.
type Opener func() (*sessions.Store, error)

// Fresh makes a new, empty database for t and returns its Opener.
type Fresh func(t testing.TB) Opener

// Run runs the suite, one subtest per part of the store.
func Run(t *testing.T, fresh Fresh) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, Fresh)
	}{
		{"schema", testSchema},
		{"sessions", testSessionsPersist},
		{"odd text", testOddText},
		{"write isolation", testWriteIsolation},
		{"idempotent create", testIdempotentCreate},
		{"reset", testReset},
		{"summary", testSummary},
		{"movechat", testMoveChat},
		{"offsets", testOffsets},
		{"approvals", testApprovals},
		{"inbox", testInbox},
		{"inbox concurrent", testInboxConcurrent},
		{"inbox prune", testPruneInbound},
		{"kv", testKV},
		{"outbox", testOutbox},
		{"sendqueue", testSendQueue},
		{"pairing", testPairingFlow},
		{"pairing limits", testPairingLimits},
		{"cron", testCron},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, fresh) })
	}
}

// open opens the database and closes it when t ends.
func open(t testing.TB, o Opener) *sessions.Store {
	t.Helper()
	s, err := o()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func testSchema(t *testing.T, fresh Fresh) {
	o := fresh(t)
	s := open(t, o)
	ctx := t.Context()
	v, err := s.SchemaVersion(ctx)
	if err != nil || v < 1 {
		t.Fatalf("schema version = %d, %v", v, err)
	}
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	// opening again finds nothing to migrate
	s2 := open(t, o)
	if v2, err := s2.SchemaVersion(ctx); err != nil || v2 != v {
		t.Fatalf("reopened: version %d, %v; want %d", v2, err, v)
	}
	if s.ReplicaID() == "" || s.ReplicaID() == s2.ReplicaID() {
		t.Fatalf("replica ids %q and %q: want two different ones", s.ReplicaID(), s2.ReplicaID())
	}
	s2.Close()
	if err := s2.SetKV(ctx, "k", "v"); !errors.Is(err, sessions.ErrClosed) {
		t.Fatalf("a write after Close: %v, want ErrClosed", err)
	}
	// a database from a newer herald is refused
	if err := s.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE schema_version SET version = 999`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s3, err := o(); err == nil {
		s3.Close()
		t.Fatal("a newer schema must be refused")
	}
}

func testSessionsPersist(t *testing.T, fresh Fresh) {
	o := fresh(t)
	s := open(t, o)
	ctx := t.Context()
	src := herald.Source{Platform: "local", ChatID: "c1", ChatType: herald.ChatDM, UserID: "u1"}
	key := sessions.Key(src, sessions.KeyOptions{GroupPerUser: true})
	sess := sessions.NewSession(key, src, time.Now())
	if err := s.Append(ctx, sess, sessions.Message{SessionID: sess.ID, Role: "user", Content: "hi"},
		sessions.Message{SessionID: sess.ID, Role: "assistant", Content: "hello", ToolCalls: `[{"id":"1"}]`}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := open(t, o)
	got, err := s2.OpenSession(ctx, key)
	if err != nil || got == nil || got.ID != sess.ID || got.MessageCount != 2 || got.ChatType != "dm" {
		t.Fatalf("OpenSession = %+v, %v", got, err)
	}
	msgs, err := s2.Messages(ctx, sess.ID, 0)
	if err != nil || len(msgs) != 2 || msgs[0].Content != "hi" || msgs[1].Role != "assistant" || msgs[1].ToolCalls != `[{"id":"1"}]` {
		t.Fatalf("Messages = %+v, %v", msgs, err)
	}
	last, _ := s2.Messages(ctx, sess.ID, 1)
	if len(last) != 1 || last[0].Content != "hello" {
		t.Fatalf("Messages(limit 1) = %+v", last)
	}
	list, err := s2.List(ctx, sessions.ListOptions{Platform: "local", OpenOnly: true, Limit: 5})
	if err != nil || len(list) != 1 || list[0].ID != sess.ID {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if _, err := s2.Session(ctx, "nope"); !errors.Is(err, sessions.ErrNoSession) {
		t.Fatalf("Session(nope) = %v", err)
	}
}

// Text as tools and platforms hand it over is stored whatever it holds: a
// command's output may carry NUL bytes and invalid UTF-8, which
// PostgreSQL's text refuses. Valid text reads back as it was; on an engine
// that cannot hold such bytes they read back as U+FFFD, and the message
// is kept all the same.
func testOddText(t *testing.T, fresh Fresh) {
	s := open(t, fresh(t))
	ctx := t.Context()
	src := herald.Source{Platform: "local", ChatID: "odd", ChatType: herald.ChatDM, UserID: "u"}
	sess := sessions.NewSession(sessions.Key(src, sessions.KeyOptions{}), src, time.Now())
	valid := "émoji 🦊, quotes ' \" ?, a long line " + strings.Repeat("x", 100_000)
	binary := "bin\x00ary \xff\xfe end"
	err := s.Append(ctx, sess, sessions.Message{SessionID: sess.ID, Role: "user", Content: valid},
		sessions.Message{SessionID: sess.ID, Role: "tool", ToolName: "terminal", Content: binary})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	msgs, err := s.Messages(ctx, sess.ID, 0)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("messages: %d %v", len(msgs), err)
	}
	if msgs[0].Content != valid {
		t.Errorf("valid text changed: %.60q", msgs[0].Content)
	}
	if got := msgs[1].Content; got != binary && got != "bin\uFFFDary \uFFFD end" {
		t.Errorf("binary text read back as %q", got)
	}
	if err := s.SetKV(ctx, "odd/\x00key", "v\x00"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.KV(ctx, "odd/\x00key"); err != nil || !ok {
		t.Errorf("kv under an odd key: %v %v", ok, err)
	}
}

// Concurrent writers: a failing write rolls back only its own changes.
func testWriteIsolation(t *testing.T, fresh Fresh) {
	s := open(t, fresh(t))
	ctx := t.Context()
	src := herald.Source{Platform: "local", ChatID: "g", UserID: "u"}
	sess := sessions.NewSession("k", src, time.Now())
	if err := s.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 100)
	for i := range errs {
		wg.Go(func() {
			if i%10 == 0 {
				errs[i] = s.Write(ctx, func(tx *sql.Tx) error {
					if _, err := tx.Exec(`INSERT INTO messages(session_id, role, content, created_at) VALUES (?, 'user', 'doomed', 0)`, sess.ID); err != nil {
						return err
					}
					return errors.New("boom")
				})
				return
			}
			errs[i] = s.Append(ctx, nil, sessions.Message{SessionID: sess.ID, Role: "user", Content: fmt.Sprint(i)})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if (i%10 == 0) != (err != nil) {
			t.Fatalf("write %d: err = %v", i, err)
		}
	}
	msgs, _ := s.Messages(ctx, sess.ID, 0)
	if len(msgs) != 90 {
		t.Fatalf("stored %d messages, want 90", len(msgs))
	}
	for _, m := range msgs {
		if m.Content == "doomed" {
			t.Fatal("a failed write's insert was committed")
		}
	}
	if got, _ := s.Session(ctx, sess.ID); got.MessageCount != 90 {
		t.Fatalf("message_count = %d, want 90", got.MessageCount)
	}
	// a panicking write is an error, not a crash
	if err := s.Write(ctx, func(*sql.Tx) error { panic("boom") }); err == nil {
		t.Fatal("a panicking write reported success")
	}
}

// A session created twice (a turn and an ingest both holding the turn's
// new session) is stored once, with the messages of both; the open
// sessions of a chat are found whatever its key.
func testIdempotentCreate(t *testing.T, fresh Fresh) {
	s := open(t, fresh(t))
	ctx := t.Context()
	now := time.Now()
	src := herald.Source{Platform: "telegram", ChatID: "-100", ChatType: herald.ChatGroup, UserID: "7"}
	sess := sessions.NewSession(sessions.Key(src, sessions.KeyOptions{GroupPerUser: true}), src, now)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			if err := s.Append(ctx, sess, sessions.Message{SessionID: sess.ID, Role: "user", Content: fmt.Sprint("m", i), CreatedAt: now}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.Session(ctx, sess.ID)
	if err != nil || got.MessageCount != 2 {
		t.Fatalf("session %+v %v", got, err)
	}
	chatSessions, err := s.OpenSessionsOfChat(ctx, "telegram", "-100", "")
	if err != nil || len(chatSessions) != 1 || chatSessions[0].ID != sess.ID {
		t.Fatalf("open sessions of the chat: %+v %v", chatSessions, err)
	}
}

// A reset ends the old session with its reason and opens the next one in
// one step; an ended session is no chat's open session.
func testReset(t *testing.T, fresh Fresh) {
	s := open(t, fresh(t))
	ctx := t.Context()
	now := time.UnixMilli(1_700_000_000_000)
	src := herald.Source{Platform: "local", ChatID: "c", ChatType: herald.ChatDM, UserID: "u"}
	key := sessions.Key(src, sessions.KeyOptions{})
	first := sessions.NewSession(key, src, now)
	if err := s.CreateSession(ctx, first); err != nil {
		t.Fatal(err)
	}
	next := sessions.NewSession(key, src, now.Add(time.Hour))
	if err := s.ReplaceSession(ctx, first, sessions.ResetIdle, next); err != nil {
		t.Fatal(err)
	}
	open, err := s.OpenSession(ctx, key)
	if err != nil || open == nil || open.ID != next.ID {
		t.Fatalf("open after reset: %+v %v", open, err)
	}
	old, _ := s.Session(ctx, first.ID)
	if old.EndedAt == nil || !old.EndedAt.Equal(next.CreatedAt) || old.EndReason != sessions.ResetIdle {
		t.Fatalf("ended session: %+v", old)
	}
	if err := s.EndSession(ctx, next.ID, "reset", now.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// ending twice keeps the first end
	if err := s.EndSession(ctx, next.ID, "other", now.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if open, err := s.OpenSession(ctx, key); err != nil || open != nil {
		t.Fatalf("open after end: %+v %v", open, err)
	}
	if got, _ := s.Session(ctx, next.ID); got.EndReason != "reset" || got.EndedAt.UnixMilli() != now.Add(2*time.Hour).UnixMilli() {
		t.Fatalf("ended twice: %+v", got)
	}
}

// Summaries: each session with its last user or assistant message, the
// newest activity first.
func testSummary(t *testing.T, fresh Fresh) {
	s := open(t, fresh(t))
	ctx := t.Context()
	now := time.UnixMilli(1_700_000_000_000)
	mk := func(chat string, at time.Time, msgs ...sessions.Message) *sessions.Session {
		src := herald.Source{Platform: "local", ChatID: chat, ChatType: herald.ChatDM, UserID: "u"}
		sess := sessions.NewSession(sessions.Key(src, sessions.KeyOptions{}), src, at)
		for i := range msgs {
			msgs[i].SessionID = sess.ID
		}
		if err := s.Append(ctx, sess, msgs...); err != nil {
			t.Fatal(err)
		}
		return sess
	}
	a := mk("a", now, sessions.Message{Role: "user", Content: "question", CreatedAt: now.Add(time.Minute)},
		sessions.Message{Role: "assistant", Content: "answer", CreatedAt: now.Add(2 * time.Minute)},
		sessions.Message{Role: "tool", Content: "tool output", CreatedAt: now.Add(3 * time.Minute)})
	b := mk("b", now.Add(10*time.Minute))
	got, err := s.Summaries(ctx, sessions.SummaryOptions{})
	if err != nil || len(got) != 2 {
		t.Fatalf("summaries: %+v %v", got, err)
	}
	if got[0].ID != b.ID || !got[0].LastMessageAt.Equal(b.CreatedAt) || got[0].LastMessage != "" {
		t.Errorf("first: %+v", got[0])
	}
	if got[1].ID != a.ID || got[1].LastMessage != "answer" || got[1].LastMessageAt.UnixMilli() != now.Add(3*time.Minute).UnixMilli() {
		t.Errorf("second: %+v", got[1])
	}
	if only, _ := s.Summaries(ctx, sessions.SummaryOptions{Platform: "local", ChatID: "a", Limit: 1}); len(only) != 1 || only[0].ID != a.ID {
		t.Errorf("of chat a: %+v", only)
	}
}

// A group that became a supergroup takes its open conversations along.
func testMoveChat(t *testing.T, fresh Fresh) {
	s := open(t, fresh(t))
	ctx := t.Context()
	now := time.Now()
	opts := sessions.KeyOptions{GroupPerUser: true}
	mk := func(platform herald.Platform, chat, user string) *sessions.Session {
		src := herald.Source{Platform: platform, ChatID: chat, ChatType: herald.ChatGroup, UserID: user}
		sess := sessions.NewSession(sessions.Key(src, opts), src, now)
		if err := s.Append(ctx, sess, sessions.Message{SessionID: sess.ID, Role: "user", Content: "hi from " + user, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		return sess
	}
	alice, bob := mk("telegram", "-5", "1"), mk("telegram", "-5", "2")
	ended := mk("telegram", "-5", "3")
	if err := s.EndSession(ctx, ended.ID, "idle", now); err != nil {
		t.Fatal(err)
	}
	other, elsewhere := mk("telegram", "-6", "1"), mk("discord", "-5", "1")
	// carol already talks in the new supergroup: her old session stays
	carolOld, carolNew := mk("telegram", "-5", "4"), mk("telegram", "-1005", "4")

	n, err := s.MoveChat(ctx, "telegram", "-5", "-1005")
	if err != nil || n != 2 {
		t.Fatalf("moved %d, %v; want 2", n, err)
	}
	for _, tc := range []struct {
		sess *sessions.Session
		key  string
	}{
		{alice, "agent:main:telegram:group:-1005:1"},
		{bob, "agent:main:telegram:group:-1005:2"},
		{ended, "agent:main:telegram:group:-5:3"},
		{other, "agent:main:telegram:group:-6:1"},
		{elsewhere, "agent:main:discord:group:-5:1"},
		{carolOld, "agent:main:telegram:group:-5:4"},
		{carolNew, "agent:main:telegram:group:-1005:4"},
	} {
		got, err := s.Session(ctx, tc.sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Key != tc.key {
			t.Errorf("session of %s: key %s, want %s", tc.sess.Key, got.Key, tc.key)
		}
	}
	atNew, err := s.OpenSession(ctx, "agent:main:telegram:group:-1005:1")
	if err != nil || atNew == nil || atNew.ID != alice.ID || atNew.ChatID != "-1005" {
		t.Fatalf("open session at the new key: %+v %v", atNew, err)
	}
	msgs, err := s.Messages(ctx, atNew.ID, 10)
	if err != nil || len(msgs) != 1 || msgs[0].Content != "hi from 1" {
		t.Errorf("messages = %+v %v", msgs, err)
	}
	if n, err := s.MoveChat(ctx, "telegram", "-5", "-1005"); err != nil || n != 0 {
		t.Errorf("second move: %d, %v", n, err)
	}
}

func testOffsets(t *testing.T, fresh Fresh) {
	o := fresh(t)
	s := open(t, o)
	ctx := t.Context()
	if v, err := s.Offset(ctx, "telegram"); err != nil || v != "" {
		t.Fatalf("no offset: %q %v", v, err)
	}
	for _, v := range []string{"41", "42"} {
		if err := s.SetOffset(ctx, "telegram", v); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if v, err := open(t, o).Offset(ctx, "telegram"); err != nil || v != "42" {
		t.Fatalf("offset after reopen: %q %v", v, err)
	}
}

func testApprovals(t *testing.T, fresh Fresh) {
	st := open(t, fresh(t))
	ctx := t.Context()
	if ok, err := st.ApprovedPattern(ctx, "rm_rf"); ok || err != nil {
		t.Fatalf("fresh store: %v %v", ok, err)
	}
	for _, c := range []struct{ pattern, command string }{{"rm_rf", "rm -rf build"}, {"sudo", "sudo ls"}, {"rm_rf", "rm -rf other"}} {
		if err := st.RememberApproval(ctx, c.pattern, c.command); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.RememberApproval(ctx, "", "x"); err == nil {
		t.Error("empty pattern accepted")
	}
	list, err := st.Approvals(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("%+v %v", list, err)
	}
	for _, a := range list {
		if a.Pattern == "rm_rf" && a.Command != "rm -rf build" {
			t.Errorf("first command not kept: %+v", a)
		}
	}
	if ok, _ := st.ApprovedPattern(ctx, "sudo"); !ok {
		t.Error("sudo not remembered")
	}
	if ok, _ := st.ForgetApproval(ctx, "sudo"); !ok {
		t.Error("forget reported nothing")
	}
	if ok, _ := st.ApprovedPattern(ctx, "sudo"); ok {
		t.Error("sudo still remembered")
	}
}

func testInbox(t *testing.T, fresh Fresh) {
	o := fresh(t)
	s := open(t, o)
	ctx := t.Context()
	t0 := time.UnixMilli(1_700_000_000_000)
	in := sessions.Inbound{Platform: "telegram", ChatID: "1", MessageID: "7", Message: `{"text":"hi"}`, ReceivedAt: t0}
	if fresh, err := s.RecordInbound(ctx, in); err != nil || !fresh {
		t.Fatalf("first record: fresh=%v err=%v", fresh, err)
	}
	if fresh, err := s.RecordInbound(ctx, in); err != nil || fresh {
		t.Fatalf("second record: fresh=%v err=%v; want a duplicate", fresh, err)
	}
	other := in
	other.ChatID = "2"
	if fresh, _ := s.RecordInbound(ctx, other); !fresh {
		t.Fatal("the same message id in another chat is a different message")
	}
	s.Close()

	// after a restart: still known, still unfinished
	s2 := open(t, o)
	if fresh, _ := s2.RecordInbound(ctx, in); fresh {
		t.Fatal("a journalled message was new again after a restart")
	}
	rows, err := s2.UnfinishedInbound(ctx)
	if err != nil || len(rows) != 2 || rows[0].ChatID != "1" || rows[0].Message != `{"text":"hi"}` || rows[0].State != sessions.InboundReceived || !rows[0].ReceivedAt.Equal(t0) {
		t.Fatalf("unfinished = %+v, %v", rows, err)
	}
	if err := s2.SetInboundState(ctx, "telegram", "1", "7", sessions.InboundReplayed, t0); err != nil {
		t.Fatal(err)
	}
	if err := s2.SetInboundState(ctx, "telegram", "2", "7", sessions.InboundDone, t0); err != nil {
		t.Fatal(err)
	}
	rows, _ = s2.UnfinishedInbound(ctx)
	if len(rows) != 1 || rows[0].ChatID != "1" || rows[0].State != sessions.InboundReplayed {
		t.Fatalf("unfinished after marking = %+v", rows)
	}
	var body string
	s2.DB().QueryRow(`SELECT message FROM inbox WHERE chat_id = '2'`).Scan(&body)
	if body != "" {
		t.Fatalf("a finished row keeps its message body %q", body)
	}
	if err := s2.FinishInbound(ctx, []sessions.InboundKey{{Platform: "telegram", ChatID: "1", MessageID: "7"}}, sessions.InboundAbandoned, t0); err != nil {
		t.Fatal(err)
	}
	if rows, _ = s2.UnfinishedInbound(ctx); len(rows) != 0 {
		t.Fatalf("unfinished after finishing all: %+v", rows)
	}
}

// The same message arriving at many writers at once (a platform's retry
// reaching two replicas) is new to exactly one of them.
func testInboxConcurrent(t *testing.T, fresh Fresh) {
	s := open(t, fresh(t))
	ctx := t.Context()
	const writers = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	fresh1 := 0
	for range writers {
		wg.Go(func() {
			ok, err := s.RecordInbound(ctx, sessions.Inbound{Platform: "slack", ChatID: "C", MessageID: "1.0", ReceivedAt: time.Now()})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				fresh1++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if fresh1 != 1 {
		t.Fatalf("the message was new to %d writers, want 1", fresh1)
	}
}

func testPruneInbound(t *testing.T, fresh Fresh) {
	s := open(t, fresh(t))
	ctx := t.Context()
	t0 := time.UnixMilli(1_700_000_000_000)
	for i := range 10 {
		id := fmt.Sprint(i)
		if _, err := s.RecordInbound(ctx, sessions.Inbound{Platform: "p", ChatID: "c", MessageID: id, ReceivedAt: t0}); err != nil {
			t.Fatal(err)
		}
		if i < 8 {
			s.SetInboundState(ctx, "p", "c", id, sessions.InboundDone, t0.Add(time.Duration(i)*time.Hour))
		}
	}
	// rows 0..1 are older than the cutoff; of 2..7, keep the newest 4
	n, err := s.PruneInbound(ctx, t0.Add(2*time.Hour), 4)
	if err != nil || n != 4 {
		t.Fatalf("pruned %d, %v; want 4", n, err)
	}
	var left []string
	rows, err := s.UnfinishedInbound(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		left = append(left, r.MessageID)
	}
	if fmt.Sprint(left) != "[8 9]" {
		t.Fatalf("unfinished left %v; want [8 9]", left)
	}
	// the 4 newest finished rows are still known: not new again
	for _, id := range []string{"4", "7"} {
		if fresh, _ := s.RecordInbound(ctx, sessions.Inbound{Platform: "p", ChatID: "c", MessageID: id, ReceivedAt: t0}); fresh {
			t.Errorf("kept row %s was pruned", id)
		}
	}
	if fresh, _ := s.RecordInbound(ctx, sessions.Inbound{Platform: "p", ChatID: "c", MessageID: "3", ReceivedAt: t0}); !fresh {
		t.Error("row 3 was not pruned")
	}
	if n, err := s.PruneInbound(ctx, t0, 0); err != nil || n != 4 {
		t.Fatalf("keep 0 pruned %d, %v; want the 4 finished", n, err)
	}
}

func testKV(t *testing.T, fresh Fresh) {
	o := fresh(t)
	st := open(t, o)
	ctx := t.Context()
	for k, v := range map[string]string{"a/1": "x", "a/2": "y", "a%_": "z", "b/1": "w", "é/1": "u", "é/2": "v", "f": "q"} {
		if err := st.SetKV(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetKV(ctx, "a/1", "x2"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := st.KV(ctx, "a/1"); err != nil || !ok || v != "x2" {
		t.Errorf("KV(a/1) = %q, %v, %v; want x2", v, ok, err)
	}
	if _, ok, err := st.KV(ctx, "nope"); err != nil || ok {
		t.Errorf("KV(nope) = %v, %v; want absent", ok, err)
	}
	got, err := st.KVWithPrefix(ctx, "a/")
	if err != nil || len(got) != 2 || got["a/1"] != "x2" || got["a/2"] != "y" {
		t.Errorf("KVWithPrefix(a/) = %v, %v", got, err)
	}
	if got, err := st.KVWithPrefix(ctx, "é"); err != nil || len(got) != 2 || got["é/2"] != "v" {
		t.Errorf("KVWithPrefix(é) = %v, %v", got, err)
	}
	if err := st.DeleteKV(ctx, "a/1", "absent"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = open(t, o)
	got, err = st.KVWithPrefix(ctx, "a")
	if err != nil || len(got) != 2 || got["a/2"] != "y" || got["a%_"] != "z" {
		t.Errorf("after reopen KVWithPrefix(a) = %v, %v", got, err)
	}
	if err := st.SetKV(ctx, "", "v"); err == nil {
		t.Error("SetKV with an empty key succeeded")
	}
}

// The outbox keeps messages per chat in order across a reopen, reads
// after an id, edits, and prunes by age and by count per chat.
func testOutbox(t *testing.T, fresh Fresh) {
	o := fresh(t)
	s := open(t, o)
	ctx := t.Context()
	now := time.Now()
	old, err := s.AppendOutbox(ctx, sessions.OutboxMessage{Platform: "local", ChatID: "old", Text: "stale", CreatedAt: now.Add(-sessions.OutboxMaxAge - time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, text := range []string{"one", "two", "three"} {
		m, err := s.AppendOutbox(ctx, sessions.OutboxMessage{Platform: "local", ChatID: "c1", Text: text, File: map[bool]string{true: `{"id":"f1"}`}[i == 2], CreatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	if _, err := s.AppendOutbox(ctx, sessions.OutboxMessage{Platform: "local", ChatID: "c2", Text: "other", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if ids[0] <= old.ID || ids[1] <= ids[0] || ids[2] <= ids[1] {
		t.Fatalf("ids not increasing: %d then %v", old.ID, ids)
	}
	s.Close()
	s = open(t, o)
	got, err := s.OutboxAfter(ctx, "local", "c1", 0)
	if err != nil || len(got) != 3 || got[0].Text != "one" || got[2].Text != "three" || got[2].File != `{"id":"f1"}` || got[0].CreatedAt.UnixMilli() != now.UnixMilli() {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
	if got, _ := s.OutboxAfter(ctx, "local", "c1", ids[1]); len(got) != 1 || got[0].ID != ids[2] {
		t.Fatalf("after %d: %+v", ids[1], got)
	}
	if got, err := s.OutboxAfter(ctx, "local", "old", 0); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("a message older than %v is kept: %+v, %v", sessions.OutboxMaxAge, got, err)
	}
	if err := s.EditOutbox(ctx, "local", "c1", ids[0], "one, edited", `[{"id":"b"}]`, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.OutboxAfter(ctx, "local", "c1", 0); got[0].Text != "one, edited" || got[0].Buttons != `[{"id":"b"}]` || got[0].EditedAt.IsZero() {
		t.Fatalf("edited: %+v", got[0])
	}
	if err := s.EditOutbox(ctx, "local", "c2", ids[0], "x", "", now); !errors.Is(err, sessions.ErrNoOutboxMessage) {
		t.Fatalf("edit in another chat: %v", err)
	}
	var last int64
	for i := range sessions.OutboxPerChat + 5 {
		m, err := s.AppendOutbox(ctx, sessions.OutboxMessage{Platform: "local", ChatID: "busy", Text: "n", CreatedAt: now.Add(time.Duration(i))})
		if err != nil {
			t.Fatal(err)
		}
		last = m.ID
	}
	got, err = s.OutboxAfter(ctx, "local", "busy", 0)
	if err != nil || len(got) != sessions.OutboxPerChat || got[len(got)-1].ID != last {
		t.Fatalf("busy chat keeps %d (%v), want the newest %d", len(got), err, sessions.OutboxPerChat)
	}
	if got, _ := s.OutboxAfter(ctx, "local", "c2", 0); len(got) != 1 {
		t.Fatalf("pruning one chat touched another: %+v", got)
	}
}

// Queued rows come back in order with every field; deferring moves a
// chat's rows and no other's; a deleted row is gone.
func testSendQueue(t *testing.T, fresh Fresh) {
	st := open(t, fresh(t))
	ctx := t.Context()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	later := now.Add(150 * time.Second)
	err := st.QueueOutbound(ctx,
		sessions.Outbound{Platform: "telegram", ChatID: "-100", ThreadID: "7", Text: "one (1/2)", Cause: "m1", Part: 1, Parts: 2, EditID: "55", NotBefore: later, CreatedAt: now},
		sessions.Outbound{Platform: "telegram", ChatID: "-100", ThreadID: "7", Text: "two (2/2)", Cause: "m1", Part: 2, Parts: 2, Plain: true, NotBefore: later, CreatedAt: now},
		sessions.Outbound{Platform: "slack", ChatID: "C1", Text: "other", NotBefore: now, CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := st.PendingOutbound(ctx)
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	r0 := rows[0]
	if r0.Text != "one (1/2)" || r0.ThreadID != "7" || r0.Cause != "m1" || r0.Part != 1 || r0.Parts != 2 || r0.EditID != "55" || r0.Plain || !r0.NotBefore.Equal(later) {
		t.Fatalf("row 0: %+v", r0)
	}
	if !rows[1].Plain || rows[1].Text != "two (2/2)" || rows[2].ChatID != "C1" {
		t.Fatalf("rows: %+v", rows)
	}
	if err := st.DeferOutbound(ctx, "telegram", "-100", later.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteOutbound(ctx, rows[2].ID); err != nil {
		t.Fatal(err)
	}
	rows, _ = st.PendingOutbound(ctx)
	if len(rows) != 2 || !rows[0].NotBefore.Equal(later.Add(time.Minute)) || !rows[1].NotBefore.Equal(later.Add(time.Minute)) {
		t.Fatalf("after defer and delete: %+v", rows)
	}
	// never earlier than a row's own time
	if err := st.DeferOutbound(ctx, "telegram", "-100", now); err != nil {
		t.Fatal(err)
	}
	if rows, _ = st.PendingOutbound(ctx); !rows[0].NotBefore.Equal(later.Add(time.Minute)) {
		t.Fatalf("deferred backwards: %v", rows[0].NotBefore)
	}
}

func testPairingFlow(t *testing.T, fresh Fresh) {
	st := open(t, fresh(t))
	ctx := t.Context()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	req, err := st.RequestPairing(ctx, "telegram", "u1", "ann", "c1", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Code) != sessions.PairingCodeLen || strings.Trim(req.Code, sessions.PairingAlphabet) != "" {
		t.Fatalf("code %q not %d chars of the alphabet", req.Code, sessions.PairingCodeLen)
	}
	if _, err := st.RequestPairing(ctx, "telegram", "u1", "ann", "c1", now.Add(5*time.Minute)); !errors.Is(err, sessions.ErrPairingRateLimited) {
		t.Fatalf("second request within 10 min: %v", err)
	}
	if ok, _ := st.Paired(ctx, "telegram", "u1"); ok {
		t.Fatal("paired before approval")
	}
	_, pending, err := st.Pairings(ctx, now)
	if err != nil || len(pending) != 1 || pending[0].Code != req.Code || !pending[0].ExpiresAt.Equal(req.ExpiresAt) {
		t.Fatalf("pending: %+v %v", pending, err)
	}
	p, err := st.ApprovePairing(ctx, "telegram", strings.ToLower(req.Code), now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if p.UserID != "u1" || p.UserName != "ann" {
		t.Fatalf("approved %+v", p)
	}
	if ok, _ := st.Paired(ctx, "telegram", "u1"); !ok {
		t.Fatal("not paired after approval")
	}
	if ok, _ := st.Paired(ctx, "discord", "u1"); ok {
		t.Fatal("pairing leaked to another platform")
	}
	approved, pending, err := st.Pairings(ctx, now)
	if err != nil || len(approved) != 1 || len(pending) != 0 {
		t.Fatalf("list: %v %v %v", approved, pending, err)
	}
	if ok, err := st.RevokePairing(ctx, "telegram", "u1"); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if ok, _ := st.RevokePairing(ctx, "telegram", "u1"); ok {
		t.Fatal("second revoke found something")
	}
}

func testPairingLimits(t *testing.T, fresh Fresh) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	t.Run("expiry", func(t *testing.T) {
		st := open(t, fresh(t))
		ctx := t.Context()
		req, err := st.RequestPairing(ctx, "slack", "u1", "", "", now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.ApprovePairing(ctx, "slack", req.Code, now.Add(sessions.PairingTTL)); !errors.Is(err, sessions.ErrNoSuchPairingCode) {
			t.Fatalf("approve after ttl: %v", err)
		}
	})
	t.Run("max pending per platform", func(t *testing.T) {
		st := open(t, fresh(t))
		ctx := t.Context()
		// asked at once: the limit holds however the requests interleave
		users := []string{"a", "b", "c", "d", "e"}
		errs := make([]error, len(users))
		var wg sync.WaitGroup
		for i, u := range users {
			wg.Go(func() { _, errs[i] = st.RequestPairing(ctx, "slack", u, "", "", now) })
		}
		wg.Wait()
		granted := 0
		for i, err := range errs {
			switch {
			case err == nil:
				granted++
			case !errors.Is(err, sessions.ErrTooManyPairings):
				t.Fatalf("request %d: %v", i, err)
			}
		}
		if granted != sessions.MaxPendingPairings {
			t.Fatalf("%d codes granted at once, want %d", granted, sessions.MaxPendingPairings)
		}
		refused := users[0]
		for i, err := range errs {
			if err != nil {
				refused = users[i]
			}
		}
		if _, err := st.RequestPairing(ctx, "slack", refused, "", "", now.Add(2*time.Minute)); !errors.Is(err, sessions.ErrPairingRateLimited) {
			t.Fatalf("refused request must count for the rate limit: %v", err)
		}
		if _, err := st.RequestPairing(ctx, "discord", "d", "", "", now.Add(time.Minute)); err != nil {
			t.Fatalf("other platform: %v", err)
		}
	})
	t.Run("lockout", func(t *testing.T) {
		st := open(t, fresh(t))
		ctx := t.Context()
		req, err := st.RequestPairing(ctx, "slack", "u1", "", "", now)
		if err != nil {
			t.Fatal(err)
		}
		for i := range sessions.MaxPairingFailures {
			if _, err := st.ApprovePairing(ctx, "slack", "WRONGWRO", now.Add(time.Duration(i)*time.Second)); !errors.Is(err, sessions.ErrNoSuchPairingCode) {
				t.Fatalf("wrong code %d: %v", i, err)
			}
		}
		if _, err := st.ApprovePairing(ctx, "slack", req.Code, now.Add(time.Minute)); !errors.Is(err, sessions.ErrPairingLocked) {
			t.Fatalf("right code during lockout: %v", err)
		}
		if _, err := st.RequestPairing(ctx, "slack", "u2", "", "", now.Add(time.Minute)); !errors.Is(err, sessions.ErrPairingLocked) {
			t.Fatalf("request during lockout: %v", err)
		}
		later := now.Add(sessions.PairingLockout + 10*time.Second)
		req, err = st.RequestPairing(ctx, "slack", "u3", "", "", later)
		if err != nil {
			t.Fatalf("request after the lockout: %v", err)
		}
		if _, err := st.ApprovePairing(ctx, "slack", req.Code, later); err != nil {
			t.Fatalf("approve after the lockout: %v", err)
		}
	})
}
