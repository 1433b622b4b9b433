package sessions

import (
	"path/filepath"
	"testing"
	"time"
)

// The outbox keeps messages per chat in order across a reopen, reads
// after an id, and prunes by age and by count per chat.
func TestOutbox(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	now := time.Now()
	old, err := s.AppendOutbox(ctx, OutboxMessage{Platform: "local", ChatID: "old", Text: "stale", CreatedAt: now.Add(-OutboxMaxAge - time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, text := range []string{"one", "two", "three"} {
		m, err := s.AppendOutbox(ctx, OutboxMessage{Platform: "local", ChatID: "c1", Text: text, File: map[bool]string{true: `{"id":"f1"}`}[i == 2], CreatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	if _, err := s.AppendOutbox(ctx, OutboxMessage{Platform: "local", ChatID: "c2", Text: "other", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if ids[0] <= old.ID || ids[1] <= ids[0] || ids[2] <= ids[1] {
		t.Fatalf("ids not increasing: %d then %v", old.ID, ids)
	}
	s.Close()
	if s, err = Open(p); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.OutboxAfter(ctx, "local", "c1", 0)
	if err != nil || len(got) != 3 || got[0].Text != "one" || got[2].Text != "three" || got[2].File != `{"id":"f1"}` || got[0].CreatedAt.UnixMilli() != now.UnixMilli() {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
	if got, _ := s.OutboxAfter(ctx, "local", "c1", ids[1]); len(got) != 1 || got[0].ID != ids[2] {
		t.Fatalf("after %d: %+v", ids[1], got)
	}
	if got, err := s.OutboxAfter(ctx, "local", "old", 0); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("a message older than %v is kept: %+v, %v", OutboxMaxAge, got, err)
	}
	if got, _ := s.OutboxAfter(ctx, "local", "nobody", 0); got == nil || len(got) != 0 {
		t.Fatalf("unknown chat: %#v", got)
	}
	var last int64
	for i := range OutboxPerChat + 5 {
		m, err := s.AppendOutbox(ctx, OutboxMessage{Platform: "local", ChatID: "busy", Text: "n", CreatedAt: now.Add(time.Duration(i))})
		if err != nil {
			t.Fatal(err)
		}
		last = m.ID
	}
	got, err = s.OutboxAfter(ctx, "local", "busy", 0)
	if err != nil || len(got) != OutboxPerChat || got[len(got)-1].ID != last {
		t.Fatalf("busy chat keeps %d (%v), want the newest %d", len(got), err, OutboxPerChat)
	}
	if got, _ := s.OutboxAfter(ctx, "local", "c2", 0); len(got) != 1 {
		t.Fatalf("pruning one chat touched another: %+v", got)
	}
}
