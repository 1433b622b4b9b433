package teams

// activity.go: the Bot Framework activity as it arrives on the wire, and
// its translation into a herald.Message or an adapters.Press. Nothing
// here checks who sent it: inbound.go does that before any of it runs.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Activity types herald reads.
const (
	typeMessage            = "message"
	typeInvoke             = "invoke"
	typeTyping             = "typing"
	typeConversationUpdate = "conversationUpdate"
)

// Conversation types (conversation.conversationType).
const (
	convPersonal  = "personal"
	convGroupChat = "groupChat"
	convChannel   = "channel"
)

// buttonKey is the key of an Action.Submit's data that carries
// adapters.Button.Data.
const buttonKey = "herald_button"

// invokeCardAction is the name of the invoke activity an Adaptive Card
// Action.Execute sends.
const invokeCardAction = "adaptiveCard/action"

// maxText bounds an inbound activity's text: Teams itself stops near
// 28 KB, so anything longer is not from Teams.
const maxText = 100_000

// channelAccount is a user or bot (from, recipient, a mention).
type channelAccount struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	AADObjectID string `json:"aadObjectId,omitempty"`
	Role        string `json:"role,omitempty"`
}

// conversationAccount is the conversation an activity belongs to.
type conversationAccount struct {
	ID               string `json:"id"`
	Name             string `json:"name,omitempty"`
	ConversationType string `json:"conversationType,omitempty"`
	IsGroup          bool   `json:"isGroup,omitempty"`
	TenantID         string `json:"tenantId,omitempty"`
}

// entity is one entry of an activity's entities; herald reads mentions.
type entity struct {
	Type      string          `json:"type"`
	Mentioned *channelAccount `json:"mentioned,omitempty"`
	Text      string          `json:"text,omitempty"`
}

// attachment is an activity attachment (an Adaptive Card, when herald
// sends one).
type attachment struct {
	ContentType string `json:"contentType"`
	Content     any    `json:"content,omitempty"`
	ContentURL  string `json:"contentUrl,omitempty"`
	Name        string `json:"name,omitempty"`
}

// activity is the part of a Bot Framework activity herald reads and
// writes.
type activity struct {
	Type         string               `json:"type"`
	ID           string               `json:"id,omitempty"`
	Timestamp    string               `json:"timestamp,omitempty"`
	ServiceURL   string               `json:"serviceUrl,omitempty"`
	ChannelID    string               `json:"channelId,omitempty"`
	From         *channelAccount      `json:"from,omitempty"`
	Conversation *conversationAccount `json:"conversation,omitempty"`
	Recipient    *channelAccount      `json:"recipient,omitempty"`
	Text         string               `json:"text,omitempty"`
	TextFormat   string               `json:"textFormat,omitempty"`
	ReplyToID    string               `json:"replyToId,omitempty"`
	Entities     []entity             `json:"entities,omitempty"`
	Attachments  []attachment         `json:"attachments,omitempty"`
	Name         string               `json:"name,omitempty"`
	Value        json.RawMessage      `json:"value,omitempty"`
}

// decodeActivity reads one inbound activity. It fails, with a sentence
// naming what is wrong, on JSON that is not an object, on an activity
// without a type, and on a message or invoke without the ids every reply
// needs (conversation, sender, serviceUrl).
func decodeActivity(body []byte) (*activity, error) {
	var a activity
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("teams: activity is not valid JSON: %w", err)
	}
	if a.Type == "" {
		return nil, errors.New("teams: activity has no type")
	}
	if a.Type != typeMessage && a.Type != typeInvoke {
		return &a, nil
	}
	switch {
	case a.Conversation == nil || a.Conversation.ID == "":
		return nil, fmt.Errorf("teams: %s activity has no conversation id", a.Type)
	case a.From == nil || a.From.ID == "":
		return nil, fmt.Errorf("teams: %s activity has no sender", a.Type)
	case a.ServiceURL == "":
		return nil, fmt.Errorf("teams: %s activity has no serviceUrl", a.Type)
	case len(a.Text) > maxText:
		return nil, fmt.Errorf("teams: %s activity text is %d bytes, over %d", a.Type, len(a.Text), maxText)
	case !utf8.ValidString(a.Text):
		return nil, fmt.Errorf("teams: %s activity text is not UTF-8", a.Type)
	}
	return &a, nil
}

