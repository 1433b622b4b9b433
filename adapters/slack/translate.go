package slack

// translate.go turns Slack's message and app_mention events into
// herald.Messages: chat type, thread, mention, text cleaned of the bot's
// mention and Slack's escaping, and the files shared with it (files.go).

import (
	"context"
	"regexp"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/heraldgw/herald"
)

// acceptedSubtypes are the message subtypes that carry a new message from
// a person; edits, deletes, joins, bot messages and the rest are ignored.
var acceptedSubtypes = map[string]bool{"": true, "thread_broadcast": true, "file_share": true}

func (a *Adapter) translate(ctx context.Context, data any) (herald.Message, bool) {
	var (
		user, text, ts, threadTS, channel, channelType, botID string
		mentioned                                             bool
		files                                                 []slackapi.File
	)
	switch ev := data.(type) {
	case *slackevents.MessageEvent:
		if !acceptedSubtypes[ev.SubType] {
			return herald.Message{}, false
		}
		user, text, ts, threadTS, channel, channelType, botID = ev.User, ev.Text, ev.TimeStamp, ev.ThreadTimeStamp, ev.Channel, ev.ChannelType, ev.BotID
		if ev.Message != nil {
			// slack-go copies a new message's top-level fields, files
			// among them, into Message
			files = ev.Message.Files
		}
	case *slackevents.AppMentionEvent:
		if ev.Edited != nil {
			return herald.Message{}, false
		}
		user, text, ts, threadTS, channel, botID = ev.User, ev.Text, ev.TimeStamp, ev.ThreadTimeStamp, ev.Channel, ev.BotID
		files = ev.Files
		mentioned = true
	default:
		return herald.Message{}, false
	}
	bot := a.botUserID()
	if botID != "" || user == "" || (bot != "" && user == bot) || ts == "" || channel == "" {
		return herald.Message{}, false
	}
	chatType := chatTypeOf(channelType, channel)
	if bot != "" && mentions(text, bot) {
		mentioned = true
	}
	thread := threadTS
	if chatType != herald.ChatDM {
		if thread == "" {
			// answer a top-level channel message in a thread under it
			thread = ts
		} else if a.threads.has(ctx, channel+"/"+thread) {
			// a reply in a thread the bot took part in counts as a reply
			// to the bot
			mentioned = true
		}
	}
	m := herald.Message{
		ID:   ts,
		Text: cleanText(text, bot),
		Source: herald.Source{
			Platform: herald.PlatformSlack, ChatID: channel, ChatType: chatType,
			UserID: user, UserName: user, ThreadID: thread,
		},
		Media:     mediaOf(files),
		Mentioned: mentioned,
		Received:  time.Now(),
	}
	if threadTS != "" && threadTS != ts {
		m.ReplyTo = threadTS
	}
	return m, true
}

// chatTypeOf maps Slack's channel type (im, mpim, group, channel; ""
// guesses it from the channel's id) to herald's chat type.
func chatTypeOf(channelType, channel string) herald.ChatType {
	if channelType == "" {
		channelType = channelTypeOf(channel)
	}
	switch channelType {
	case "im":
		return herald.ChatDM
	case "mpim", "group":
		return herald.ChatGroup
	}
	return herald.ChatChannel
}

// channelTypeOf guesses a channel's type from its id, for events that do
// not carry channel_type (app_mention).
func channelTypeOf(channel string) string {
	switch {
	case strings.HasPrefix(channel, "D"):
		return "im"
	case strings.HasPrefix(channel, "G"):
		return "group"
	}
	return "channel"
}

func mentions(text, bot string) bool {
	return strings.Contains(text, "<@"+bot+">") || strings.Contains(text, "<@"+bot+"|")
}

var (
	linkRe    = regexp.MustCompile(`<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>`)
	specialRe = regexp.MustCompile(`<!(here|channel|everyone)(?:\|[^>]*)?>`)
)

// cleanText removes the bot's mentions and undoes Slack's escaping of
// links and &, <, >.
func cleanText(text, bot string) string {
	if bot != "" {
		m := regexp.MustCompile(`<@` + regexp.QuoteMeta(bot) + `(?:\|[^>]*)?>[ \t]*`)
		text = m.ReplaceAllString(text, "")
	}
	text = linkRe.ReplaceAllStringFunc(text, func(s string) string {
		p := linkRe.FindStringSubmatch(s)
		url := strings.TrimPrefix(p[1], "mailto:")
		if p[2] == "" || p[2] == url || p[2] == p[1] {
			return url
		}
		return p[2] + " (" + url + ")"
	})
	text = specialRe.ReplaceAllString(text, "@$1")
	text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
	return strings.TrimSpace(text)
}
