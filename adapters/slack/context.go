package slack

// context.go gives the model what was said in a thread before the bot was
// asked there: when a message arrives in a thread this process has not
// seen (the bot is mentioned mid-thread, or a follow-up comes after a
// restart), the thread's earlier messages are read with
// conversations.replies and put in the message's ThreadContext.

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/heraldgw/herald"
)

// Bounds on reading a thread's history.
const (
	// contextMessages is the most earlier messages given to the model.
	contextMessages = 30
	// contextRunes bounds their text; the newest are kept.
	contextRunes = 8000
	// contextPageSize and contextPages bound what is read: at most 1,000
	// messages of a thread, in five calls.
	contextPageSize = 200
	contextPages    = 5
	// contextTimeout bounds the reading: it happens before the event is
	// acknowledged, and Slack re-sends events not acknowledged in 3 s.
	contextTimeout = 2 * time.Second
)

// withThreadContext fills m.ThreadContext when m is a reply in a thread
// this process has not seen and the bot is addressed (mentioned, a thread
// it took part in, or a DM). A failed read is logged and the message goes
// on without it; the next message in the thread tries again.
func (a *Adapter) withThreadContext(ctx context.Context, m *herald.Message) {
	thread := m.Source.ThreadID
	if thread == "" {
		return
	}
	key := m.Source.ChatID + "/" + thread
	if m.ReplyTo == "" {
		// a top-level message starts its own thread: nothing came before
		a.seen.add(key)
		return
	}
	if a.seen.has(key) || !(m.Mentioned || m.Source.ChatType == herald.ChatDM) {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, contextTimeout)
	defer cancel()
	text, err := a.threadContext(rctx, m.Source.ChatID, thread, m.ID)
	if err != nil {
		a.log.Warn("could not read the earlier messages of a slack thread; answering without them", "channel", m.Source.ChatID, "thread", thread, "err", a.cfg.Redactor.Redact(err.Error()))
		return
	}
	a.seen.add(key)
	m.ThreadContext = text
}

// threadContext reads the thread's messages before current and returns
// those after the bot's last post in it (all of them when it never
// posted: the rest are in the conversation's history already), at most
// contextMessages of them and contextRunes of text, newest kept, as text
// for the model. It is "" when there are none.
func (a *Adapter) threadContext(ctx context.Context, channel, thread, current string) (string, error) {
	bot := a.botUserID()
	var msgs []slackapi.Message
	params := &slackapi.GetConversationRepliesParameters{ChannelID: channel, Timestamp: thread, Latest: current, Limit: contextPageSize}
	for range contextPages {
		got, more, cursor, err := a.api.GetConversationRepliesContext(ctx, params)
		if err != nil {
			return "", mapError(fmt.Sprintf("read thread %s/%s", channel, thread), err, "SLACK_BOT_TOKEN")
		}
		for _, msg := range got {
			switch {
			case msg.Timestamp == current:
			case bot != "" && msg.User == bot:
				msgs = msgs[:0]
			default:
				msgs = append(msgs, msg)
			}
		}
		if !more || cursor == "" {
			break
		}
		params.Cursor = cursor
	}
	return formatContext(msgs, thread, bot), nil
}

// formatContext is the model's text for a thread's earlier messages:
// the newest contextMessages of them, within contextRunes of text, oldest
// first, between a header and an end line; "" when none has text.
func formatContext(msgs []slackapi.Message, thread, bot string) string {
	var lines []string
	budget := contextRunes
	for i := len(msgs) - 1; i >= 0 && len(lines) < contextMessages && budget > 0; i-- {
		line := contextLine(msgs[i], thread, bot)
		if line == "" {
			continue
		}
		if n := utf8.RuneCountInString(line); n > budget {
			line = string([]rune(line)[:budget]) + "…"
		}
		budget -= utf8.RuneCountInString(line)
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(contextHeader + "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		b.WriteString(lines[i])
		b.WriteByte('\n')
	}
	b.WriteString(contextEnd)
	return b.String()
}

// The lines around a thread's earlier messages.
const (
	contextHeader = "[Earlier messages in this Slack thread, not in your conversation history (oldest first):]"
	contextEnd    = "[End of the earlier thread messages]"
)

// contextLine is one earlier message as "<user>: <text>", the thread's
// first message marked; "" for a message with neither text nor files.
func contextLine(msg slackapi.Message, thread, bot string) string {
	text := cleanText(msg.Text, bot)
	for _, f := range msg.Files {
		text = strings.TrimSpace(text + " [file: " + f.Name + "]")
	}
	if text == "" {
		return ""
	}
	who := msg.User
	if who == "" {
		who = msg.Username
	}
	if who == "" {
		who = "unknown"
	}
	if msg.BotID != "" {
		who += " (a bot)"
	}
	prefix := ""
	if msg.Timestamp == thread {
		prefix = "[thread start] "
	}
	return prefix + who + ": " + text
}
