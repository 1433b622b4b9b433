// Package listenonly makes the bot a quiet member of group chats: messages
// that do not mention it are kept in a short per-chat buffer and skipped
// (no reply), and when someone mentions it the buffer plus the mention is
// rewritten into one prompt, so the answer has the conversation's context.
// DMs pass through untouched. It is the Go form of Hermes'
// pre_gateway_dispatch "buffer_or_rewrite" example.
package listenonly

import (
	"context"
	"strings"
	"sync"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/hooks"
)

// MaxBuffered is how many ambient messages a chat keeps.
const MaxBuffered = 50

// New returns the plugin. botName, when set, also counts "@botName" in
// the text as a mention (adapters set Message.Mentioned themselves).
func New(botName string) hooks.Plugin {
	l := &listener{bot: strings.ToLower(strings.TrimPrefix(botName, "@")), buf: map[string][]string{}}
	return hooks.Plugin{
		Name:        "listen-only",
		Description: "buffer ambient group messages; answer mentions with the buffer as context",
		Register: func(c *hooks.PluginContext) error {
			c.RegisterHook(hooks.PreGatewayDispatchHook, hooks.Func(l.dispatch))
			return nil
		},
	}
}

// Plugin is New("").
var Plugin = New("")

type listener struct {
	bot string
	mu  sync.Mutex
	buf map[string][]string // platform/chat/thread → "name: text" lines
}

func (l *listener) mentioned(m *herald.Message) bool {
	return m.Mentioned || l.bot != "" && strings.Contains(strings.ToLower(m.Text), "@"+l.bot)
}

func (l *listener) dispatch(ctx context.Context, d *hooks.Dispatch) *hooks.DispatchDecision {
	m := &d.Message
	if m.Source.ChatType == herald.ChatDM {
		return nil
	}
	key := string(m.Source.Platform) + "/" + m.Source.ChatID + "/" + m.Source.ThreadID
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.mentioned(m) {
		who := m.Source.UserName
		if who == "" {
			who = m.Source.UserID
		}
		b := append(l.buf[key], who+": "+m.Text)
		if len(b) > MaxBuffered {
			b = b[len(b)-MaxBuffered:]
		}
		l.buf[key] = b
		return &hooks.DispatchDecision{Action: "skip", Reason: "ambient-buffered"}
	}
	b := l.buf[key]
	delete(l.buf, key)
	if len(b) == 0 {
		return nil
	}
	text := "Earlier in this chat:\n" + strings.Join(b, "\n") + "\n\n" + m.Text
	return &hooks.DispatchDecision{Action: "rewrite", Text: text, TextSet: true}
}
