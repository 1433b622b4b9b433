package telegram

import (
	"strconv"
	"testing"
)

// FuzzMigration feeds raw updates to migration: it must not panic, and a
// move it reports is from one chat id to another, both numbers.
func FuzzMigration(f *testing.F) {
	f.Add([]byte(`{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":-5,"type":"group"},"migrate_to_chat_id":-1005}}`))
	f.Add([]byte(`{"update_id":2,"message":{"message_id":1,"date":1,"chat":{"id":-1005,"type":"supergroup"},"migrate_from_chat_id":-5}}`))
	f.Add([]byte(`{"update_id":3,"message":{"message_id":1,"date":1,"chat":{"id":-5,"type":"group"},"migrate_to_chat_id":-5}}`))
	f.Add([]byte(`{"update_id":4,"message":{"chat":{"id":-5},"migrate_to_chat_id":"-1005"}}`))
	f.Add([]byte(`{"update_id":5,"message":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		from, to, ok := migration(raw)
		if !ok {
			if from != "" || to != "" {
				t.Fatalf("no move, but from %q to %q", from, to)
			}
			return
		}
		a, errA := strconv.ParseInt(from, 10, 64)
		b, errB := strconv.ParseInt(to, 10, 64)
		if errA != nil || errB != nil || a == 0 || b == 0 || a == b {
			t.Fatalf("move from %q to %q out of %s", from, to, raw)
		}
	})
}

func TestMigration(t *testing.T) {
	for _, tc := range []struct {
		raw      string
		from, to string
		ok       bool
	}{
		{`{"update_id":1,"message":{"message_id":1,"date":1,"chat":{"id":-5,"type":"group"},"migrate_to_chat_id":-1005}}`, "-5", "-1005", true},
		{`{"update_id":2,"message":{"message_id":1,"date":1,"chat":{"id":-1005,"type":"supergroup"},"migrate_from_chat_id":-5}}`, "-5", "-1005", true},
		{`{"update_id":3,"message":{"message_id":1,"date":1,"chat":{"id":-5,"type":"group"},"text":"hi"}}`, "", "", false},
		{`{"update_id":4,"message":{"chat":{"id":-5},"migrate_to_chat_id":-5}}`, "", "", false},
		{`{"update_id":5,"edited_message":{"chat":{"id":-5},"migrate_to_chat_id":-1005}}`, "", "", false},
		{`not json`, "", "", false},
	} {
		from, to, ok := migration([]byte(tc.raw))
		if from != tc.from || to != tc.to || ok != tc.ok {
			t.Errorf("migration(%s) = %q, %q, %v; want %q, %q, %v", tc.raw, from, to, ok, tc.from, tc.to, tc.ok)
		}
	}
}
