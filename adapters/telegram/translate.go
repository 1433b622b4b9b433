package telegram

// translate.go turns one raw Bot API update into a herald.Message. It reads
// the raw JSON twice: once into the library's types, once for the fields
// v5.5.1 does not know (forum topics, video stickers). Attachments become
// herald.Media in inbound.go.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/heraldgw/herald"
)

// botIdentity is what translation needs to know about the bot itself.
type botIdentity struct {
	ID       int64
	UserName string
}

// rawFields are the parts of a message the library's types lack.
type rawFields struct {
	ThreadID int  `json:"message_thread_id"`
	IsTopic  bool `json:"is_topic_message"`
	Chat     struct {
		IsForum bool `json:"is_forum"`
	} `json:"chat"`
	Sticker *struct {
		IsVideo bool `json:"is_video"`
	} `json:"sticker"`
}

type rawUpdate struct {
	UpdateID    int        `json:"update_id"`
	Message     *rawFields `json:"message"`
	ChannelPost *rawFields `json:"channel_post"`
}

// translate returns the update's id and, when it carries a message herald
// handles, that message. ok is false for updates herald ignores (edits,
// callbacks, service messages with neither text nor an attachment herald
// passes on); err is set only when the update is not a Bot API update at
// all. A message with media and no caption has empty text.
func translate(raw []byte, bot botIdentity) (id int, m herald.Message, ok bool, err error) {
	var upd tgbotapi.Update
	if err := json.Unmarshal(raw, &upd); err != nil {
		return 0, m, false, fmt.Errorf("telegram: malformed update: %w", err)
	}
	var extra rawUpdate
	if err := json.Unmarshal(raw, &extra); err != nil {
		return 0, m, false, fmt.Errorf("telegram: malformed update %d: %w", upd.UpdateID, err)
	}
	msg, ff := upd.Message, extra.Message
	if msg == nil {
		msg, ff = upd.ChannelPost, extra.ChannelPost
	}
	if msg == nil || msg.Chat == nil {
		return upd.UpdateID, m, false, nil
	}
	if ff == nil {
		ff = &rawFields{}
	}
	text, entities := msg.Text, msg.Entities
	if text == "" {
		text, entities = msg.Caption, msg.CaptionEntities
	}
	media := mediaOf(msg, ff)
	if text == "" && len(media) == 0 {
		return upd.UpdateID, m, false, nil
	}
	src := herald.Source{
		Platform: herald.PlatformTelegram,
		ChatID:   strconv.FormatInt(msg.Chat.ID, 10),
		ChatType: chatType(msg.Chat.Type),
		ChatName: chatName(msg.Chat),
	}
	switch {
	case msg.From != nil:
		src.UserID = strconv.FormatInt(msg.From.ID, 10)
		src.UserName = userName(msg.From)
		src.IsBot = msg.From.IsBot
	case msg.SenderChat != nil:
		src.UserID = strconv.FormatInt(msg.SenderChat.ID, 10)
		src.UserName = chatName(msg.SenderChat)
	}
	if ff.ThreadID != 0 && (ff.IsTopic || ff.Chat.IsForum) {
		src.ThreadID = strconv.Itoa(ff.ThreadID)
	}
	m = herald.Message{
		ID:       strconv.Itoa(msg.MessageID),
		Text:     text,
		Source:   src,
		Media:    media,
		Received: time.Unix(int64(msg.Date), 0),
	}
	// In a forum every topic message "replies" to the topic's first
	// message; only a reply to something else is a reply.
	reply := msg.ReplyToMessage
	if reply != nil && src.ThreadID != "" && strconv.Itoa(reply.MessageID) == src.ThreadID {
		reply = nil
	}
	if reply != nil {
		m.ReplyTo = strconv.Itoa(reply.MessageID)
		m.ReplyToText = reply.Text
		if m.ReplyToText == "" {
			m.ReplyToText = reply.Caption
		}
	}
	if src.ChatType != herald.ChatDM {
		m.Mentioned = mentions(text, entities, bot) || (reply != nil && reply.From != nil && reply.From.ID == bot.ID)
	}
	// /cmd@this_bot is herald's command, and addresses it; /cmd@otherbot
	// is left as it is (not herald's)
	if t, own := herald.StripBotSuffix(m.Text, bot.UserName); own {
		m.Text = t
		m.Mentioned = src.ChatType != herald.ChatDM
	}
	return upd.UpdateID, m, true, nil
}

func chatType(t string) herald.ChatType {
	switch t {
	case "private":
		return herald.ChatDM
	case "channel":
		return herald.ChatChannel
	default: // group, supergroup
		return herald.ChatGroup
	}
}

func chatName(c *tgbotapi.Chat) string {
	if c.Title != "" {
		return c.Title
	}
	if c.UserName != "" {
		return c.UserName
	}
	return strings.TrimSpace(c.FirstName + " " + c.LastName)
}

func userName(u *tgbotapi.User) string {
	if u.UserName != "" {
		return u.UserName
	}
	return strings.TrimSpace(u.FirstName + " " + u.LastName)
}

// mentions reports whether text mentions the bot: a mention entity with its
// @username, a text_mention of its id, or the @username anywhere in the
// text (clients do not always add entities, e.g. in captions).
func mentions(text string, entities []tgbotapi.MessageEntity, bot botIdentity) bool {
	if bot.UserName == "" && bot.ID == 0 {
		return false
	}
	at := "@" + strings.ToLower(bot.UserName)
	units := utf16.Encode([]rune(text))
	for _, e := range entities {
		switch e.Type {
		case "mention":
			if e.Offset >= 0 && e.Length > 0 && e.Offset+e.Length <= len(units) {
				if strings.ToLower(string(utf16.Decode(units[e.Offset:e.Offset+e.Length]))) == at {
					return true
				}
			}
		case "text_mention":
			if e.User != nil && e.User.ID == bot.ID {
				return true
			}
		}
	}
	if bot.UserName == "" {
		return false
	}
	lt := strings.ToLower(text)
	for i := 0; ; {
		j := strings.Index(lt[i:], at)
		if j < 0 {
			return false
		}
		end := i + j + len(at)
		// "@herald_bot" must not match "@herald_bot2"
		if end == len(lt) || !isNameByte(lt[end]) {
			return true
		}
		i = end
	}
}

func isNameByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z'
}
