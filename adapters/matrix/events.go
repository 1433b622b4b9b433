package matrix

// events.go reads a /sync answer into what herald acts on: per joined
// room its membership and encryption changes and the messages in its
// timeline, and the invites waiting for the bot. It is pure (no network),
// so the fuzz target covers it whole; the adapter (sync.go) applies the
// result.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
)

// Batch is one sync answer, read.
type Batch struct {
	// NextBatch is the since token of the next sync.
	NextBatch string
	// Rooms are the joined rooms with news, sorted by id.
	Rooms []RoomUpdate
	// Invites are rooms the bot is invited to, sorted by id.
	Invites []Invite
}

// RoomUpdate is one joined room's news.
type RoomUpdate struct {
	RoomID string
	// Joined are members who joined (or changed their name); Left are
	// those who left, were kicked or banned.
	Joined []Member
	Left   []string
	// Encrypted is set when an m.room.encryption state event was seen.
	Encrypted bool
	// Timeline holds the room's messages and encrypted events, in order.
	Timeline []Event
	// Limited is set when the homeserver left out older events of the
	// timeline (a gap: more happened than one sync returns).
	Limited bool
}

// Member is a room member and their display name ("" when unset).
type Member struct {
	UserID string
	Name   string
}

// Invite is an invite of the bot to a room.
type Invite struct {
	RoomID  string
	Inviter string
	// Encrypted is set when the invite state shows m.room.encryption.
	Encrypted bool
}

// Event is one timeline event herald reads.
type Event struct {
	ID     string
	Sender string
	// Encrypted marks an m.room.encrypted event (herald cannot read it).
	Encrypted bool
	// MsgType is m.text, m.emote, m.notice, m.image, …
	MsgType       string
	Body          string
	FormattedBody string
	// Mentions are m.mentions.user_ids; HasMentions is set when the
	// event carried m.mentions at all.
	Mentions    []string
	HasMentions bool
	// ThreadRoot is the m.thread relation's root event; ReplyTo the
	// m.in_reply_to event (not the thread fallback's).
	ThreadRoot string
	ReplyTo    string
	// Edit marks an m.replace (an edit of an earlier message).
	Edit bool
	Time time.Time
}

// messageContent is the part of an m.room.message content herald reads.
type messageContent struct {
	MsgType       string `json:"msgtype"`
	Body          string `json:"body"`
	FormattedBody string `json:"formatted_body"`
	Mentions      *struct {
		UserIDs []string `json:"user_ids"`
	} `json:"m.mentions"`
	RelatesTo *struct {
		RelType       string `json:"rel_type"`
		EventID       string `json:"event_id"`
		IsFallingBack bool   `json:"is_falling_back"`
		InReplyTo     *struct {
			EventID string `json:"event_id"`
		} `json:"m.in_reply_to"`
	} `json:"m.relates_to"`
}

type memberContent struct {
	Membership  string `json:"membership"`
	DisplayName string `json:"displayname"`
}

// Decode reads a /sync answer's body; self is the bot's user id, whose
// own events are left out. Only a body that is not a sync answer at all
// is an error.
func Decode(body []byte, self string) (Batch, error) {
	var resp mautrix.RespSync
	if err := json.Unmarshal(body, &resp); err != nil {
		return Batch{}, fmt.Errorf("matrix sync: not a sync answer: %w", err)
	}
	return Read(&resp, self), nil
}

