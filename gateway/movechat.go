package gateway

// movechat.go: a chat that changed its id (a Telegram group upgraded to a
// supergroup) keeps its conversations.

import (
	"context"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/sessions"
)

var _ adapters.ChatMover = (*Runner)(nil)

// MoveChat implements adapters.ChatMover: the store re-keys the open
// sessions of chat from to chat to, and idle chats held in memory under
// either id are freed, so their next message reads the moved session.
func (r *Runner) MoveChat(ctx context.Context, platform herald.Platform, from, to string) error {
	if r.store == nil || from == to {
		return nil
	}
	n, err := r.store.MoveChat(ctx, string(platform), from, to)
	if err != nil {
		return err
	}
	r.mu.Lock()
	for key, c := range r.chats {
		if sessions.KeyPlatform(key) != string(platform) {
			continue
		}
		// RekeyChat's ok says the key belongs to that chat
		_, old := sessions.RekeyChat(key, from, to)
		_, moved := sessions.RekeyChat(key, to, to)
		if !old && !moved {
			continue
		}
		c.mu.Lock()
		if !c.busy() {
			delete(r.chats, key)
			c.evicted = true
		}
		c.mu.Unlock()
	}
	r.mu.Unlock()
	r.log.Info("chat moved to a new id; its conversations follow", "platform", platform, "from", from, "to", to, "sessions", n)
	return nil
}
