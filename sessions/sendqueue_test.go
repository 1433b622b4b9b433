package sessions

import (
	"context"
	"testing"
	"time"
)

// Queued rows come back in order with every field; deferring moves a
// chat's rows and no other's; a deleted row is gone.
func TestSendQueue(t *testing.T) {
	ctx := context.Background()
	st := openTest(t)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	later := now.Add(150 * time.Second)
	err := st.QueueOutbound(ctx,
		Outbound{Platform: "telegram", ChatID: "-100", ThreadID: "7", Text: "one (1/2)", Cause: "m1", Part: 1, Parts: 2, EditID: "55", NotBefore: later, CreatedAt: now},
		Outbound{Platform: "telegram", ChatID: "-100", ThreadID: "7", Text: "two (2/2)", Cause: "m1", Part: 2, Parts: 2, Plain: true, NotBefore: later, CreatedAt: now},
		Outbound{Platform: "slack", ChatID: "C1", Text: "other", NotBefore: now, CreatedAt: now})
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
