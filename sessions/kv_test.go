package sessions

import (
	"context"
	"testing"
)

func TestKVSurvivesReopenAndDeletes(t *testing.T) {
	ctx := context.Background()
	s, p := open(t)
	if _, ok, err := s.GetKV(ctx, "k"); err != nil || ok {
		t.Fatalf("empty store: ok=%v err=%v", ok, err)
	}
	if err := s.SetKV(ctx, "k", "v1"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetKV(ctx, "k", "v2"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if v, ok, err := s2.GetKV(ctx, "k"); err != nil || !ok || v != "v2" {
		t.Fatalf("after reopen: %q %v %v", v, ok, err)
	}
	if gone, err := s2.DeleteKV(ctx, "k"); err != nil || !gone {
		t.Fatalf("delete: %v %v", gone, err)
	}
	if gone, err := s2.DeleteKV(ctx, "k"); err != nil || gone {
		t.Fatalf("second delete: %v %v", gone, err)
	}
	if _, ok, _ := s2.GetKV(ctx, "k"); ok {
		t.Fatal("deleted key still there")
	}
}
