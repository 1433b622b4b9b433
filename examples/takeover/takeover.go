// Package takeover lets a human take a chat over from the bot: "/takeover"
// from an owner makes the bot silent in that chat, while every message
// there is still recorded in the session's transcript (the
// {"action":"skip","ingest":true} answer), so the agent knows what was
// said when "/handback" returns the chat to it.
package takeover

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/hooks"
)

// Texts sent to the chat.
const (
	TakenText    = "🤝 A person has taken over this chat; the bot stays silent until /handback."
	HandbackText = "🤖 The bot is back in this chat."
	NotOwnerText = "Only the owner can do that."
)

// New returns the plugin; owners are "platform:user_id" (or a bare user
// id, for every platform).
func New(owners ...string) hooks.Plugin {
	t := &taker{owners: owners, taken: map[string]bool{}}
	return hooks.Plugin{
		Name:        "takeover",
		Description: "/takeover and /handback: a person answers while the bot records",
		Register: func(c *hooks.PluginContext) error {
			c.RegisterHook(hooks.PreGatewayDispatchHook, hooks.Func(t.dispatch))
			return nil
		},
	}
}

type taker struct {
	owners []string
	mu     sync.Mutex
	taken  map[string]bool // platform/chat/thread
}

func (t *taker) owner(s herald.Source) bool {
	return slices.Contains(t.owners, s.UserID) || slices.Contains(t.owners, string(s.Platform)+":"+s.UserID)
}

func (t *taker) dispatch(ctx context.Context, d *hooks.Dispatch) *hooks.DispatchDecision {
	m := &d.Message
	key := string(m.Source.Platform) + "/" + m.Source.ChatID + "/" + m.Source.ThreadID
	name, _ := herald.ParseCommand(m.Text)
	switch name {
	case "takeover", "handback":
		if !t.owner(m.Source) {
			d.Replier.Reply(ctx, m.Source, NotOwnerText)
			return &hooks.DispatchDecision{Action: "skip", Reason: "takeover: not an owner"}
		}
		t.mu.Lock()
		t.taken[key] = name == "takeover"
		t.mu.Unlock()
		text := TakenText
		if name == "handback" {
			text = HandbackText
		}
		d.Replier.Reply(ctx, m.Source, text)
		return &hooks.DispatchDecision{Action: "skip", Reason: "takeover: " + name}
	}
	t.mu.Lock()
	taken := t.taken[key]
	t.mu.Unlock()
	if !taken {
		return nil
	}
	if strings.TrimSpace(m.Text) == "" {
		return &hooks.DispatchDecision{Action: "skip", Reason: "takeover"}
	}
	return &hooks.DispatchDecision{Action: "skip", Reason: "takeover", Ingest: true}
}
