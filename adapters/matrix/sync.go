package matrix

// sync.go is the /sync loop and what it does with each batch: messages
// become herald.Messages for the sink, invites from allowed users are
// joined, encrypted rooms get one notice. The since token is stored after
// every message of a batch was taken, so a restart neither replays nor
// loses events (what was taken twice is dropped by the gateway's dedup on
// the event id).

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// EncryptionNotice is what herald says, once per room, in an end-to-end
// encrypted room.
const EncryptionNotice = "This room is end-to-end encrypted, and herald does not support end-to-end encryption: " +
	"it cannot read messages here and will not answer in this room. Talk to it in an unencrypted room or direct chat."

// syncFilter is an inline filter (the spec allows one in place of a
// filter id): up to 100 events per room and sync, where
// Synapse's default is 10, so a restart after a busy hour still gets
// every message.
const syncFilter = `{"room":{"timeline":{"limit":100}}}`

func (a *Adapter) sinceKey() string { return "matrix:since:" + a.self }

// syncLoop syncs until ctx ends; it returns a *FatalError when the token
// stops working.
func (a *Adapter) syncLoop(ctx context.Context, sink adapters.Sink) error {
	since, _ := a.kv(ctx, a.sinceKey())
	// initial: the very first start, which answers nothing said before
	// it; first: the first sync of this run, which catches up without
	// waiting, so the adapter is connected at once
	initial, first := since == "", true
	failures := 0
	for ctx.Err() == nil {
		timeout := a.cfg.SyncTimeout
		if first {
			timeout = 0
		}
		batch, err := a.syncOnce(ctx, since, timeout)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if adapters.IsFatal(err) {
				a.setState("failed: " + err.Error())
				return err
			}
			a.setState("reconnecting")
			a.log.Warn("matrix: sync failed; retrying", "err", a.red.Redact(err.Error()), "attempt", failures+1)
			if !sleep(ctx, backoff(failures, err)) {
				return nil
			}
			failures++
			continue
		}
		failures = 0
		if !a.apply(ctx, sink, batch, initial) {
			// the gateway refused a message (it is stopping, or could not
			// store it): keep the old token, so this batch comes again,
			// now or at the next start
			a.log.Warn("matrix: the gateway refused a message; the batch will be synced again")
			if !sleep(ctx, backoff(failures, nil)) {
				return nil
			}
			failures++
			continue
		}
		if batch.NextBatch != "" {
			since = batch.NextBatch
			a.setKV(ctx, a.sinceKey(), since)
		}
		// connected once a sync went through: from here on, every
		// message is answered (on a first start, the backlog was just
		// skipped)
		if first || a.Health() != "connected" {
			a.setState("connected")
			a.log.Info("matrix connected", "user_id", a.self)
		}
		initial, first = false, false
	}
	return nil
}

// syncOnce makes one /sync request.
func (a *Adapter) syncOnce(ctx context.Context, since string, timeout time.Duration) (Batch, error) {
	cli := a.client()
	rctx, cancel := context.WithTimeout(ctx, timeout+requestTimeout)
	defer cancel()
	resp, err := cli.FullSyncRequest(rctx, mautrix.ReqSync{Timeout: int(timeout.Milliseconds()), Since: since, FilterID: syncFilter})
	if err != nil {
		return Batch{}, a.classify("sync", err)
	}
	return Read(resp, a.self), nil
}

// apply acts on a batch; it reports false when the sink refused a
// message (the batch must be synced again).
func (a *Adapter) apply(ctx context.Context, sink adapters.Sink, b Batch, initial bool) bool {
	for _, inv := range b.Invites {
		a.invited(ctx, inv)
	}
	for _, u := range b.Rooms {
		info := a.updateRoom(u, initial)
		if initial {
			continue
		}
		if u.Limited {
			a.log.Warn("matrix: the homeserver left out older messages of a room (more than one sync holds); they are not answered", "room", u.RoomID)
		}
		for _, ev := range u.Timeline {
			if ev.Encrypted || info != nil && info.encrypted {
				info = a.markEncrypted(u.RoomID)
				a.encryptionNotice(ctx, u.RoomID)
				continue
			}
			m, ok := a.message(ctx, u.RoomID, ev)
			if !ok {
				continue
			}
			if adapters.Refused(sink.Receive(ctx, m)) {
				return false
			}
		}
	}
	return true
}

