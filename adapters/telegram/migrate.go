package telegram

// migrate.go follows a group upgraded to a supergroup, which gets a new
// chat id: the service messages Telegram sends move the chat's sessions
// (through the gateway's adapters.ChatMover), and a send that still names
// the old id is resent to the new one.

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// migration reads a group's upgrade from an update: the service message
// in the old group carries migrate_to_chat_id, the one in the new
// supergroup migrate_from_chat_id. Telegram sends both; the second finds
// nothing left to move.
func migration(raw []byte) (from, to string, ok bool) {
	var upd struct {
		Message *struct {
			Chat struct {
				ID int64 `json:"id"`
			} `json:"chat"`
			MigrateTo   int64 `json:"migrate_to_chat_id"`
			MigrateFrom int64 `json:"migrate_from_chat_id"`
		} `json:"message"`
	}
	if json.Unmarshal(raw, &upd) != nil || upd.Message == nil || upd.Message.Chat.ID == 0 {
		return "", "", false
	}
	m := upd.Message
	var old, moved int64
	switch {
	case m.MigrateTo != 0:
		old, moved = m.Chat.ID, m.MigrateTo
	case m.MigrateFrom != 0:
		old, moved = m.MigrateFrom, m.Chat.ID
	}
	if moved == 0 || old == moved {
		return "", "", false
	}
	return strconv.FormatInt(old, 10), strconv.FormatInt(moved, 10), true
}

// moveChat remembers the move and tells the sink, if it follows moves. It
// reports false when the sink could not move the chat's sessions (the
// update is then not confirmed, and comes again).
func (a *Adapter) moveChat(ctx context.Context, sink adapters.Sink, from, to string) bool {
	a.setMoved(from, to)
	mover, ok := sink.(adapters.ChatMover)
	if !ok {
		return true
	}
	if err := mover.MoveChat(ctx, herald.PlatformTelegram, from, to); err != nil {
		a.log.Error("telegram: group upgraded to a supergroup, but its sessions could not be moved; trying again", "from", from, "to", to, "err", err)
		return false
	}
	a.log.Info("telegram: group upgraded to a supergroup; its conversations follow", "from", from, "to", to)
	return true
}

// maxMoves bounds the memory of moved chats.
const maxMoves = 1024

func (a *Adapter) setMoved(from, to string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.moved == nil || len(a.moved) >= maxMoves {
		a.moved = map[string]string{}
	}
	a.moved[from] = to
}

// current is the id chat goes by now (a group upgraded since).
func (a *Adapter) current(chat string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if to, ok := a.moved[chat]; ok {
		return to
	}
	return chat
}
