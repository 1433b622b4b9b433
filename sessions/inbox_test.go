package sessions

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestInboundJournal(t *testing.T) {
	s, p := open(t)
	ctx := context.Background()
	t0 := time.UnixMilli(1_700_000_000_000)
	in := Inbound{Platform: "telegram", ChatID: "1", MessageID: "7", Message: `{"text":"hi"}`, ReceivedAt: t0}
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
	s2, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if fresh, _ := s2.RecordInbound(ctx, in); fresh {
		t.Fatal("a journalled message was new again after a restart")
	}
	rows, err := s2.UnfinishedInbound(ctx)
	if err != nil || len(rows) != 2 || rows[0].Message != `{"text":"hi"}` || rows[0].State != InboundReceived || !rows[0].ReceivedAt.Equal(t0) {
		t.Fatalf("unfinished = %+v, %v", rows, err)
	}
	if err := s2.SetInboundState(ctx, "telegram", "1", "7", InboundReplayed, t0); err != nil {
		t.Fatal(err)
	}
	if err := s2.SetInboundState(ctx, "telegram", "2", "7", InboundDone, t0); err != nil {
		t.Fatal(err)
	}
	rows, _ = s2.UnfinishedInbound(ctx)
	if len(rows) != 1 || rows[0].ChatID != "1" || rows[0].State != InboundReplayed {
		t.Fatalf("unfinished after marking = %+v", rows)
	}
	var body string
	s2.DB().QueryRow(`SELECT message FROM inbox WHERE chat_id = '2'`).Scan(&body)
	if body != "" {
		t.Fatalf("a finished row keeps its message body %q", body)
	}
}

func TestPruneInbound(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	t0 := time.UnixMilli(1_700_000_000_000)
	for i := range 10 {
		id := fmt.Sprint(i)
		s.RecordInbound(ctx, Inbound{Platform: "p", ChatID: "c", MessageID: id, ReceivedAt: t0})
		if i < 8 {
			s.SetInboundState(ctx, "p", "c", id, InboundDone, t0.Add(time.Duration(i)*time.Hour))
		}
	}
	// rows 0..1 are older than the cutoff; of 2..7, keep the newest 4
	n, err := s.PruneInbound(ctx, t0.Add(2*time.Hour), 4)
	if err != nil || n != 4 {
		t.Fatalf("pruned %d, %v; want 4", n, err)
	}
	var left []string
	rows, _ := s.DB().Query(`SELECT message_id FROM inbox ORDER BY CAST(message_id AS INTEGER)`)
	for rows.Next() {
		var id string
		rows.Scan(&id)
		left = append(left, id)
	}
	rows.Close()
	if fmt.Sprint(left) != "[4 5 6 7 8 9]" {
		t.Fatalf("left %v; want the 4 newest finished and the 2 unfinished", left)
	}
}