// updateRoom applies a room's state changes to what herald knows of it
// (a room it knows nothing of yet is read whole when a message needs
// it, except on the first sync, whose state is the room's whole state).
func (a *Adapter) updateRoom(u RoomUpdate, initial bool) *roomInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	info := a.rooms[u.RoomID]
	if info == nil {
		if !initial && !u.Encrypted {
			return nil
		}
		info = &roomInfo{members: map[string]string{}}
		a.rooms[u.RoomID] = info
		if !initial {
			// only the encryption is known; the members are read later
			info.members = nil
		}
	}
	if u.Encrypted {
		info.encrypted = true
	}
	if info.members != nil {
		for _, m := range u.Joined {
			info.members[m.UserID] = m.Name
		}
		for _, l := range u.Left {
			delete(info.members, l)
		}
	}
	return info
}

// markEncrypted notes that a room is end-to-end encrypted.
func (a *Adapter) markEncrypted(roomID string) *roomInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	info := a.rooms[roomID]
	if info == nil {
		info = &roomInfo{}
		a.rooms[roomID] = info
	}
	info.encrypted = true
	return info
}

// room returns what herald knows of a room, reading its members and
// encryption from the homeserver the first time.
func (a *Adapter) room(ctx context.Context, roomID string) *roomInfo {
	a.mu.Lock()
	info := a.rooms[roomID]
	a.mu.Unlock()
	if info != nil && info.members != nil {
		return info
	}
	cli := a.client()
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	fresh := &roomInfo{members: map[string]string{}}
	if jm, err := cli.JoinedMembers(rctx, id.RoomID(roomID)); err == nil {
		for u, m := range jm.Joined {
			fresh.members[string(u)] = m.DisplayName
		}
	} else {
		a.log.Warn("matrix: reading a room's members failed", "room", roomID, "err", a.red.Redact(err.Error()))
	}
	var enc event.EncryptionEventContent
	if err := cli.StateEvent(rctx, id.RoomID(roomID), event.StateEncryption, "", &enc); err == nil && enc.Algorithm != "" {
		fresh.encrypted = true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if info != nil && info.encrypted {
		fresh.encrypted = true
	}
	a.rooms[roomID] = fresh
	return fresh
}

// message turns a timeline event into a herald.Message; ok is false for
// what herald does not answer (notices, edits, media it cannot read).
func (a *Adapter) message(ctx context.Context, roomID string, ev Event) (herald.Message, bool) {
	switch ev.MsgType {
	case "m.text", "m.emote":
	default:
		// m.notice is what bots send (answering them loops); media are
		// not read yet
		return herald.Message{}, false
	}
	if ev.Edit || strings.TrimSpace(ev.Body) == "" {
		return herald.Message{}, false
	}
	info := a.room(ctx, roomID)
	if info.encrypted {
		a.encryptionNotice(ctx, roomID)
		return herald.Message{}, false
	}
	a.mu.Lock()
	self, selfName := a.self, a.name
	name := info.members[ev.Sender]
	dm := len(info.members) == 2
	repliedToBot := ev.ReplyTo != "" && slices.Contains(a.sent, ev.ReplyTo)
	a.mu.Unlock()
	if name == "" {
		name = localpart(ev.Sender)
	}
	m := herald.Message{
		ID:   ev.ID,
		Text: ev.Body,
		Source: herald.Source{Platform: Platform, ChatID: roomID, ChatType: herald.ChatGroup,
			UserID: ev.Sender, UserName: name, ThreadID: ev.ThreadRoot},
		ReplyTo:  ev.ReplyTo,
		Received: ev.Time,
	}
	if ev.MsgType == "m.emote" {
		m.Text = "* " + name + " " + ev.Body
	}
	if dm {
		m.Source.ChatType = herald.ChatDM
	} else if mentioned(ev, self, selfName) {
		m.Mentioned = true
		m.Text = stripMention(m.Text, self, selfName)
	} else if repliedToBot {
		m.Mentioned = true
	}
	return m, true
}

// mentioned reports whether ev names the bot: in m.mentions, as a pill
// link in the HTML, or by user id or display name in the body.
func mentioned(ev Event, self, name string) bool {
	if slices.Contains(ev.Mentions, self) {
		return true
	}
	if self != "" && (strings.Contains(ev.FormattedBody, "matrix.to/#/"+self) || strings.Contains(ev.Body, self)) {
		return true
	}
	return name != "" && containsWord(ev.Body, name)
}

// containsWord reports whether name appears in s, in any letter case, not
// inside a longer word.
func containsWord(s, name string) bool {
	re, err := regexp.Compile(`(?i)(^|[^\pL\pN_])` + regexp.QuoteMeta(name) + `($|[^\pL\pN_])`)
	return err == nil && re.MatchString(s)
}

// stripMention drops a leading "Name: " or "@bot:server " that addresses
// the bot, so a command after it reads as one.
func stripMention(text, self, name string) string {
	t := strings.TrimSpace(text)
	for _, p := range []string{self, name} {
		if p == "" || len(t) < len(p) || !strings.EqualFold(t[:len(p)], p) {
			continue
		}
		rest := t[len(p):]
		trimmed := strings.TrimLeft(rest, ":, ")
		if rest == "" || trimmed != rest {
			if trimmed == "" {
				return text
			}
			return trimmed
		}
	}
	return text
}

func localpart(user string) string {
	l, _, _ := strings.Cut(strings.TrimPrefix(user, "@"), ":")
	if l == "" {
		return user
	}
	return l
}

// invited joins a room an allowed user invited the bot to.
func (a *Adapter) invited(ctx context.Context, inv Invite) {
	if !a.allowed(ctx, inv.Inviter) {
		a.log.Info("matrix: invite from a user neither in allowed_users nor paired left alone", "room", inv.RoomID, "inviter", inv.Inviter)
		return
	}
	cli := a.client()
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if _, err := cli.JoinRoomByID(rctx, id.RoomID(inv.RoomID)); err != nil {
		a.log.Warn("matrix: joining a room failed", "room", inv.RoomID, "inviter", inv.Inviter, "err", a.red.Redact(err.Error()))
		return
	}
	a.log.Info("matrix: joined a room on invite", "room", inv.RoomID, "inviter", inv.Inviter)
	if inv.Encrypted {
		a.markEncrypted(inv.RoomID)
		a.encryptionNotice(ctx, inv.RoomID)
	}
}

func (a *Adapter) allowed(ctx context.Context, user string) bool {
	for _, u := range a.cfg.AllowedUsers {
		if u == "*" || strings.EqualFold(strings.TrimSpace(u), user) {
			return true
		}
	}
	return a.cfg.Paired != nil && a.cfg.Paired(ctx, user)
}

// encryptionNotice says once per room (across restarts) that herald does
// not support end-to-end encryption.
func (a *Adapter) encryptionNotice(ctx context.Context, roomID string) {
	key := "matrix:e2ee-notice:" + roomID
	if _, done := a.kv(ctx, key); done {
		return
	}
	a.log.Warn("matrix: end-to-end encrypted room: herald does not support encryption and answers nothing there", "room", roomID)
	cli := a.client()
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	content := map[string]any{"msgtype": "m.notice", "body": EncryptionNotice, "m.mentions": map[string]any{}}
	if _, err := cli.SendMessageEvent(rctx, id.RoomID(roomID), event.EventMessage, content); err != nil {
		a.log.Warn("matrix: the encryption notice could not be sent", "room", roomID, "err", a.red.Redact(err.Error()))
		return
	}
	a.setKV(ctx, key, "sent")
}
