package sessions

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/heraldgw/herald"
)

// addSession stores a session started at start with n messages a minute
// apart, ended when ended is set.
func addSession(t *testing.T, s *Store, id string, start time.Time, n int, ended bool) {
	t.Helper()
	ctx := context.Background()
	sess := NewSession("k:"+id, herald.Source{Platform: "local", ChatID: id}, start)
	sess.ID = id
	var msgs []Message
	for i := range n {
		msgs = append(msgs, Message{SessionID: id, Role: "user", Content: "m", CreatedAt: start.Add(time.Duration(i) * time.Minute)})
	}
	if err := s.Append(ctx, sess, msgs...); err != nil {
		t.Fatal(err)
	}
	if ended {
		if err := s.EndSession(ctx, id, "reset", start.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
}

func ids(list []Session) []string {
	var out []string
	for _, s := range list {
		out = append(out, s.ID)
	}
	return out
}

func TestSessionsWithPrefix(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	now := time.UnixMilli(1_800_000_000_000)
	for _, id := range []string{"20270115_080000_aaaa0001", "20270115_080000_aaab0002", "20270116_090000_bbbb0003", "2027x115"} {
		addSession(t, s, id, now, 1, false)
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"20270115_080000_aaa", []string{"20270115_080000_aaaa0001", "20270115_080000_aaab0002"}},
		{"20270115_080000_aaaa", []string{"20270115_080000_aaaa0001"}},
		{"2027011", []string{"20270115_080000_aaaa0001", "20270115_080000_aaab0002", "20270116_090000_bbbb0003"}},
		// _ is a character here, not LIKE's any-character
		{"2027_", nil},
		{"2027%", nil},
		{`2027\`, nil},
		{"20270116_090000_bbbb0003", []string{"20270116_090000_bbbb0003"}},
		{"20270116_090000_BBBB", nil},
		{"zz", nil},
	} {
		got, err := s.SessionsWithPrefix(ctx, tc.prefix, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("prefix %q: got %v, want %v", tc.prefix, ids(got), tc.want)
		}
	}
	if got, _ := s.SessionsWithPrefix(ctx, "2027", 2); len(got) != 2 {
		t.Errorf("limit 2: %v", ids(got))
	}
	if _, err := s.SessionsWithPrefix(ctx, "", 0); err == nil {
		t.Error("an empty prefix matched everything")
	}
}

func TestPruneAndDeleteSessions(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	now := time.UnixMilli(1_800_000_000_000)
	old := now.Add(-40 * 24 * time.Hour)
	addSession(t, s, "old-ended", old, 3, true)
	addSession(t, s, "old-open", old, 2, false)
	addSession(t, s, "new-ended", now.Add(-time.Hour), 1, true)
	// started long ago, but its last message is recent
	addSession(t, s, "old-but-active", old, 1, false)
	if err := s.Append(ctx, nil, Message{SessionID: "old-but-active", Role: "user", Content: "still here", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}

	cutoff := now.Add(-30 * 24 * time.Hour)
	ended, err := s.PrunableSessions(ctx, PruneFilter{Before: cutoff, EndedOnly: true})
	if err != nil || !slices.Equal(ids(ended), []string{"old-ended"}) {
		t.Fatalf("prunable ended: %v %v", ids(ended), err)
	}
	all, err := s.PrunableSessions(ctx, PruneFilter{Before: cutoff})
	if err != nil || !slices.Equal(ids(all), []string{"old-open", "old-ended"}) {
		t.Fatalf("prunable: %v %v", ids(all), err)
	}
	gone, err := s.PruneSessions(ctx, PruneFilter{Before: cutoff})
	if err != nil || !slices.Equal(gone, []string{"old-open", "old-ended"}) {
		t.Fatalf("pruned: %v %v", gone, err)
	}
	left, _ := s.List(ctx, ListOptions{})
	if got := ids(left); !slices.Equal(got, []string{"old-but-active", "new-ended"}) {
		t.Fatalf("left: %v", got)
	}
	var orphans int
	if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE session_id IN ('old-ended', 'old-open')`).Scan(&orphans); err != nil || orphans != 0 {
		t.Fatalf("messages of pruned sessions left: %d %v", orphans, err)
	}
	if again, err := s.PruneSessions(ctx, PruneFilter{Before: cutoff}); err != nil || len(again) != 0 {
		t.Fatalf("second prune: %v %v", again, err)
	}

	ok, err := s.DeleteSession(ctx, "new-ended")
	if err != nil || !ok {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if msgs, _ := s.Messages(ctx, "new-ended", 0); len(msgs) != 0 {
		t.Fatalf("messages left after delete: %v", msgs)
	}
	if ok, err := s.DeleteSession(ctx, "new-ended"); err != nil || ok {
		t.Fatalf("delete again: %v %v", ok, err)
	}
	if msgs, _ := s.Messages(ctx, "old-but-active", 0); len(msgs) != 2 {
		t.Fatalf("a kept session lost messages: %v", msgs)
	}
}