// splitConversation splits a channel thread's conversation id
// ("19:x@thread.tacv2;messageid=123") into the channel's id and the
// thread's root message id. An id whose suffix names no message is a
// chat of its own, so that joinConversation gives the id back.
func splitConversation(id string) (chat, thread string) {
	const sep = ";messageid="
	if i := strings.Index(id, sep); i >= 0 && i+len(sep) < len(id) {
		return id[:i], id[i+len(sep):]
	}
	return id, ""
}

// joinConversation is splitConversation's inverse: the conversation id
// replies to a chat and thread are posted to.
func joinConversation(chat, thread string) string {
	if thread == "" {
		return chat
	}
	return chat + ";messageid=" + thread
}

// chatType maps a conversation type onto herald's.
func (a *activity) chatType() herald.ChatType {
	switch a.Conversation.ConversationType {
	case convChannel:
		return herald.ChatChannel
	case convGroupChat:
		return herald.ChatGroup
	case convPersonal:
		return herald.ChatDM
	}
	if a.Conversation.IsGroup {
		return herald.ChatGroup
	}
	return herald.ChatDM
}

// userID is who sent the activity: the AAD object id, which stays the
// same across chats and is what Teams admins see, else the channel id.
func (a *activity) userID() string {
	if a.From.AADObjectID != "" {
		return a.From.AADObjectID
	}
	return a.From.ID
}

// source is where the activity came from.
func (a *activity) source() herald.Source {
	chat, thread := splitConversation(a.Conversation.ID)
	return herald.Source{
		Platform: Platform, ChatID: chat, ChatType: a.chatType(), ChatName: a.Conversation.Name,
		UserID: a.userID(), UserName: a.From.Name, ThreadID: thread,
	}
}

// isBot reports whether id is the bot: the activity's recipient, or the
// app id in either of its forms ("28:<app id>" in Teams).
func isBot(id, recipient, appID string) bool {
	if id == "" {
		return false
	}
	return id == recipient || (appID != "" && (id == appID || id == "28:"+appID))
}

// stripMentions removes the bot's mentions from the text and reports
// whether there was one.
func (a *activity) stripMentions(appID string) (text string, mentioned bool) {
	text = a.Text
	recipient := ""
	if a.Recipient != nil {
		recipient = a.Recipient.ID
	}
	for _, e := range a.Entities {
		if e.Type != "mention" || e.Mentioned == nil || !isBot(e.Mentioned.ID, recipient, appID) {
			continue
		}
		mentioned = true
		if e.Text != "" {
			text = strings.Replace(text, e.Text, "", 1)
		}
	}
	return strings.TrimSpace(text), mentioned
}

// message translates a message activity; ok is false when herald does
// not take it (a channel message that does not mention the bot, the
// bot's own message, one with no text).
func (a *activity) message(appID string) (m herald.Message, ok bool) {
	src := a.source()
	text, mentioned := a.stripMentions(appID)
	if a.Recipient != nil && isBot(a.From.ID, a.Recipient.ID, appID) {
		return m, false
	}
	if src.ChatType == herald.ChatChannel && !mentioned {
		return m, false
	}
	if text == "" {
		return m, false
	}
	return herald.Message{
		ID: a.ID, Text: text, Source: src, Mentioned: mentioned && src.ChatType != herald.ChatDM,
	}, true
}

// buttonData finds a pressed button's data: an Action.Submit's value
// ({"herald_button": …}) on a message, or an Action.Execute's
// value.action.data on an adaptiveCard/action invoke.
func (a *activity) buttonData() (string, bool) {
	if len(a.Value) == 0 {
		return "", false
	}
	var v struct {
		Button *string `json:"herald_button"`
		Action *struct {
			Data struct {
				Button *string `json:"herald_button"`
			} `json:"data"`
		} `json:"action"`
	}
	if json.Unmarshal(a.Value, &v) != nil {
		return "", false
	}
	var data *string
	switch {
	case a.Type == typeMessage:
		data = v.Button
	case a.Type == typeInvoke && a.Name == invokeCardAction && v.Action != nil:
		data = v.Action.Data.Button
	}
	if data == nil || len(*data) > adapters.MaxButtonData {
		return "", false
	}
	return *data, true
}

// press translates a button press; ok is false when the activity is not
// one.
func (a *activity) press() (adapters.Press, bool) {
	data, ok := a.buttonData()
	if !ok {
		return adapters.Press{}, false
	}
	src := a.source()
	return adapters.Press{
		Chat: src.Target(), ChatType: src.ChatType, MessageID: a.ReplyToID,
		UserID: src.UserID, UserName: src.UserName, Data: data,
	}, true
}
