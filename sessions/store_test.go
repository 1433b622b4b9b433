package sessions

import (
	"context"
	"path/filepath"
	"testing"

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