// Read reads a sync answer decoded by mautrix.
func Read(resp *mautrix.RespSync, self string) Batch {
	b := Batch{NextBatch: resp.NextBatch}
	for roomID, jr := range resp.Rooms.Join {
		if jr == nil || roomID == "" {
			continue
		}
		u := RoomUpdate{RoomID: string(roomID), Limited: jr.Timeline.Limited}
		state := jr.State.Events
		if jr.StateAfter != nil {
			state = append(state, jr.StateAfter.Events...)
		}
		for _, e := range state {
			u.readState(e)
		}
		for _, e := range jr.Timeline.Events {
			if e == nil {
				continue
			}
			if e.StateKey != nil {
				u.readState(e)
				continue
			}
			if string(e.Sender) == self || e.Sender == "" || e.ID == "" {
				continue
			}
			if ev, ok := readEvent(e); ok {
				u.Timeline = append(u.Timeline, ev)
			}
		}
		if len(u.Joined)+len(u.Left)+len(u.Timeline) > 0 || u.Encrypted {
			b.Rooms = append(b.Rooms, u)
		}
	}
	for roomID, ir := range resp.Rooms.Invite {
		if ir == nil || roomID == "" {
			continue
		}
		inv := Invite{RoomID: string(roomID)}
		for _, e := range append(ir.State.Events, ir.FullState.Events...) {
			if e == nil {
				continue
			}
			switch e.Type.Type {
			case event.StateEncryption.Type:
				inv.Encrypted = true
			case event.StateMember.Type:
				var mc memberContent
				if e.StateKey != nil && *e.StateKey == self && json.Unmarshal(e.Content.VeryRaw, &mc) == nil && mc.Membership == "invite" {
					inv.Inviter = string(e.Sender)
				}
			}
		}
		if inv.Inviter != "" {
			b.Invites = append(b.Invites, inv)
		}
	}
	sort.Slice(b.Rooms, func(i, j int) bool { return b.Rooms[i].RoomID < b.Rooms[j].RoomID })
	sort.Slice(b.Invites, func(i, j int) bool { return b.Invites[i].RoomID < b.Invites[j].RoomID })
	return b
}

// readState applies one state event to the update.
func (u *RoomUpdate) readState(e *event.Event) {
	if e == nil || e.StateKey == nil {
		return
	}
	switch e.Type.Type {
	case event.StateEncryption.Type:
		u.Encrypted = true
	case event.StateMember.Type:
		var mc memberContent
		if *e.StateKey == "" || json.Unmarshal(e.Content.VeryRaw, &mc) != nil {
			return
		}
		if mc.Membership == "join" {
			u.Joined = append(u.Joined, Member{UserID: *e.StateKey, Name: mc.DisplayName})
		} else {
			u.Left = append(u.Left, *e.StateKey)
		}
	}
}

// readEvent reads a message or an encrypted event; ok is false for
// other kinds (reactions, redactions, calls, …).
func readEvent(e *event.Event) (Event, bool) {
	ev := Event{ID: string(e.ID), Sender: string(e.Sender)}
	if e.Timestamp > 0 {
		ev.Time = time.UnixMilli(e.Timestamp)
	}
	switch e.Type.Type {
	case event.EventEncrypted.Type:
		ev.Encrypted = true
		return ev, true
	case event.EventMessage.Type:
	default:
		return ev, false
	}
	var mc messageContent
	if json.Unmarshal(e.Content.VeryRaw, &mc) != nil || mc.MsgType == "" {
		return ev, false
	}
	ev.MsgType, ev.Body, ev.FormattedBody = mc.MsgType, mc.Body, mc.FormattedBody
	if mc.Mentions != nil {
		ev.HasMentions = true
		ev.Mentions = mc.Mentions.UserIDs
	}
	if r := mc.RelatesTo; r != nil {
		switch r.RelType {
		case "m.thread":
			ev.ThreadRoot = r.EventID
		case "m.replace":
			ev.Edit = true
		}
		if r.InReplyTo != nil && !(r.RelType == "m.thread" && r.IsFallingBack) {
			ev.ReplyTo = r.InReplyTo.EventID
		}
	}
	if ev.ReplyTo != "" {
		ev.Body = stripReplyFallback(ev.Body)
	}
	return ev, true
}

// stripReplyFallback drops the "> <@user> quoted" lines older clients
// put before a reply's text.
func stripReplyFallback(body string) string {
	if !strings.HasPrefix(body, "> ") {
		return body
	}
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "> ") || l == ">" {
			continue
		}
		if l == "" {
			i++
		}
		if i >= len(lines) {
			return body
		}
		return strings.Join(lines[i:], "\n")
	}
	return body
}
