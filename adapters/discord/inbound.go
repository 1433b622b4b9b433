package discord

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
)

// channelInfo is what a guild message's channel says about the chat.
type channelInfo struct {
	thread bool
	news   bool
	parent string
	name   string
}

// toMessage translates a MESSAGE_CREATE. It drops the bot's own messages,
// other bots' (unless AllowBots), system messages and messages with no
// author. raw is the event's JSON, read for attachments (may be nil). A
// message with attachments and no text is kept, with empty text.
func (a *Adapter) toMessage(ctx context.Context, s *discordgo.Session, m *discordgo.Message, raw json.RawMessage) (herald.Message, bool) {
	if m == nil || m.Author == nil || m.Author.ID == "" {
		return herald.Message{}, false
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return herald.Message{}, false
	}
	bot := a.botID.Load().(string)
	if m.Author.ID == bot || (m.Author.Bot && a.cfg.AllowBots != "all" && a.cfg.AllowBots != "mentions") {
		return herald.Message{}, false
	}
	name := displayName(m.Author)
	src := a.chatOf(ctx, s, m.GuildID, m.ChannelID)
	src.UserID, src.UserName, src.IsBot = m.Author.ID, name, m.Author.Bot
	text, mentioned := stripMention(m.Content, bot)
	for _, u := range m.Mentions {
		if u != nil && bot != "" && u.ID == bot {
			mentioned = true
		}
	}
	if r := m.ReferencedMessage; r != nil && r.Author != nil && bot != "" && r.Author.ID == bot {
		mentioned = true
	}
	// /cmd@this_bot is herald's command, and addresses it; /cmd@otherbot
	// is left as it is (not herald's)
	if t, own := herald.StripBotSuffix(text, a.botName.Load().(string)); own {
		text, mentioned = t, true
	}
	if m.Author.Bot && a.cfg.AllowBots == "mentions" && !mentioned {
		return herald.Message{}, false
	}
	out := herald.Message{ID: m.ID, Text: text, Source: src, Mentioned: mentioned, Received: time.Now()}
	if m.MessageReference != nil {
		out.ReplyTo = m.MessageReference.MessageID
	}
	if m.ReferencedMessage != nil {
		out.ReplyToText = m.ReferencedMessage.Content
		if out.ReplyTo == "" {
			out.ReplyTo = m.ReferencedMessage.ID
		}
	}
	if m.GuildID != "" && m.Member != nil {
		// the member's roles in this guild, for allowed_roles
		out.UserRoles = m.Member.Roles
	}
	out.Media = mediaOf(m, raw)
	return out, true
}

// chatOf is the chat part of a Source for a message (or an interaction)
// in channelID: no guild is a DM; in a guild, a thread keeps its parent
// as the chat and itself as the thread, an announcement channel is a
// channel, anything else a group.
func (a *Adapter) chatOf(ctx context.Context, s *discordgo.Session, guildID, channelID string) herald.Source {
	src := herald.Source{Platform: herald.PlatformDiscord, ChatID: channelID, ChatType: herald.ChatDM}
	if guildID == "" {
		return src
	}
	ci := a.channelInfo(ctx, s, channelID)
	src.ChatName = ci.name
	switch {
	case ci.thread:
		// the session's chat is the parent channel, its thread this one
		src.ChatType, src.ThreadID = herald.ChatThread, channelID
		if ci.parent != "" {
			src.ChatID = ci.parent
		}
	case ci.news:
		src.ChatType = herald.ChatChannel
	default:
		src.ChatType = herald.ChatGroup
	}
	return src
}

// displayName is the name herald shows for a Discord user.
func displayName(u *discordgo.User) string {
	if u.GlobalName != "" {
		return u.GlobalName
	}
	return u.Username
}

// stripMention removes the bot's mention tokens (<@id>, <@!id>) so that
// "@bot /new" reads as the command it is.
func stripMention(text, bot string) (string, bool) {
	if bot == "" {
		return text, false
	}
	found := false
	for _, tok := range []string{"<@" + bot + ">", "<@!" + bot + ">"} {
		if strings.Contains(text, tok) {
			found = true
			text = strings.ReplaceAll(text, tok, "")
		}
	}
	if !found {
		return text, false
	}
	return strings.Join(strings.Fields(text), " "), true
}

// channelInfo looks a guild channel up in discordgo's state (filled from
// GUILD_CREATE and thread events), else asks REST once; answers are
// cached. An unknown channel counts as a plain guild channel.
func (a *Adapter) channelInfo(ctx context.Context, s *discordgo.Session, id string) channelInfo {
	a.mu.Lock()
	ci, ok := a.channels[id]
	a.mu.Unlock()
	if ok {
		return ci
	}
	if ch, err := s.State.Channel(id); err == nil {
		s.State.RLock()
		ci = channelInfo{thread: ch.IsThread(), news: ch.Type == discordgo.ChannelTypeGuildNews, parent: ch.ParentID, name: ch.Name}
		s.State.RUnlock()
	} else if ch, err := s.Channel(id, discordgo.WithContext(ctx)); err == nil {
		ci = channelInfo{thread: ch.IsThread(), news: ch.Type == discordgo.ChannelTypeGuildNews, parent: ch.ParentID, name: ch.Name}
	} else {
		a.log.Debug("discord channel lookup failed; treating it as a guild channel", "channel", id, "err", err)
		if ctx.Err() != nil {
			return ci
		}
	}
	a.mu.Lock()
	if len(a.channels) >= 4096 {
		clear(a.channels)
	}
	a.channels[id] = ci
	a.mu.Unlock()
	return ci
}
