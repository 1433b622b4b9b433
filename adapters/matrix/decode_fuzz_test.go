package matrix_test

import (
	"testing"

	"github.com/heraldgw/herald/adapters/matrix"
)

const fuzzSelf = "@herald:localhost"

// Decode never panics, and what it returns is well formed: rooms and
// invites have ids and come sorted, every timeline event has an id and a
// sender other than the bot, an invite names its inviter.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"next_batch":"s1","rooms":{"join":{"!r:x":{"timeline":{"events":[{"type":"m.room.message","event_id":"$1","sender":"@ann:x","origin_server_ts":1,"content":{"msgtype":"m.text","body":"hi","m.mentions":{"user_ids":["@herald:localhost"]}}}]}}}}}`))
	f.Add([]byte(`{"next_batch":"s2","rooms":{"join":{"!r:x":{"state":{"events":[{"type":"m.room.member","state_key":"@ann:x","sender":"@ann:x","content":{"membership":"join","displayname":"Ann"}}]},"timeline":{"events":[{"type":"m.room.message","event_id":"$2","sender":"@ann:x","content":{"msgtype":"m.text","body":"> <@bob:x> q\n\nreply","m.relates_to":{"rel_type":"m.thread","event_id":"$root","is_falling_back":false,"m.in_reply_to":{"event_id":"$q"}}}},{"type":"m.room.encrypted","event_id":"$3","sender":"@ann:x","content":{"algorithm":"m.megolm.v1.aes-sha2"}},{"type":"m.room.encryption","state_key":"","event_id":"$4","sender":"@ann:x","content":{}}]}}}}}`))
	f.Add([]byte(`{"rooms":{"invite":{"!i:x":{"invite_state":{"events":[{"type":"m.room.member","state_key":"@herald:localhost","sender":"@ann:x","content":{"membership":"invite"}},{"type":"m.room.encryption","state_key":"","sender":"@ann:x","content":{}}]}}}}}`))
	f.Add([]byte(`{"rooms":{"join":{"!r:x":{"timeline":{"events":[null,{"type":"m.room.message","event_id":"$5","sender":"@herald:localhost","content":{"msgtype":"m.text","body":"mine"}},{"type":"m.room.message","content":"not an object"}]}}}}}`))
	f.Add([]byte(`{"rooms":{"join":{"":null}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := matrix.Decode(body, fuzzSelf)
		if err != nil {
			if len(b.Rooms)+len(b.Invites) > 0 {
				t.Fatal("an error with news")
			}
			return
		}
		for i, r := range b.Rooms {
			if r.RoomID == "" || i > 0 && b.Rooms[i-1].RoomID >= r.RoomID {
				t.Fatalf("rooms not sorted or without id: %+v", b.Rooms)
			}
			for _, e := range r.Timeline {
				if e.ID == "" || e.Sender == "" || e.Sender == fuzzSelf {
					t.Fatalf("malformed event %+v", e)
				}
				if e.Encrypted && (e.Body != "" || e.MsgType != "") {
					t.Fatalf("an encrypted event with text %+v", e)
				}
				if !e.Encrypted && e.MsgType == "" {
					t.Fatalf("a message without msgtype %+v", e)
				}
			}
		}
		for i, inv := range b.Invites {
			if inv.RoomID == "" || inv.Inviter == "" || i > 0 && b.Invites[i-1].RoomID >= inv.RoomID {
				t.Fatalf("malformed invites %+v", b.Invites)
			}
		}
	})
}
