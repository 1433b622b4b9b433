package herald

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Platform names a messaging platform: "local", "telegram", "discord",
// "slack", "api" (the OpenAI-compatible API), and the pseudo-platforms
// "cli" (herald chat) and "gateway" (work the gateway does on its own,
// such as BOOT.md).
type Platform string

const (
	PlatformLocal    Platform = "local"
	PlatformTelegram Platform = "telegram"
	PlatformDiscord  Platform = "discord"
	PlatformSlack    Platform = "slack"
	PlatformCLI      Platform = "cli"
	PlatformGateway  Platform = "gateway"
	// PlatformAPI is the OpenAI-compatible API served on the local
	// platform's listener (adapters/openaiapi).
	PlatformAPI Platform = "api"
)

// ChatType is the kind of conversation a message arrived in, with Hermes'
// values.
type ChatType string

const (
	ChatDM      ChatType = "dm"
	ChatGroup   ChatType = "group"
	ChatChannel ChatType = "channel"
	ChatThread  ChatType = "thread"
	ChatForum   ChatType = "forum"
)

// Source says where a message came from. The zero UserID means the platform
// did not say who sent it; the gateway drops such messages.
type Source struct {
	Platform Platform `json:"platform"`
	ChatID   string   `json:"chat_id"`
	ChatType ChatType `json:"chat_type"`
	ChatName string   `json:"chat_name,omitempty"`
	UserID   string   `json:"user_id"`
	UserName string   `json:"user_name"`
	ThreadID string   `json:"thread_id"`
	IsBot    bool     `json:"is_bot,omitempty"`
}

// Target returns where a reply to this source goes.
func (s Source) Target() Target {
	return Target{Platform: s.Platform, ChatID: s.ChatID, ThreadID: s.ThreadID}
}

// Media kinds (Media.Type).
const (
	MediaImage    = "image"
	MediaAudio    = "audio"
	MediaVoice    = "voice" // a voice note recorded in the chat app
	MediaVideo    = "video"
	MediaDocument = "document"
)

// Media is an attachment on an inbound message. Adapters fill what the
// platform says (Type, MIME, Name, Size) and how to fetch the bytes (URL
// and/or Ref, read back by their adapters.Fetcher); the gateway downloads
// each attachment once into the media cache and sets Path. Hooks see all
// of it; nothing here is a credential (Telegram's file URL, which embeds
// the bot token, is never stored: Ref holds the file_id instead).
type Media struct {
	// Type is one of image, audio, voice, video, document.
	Type string `json:"type"`
	// MIME is the content type the platform declared; the gateway sniffs
	// the bytes and keeps what it finds.
	MIME string `json:"mime,omitempty"`
	// Name is the file name the sender gave (untrusted: the cache
	// sanitises it).
	Name string `json:"name,omitempty"`
	// Size in bytes as the platform declared it (0: unknown).
	Size int64 `json:"size,omitempty"`
	// URL is where the bytes are, when the platform gives one.
	URL string `json:"url,omitempty"`
	// Ref is the adapter's own handle (Telegram's file_id, …).
	Ref string `json:"ref,omitempty"`
	// Path is the downloaded file in the media cache, set by the gateway.
	Path string `json:"path,omitempty"`
}

// MediaType maps a MIME type onto a Media kind (document when unknown).
func MediaType(mime string) string {
	mime = strings.ToLower(strings.TrimSpace(mime))
	switch {
	case strings.HasPrefix(mime, "image/"):
		return MediaImage
	case strings.HasPrefix(mime, "audio/ogg"), strings.HasPrefix(mime, "audio/opus"):
		return MediaVoice
	case strings.HasPrefix(mime, "audio/"):
		return MediaAudio
	case strings.HasPrefix(mime, "video/"):
		return MediaVideo
	}
	return MediaDocument
}

// Message is one inbound message, normalised by an adapter.
type Message struct {
	ID          string  `json:"message_id"`
	Text        string  `json:"text"`
	Source      Source  `json:"source"`
	ReplyTo     string  `json:"reply_to_message_id,omitempty"`
	ReplyToText string  `json:"reply_to_text,omitempty"`
	Media       []Media `json:"media,omitempty"`
	// ThreadContext is what was said in the message's thread before it
	// and is not in the conversation's history (a thread the bot joins
	// late, or messages it missed while down), as text for the model; the
	// gateway puts it before the message's text in the prompt.
	ThreadContext string `json:"thread_context,omitempty"`
	// Internal marks messages the gateway made itself (cron deliveries,
	// BOOT.md, system notices): they skip hooks and auth.
	Internal bool `json:"internal"`
	// Mentioned is set by adapters when, in a group, the bot was mentioned
	// or replied to.
	Mentioned bool `json:"mentioned,omitempty"`
	// UserRoles are the sender's role ids where the platform has roles
	// (Discord guild members), for platforms.discord.allowed_roles.
	UserRoles []string  `json:"user_roles,omitempty"`
	Received  time.Time `json:"-"`
}

// IsCommand reports whether the text is a slash command as Hermes parses
// one: a leading '/', and a first word that is not a path such as /tmp/x.
func (m Message) IsCommand() bool {
	name, _ := m.Command()
	return name != ""
}

// Command splits a slash command into its lower-cased name and its
// arguments. It returns "" for text that is not a command, and for a
// command addressed to a bot by name ("/new@otherbot"): adapters remove
// the suffix that names herald's own bot, so one left is another bot's.
func (m Message) Command() (name, args string) {
	return ParseCommand(m.Text)
}

// ParseCommand is Message.Command for a bare string.
func ParseCommand(text string) (name, args string) {
	name, bot, args := SplitCommand(text)
	if bot != "" {
		return "", ""
	}
	return name, args
}

// SplitCommand splits a slash command into its lower-cased name, the bot
// it is addressed to ("/new@herald_bot" names herald_bot; "" when none)
// and its arguments. name is "" for text that is not a command.
func SplitCommand(text string) (name, bot, args string) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return "", "", ""
	}
	// the command word ends at any white space, as Python's str.split
	// reads it: "/model\r\ngpt-4o" from a client sending CRLF is "model"
	word, rest := t, ""
	if i := strings.IndexFunc(t, unicode.IsSpace); i >= 0 {
		word, rest = t[:i], t[i:]
	}
	word = strings.TrimPrefix(word, "/")
	if at := strings.IndexByte(word, '@'); at >= 0 {
		word, bot = word[:at], word[at+1:]
	}
	if word == "" || strings.Contains(word, "/") {
		return "", "", ""
	}
	return strings.ToLower(word), bot, strings.TrimSpace(rest)
}

// StripBotSuffix removes "@bot" (any letter case) from the command word
// of text, for adapters: a command addressed to herald's own bot reads as
// a plain command. ok is false (and text unchanged) when text is not a
// command addressed to bot.
func StripBotSuffix(text, bot string) (out string, ok bool) {
	name, to, _ := SplitCommand(text)
	if name == "" || to == "" || bot == "" || !strings.EqualFold(to, bot) {
		return text, false
	}
	lead := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	at := lead + strings.IndexByte(text[lead:], '@')
	return text[:at] + text[at+1+len(to):], true
}

// Target is where the gateway delivers a message: a platform, a chat on it
// and optionally a thread. An empty ChatID means the platform's home
// channel.
type Target struct {
	Platform Platform `json:"platform"`
	ChatID   string   `json:"chat_id,omitempty"`
	ThreadID string   `json:"thread_id,omitempty"`
}

func (t Target) String() string {
	s := string(t.Platform)
	if t.ChatID != "" {
		s += ":" + t.ChatID
	}
	if t.ThreadID != "" {
		s += ":" + t.ThreadID
	}
	return s
}

// ErrBadTarget is returned by ParseTarget for text that names no target.
var ErrBadTarget = errors.New("bad target")

// ParseTarget reads Hermes' target forms: "platform" (its home channel),
// "platform:chat_id" and "platform:chat_id:thread_id".
func ParseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Target{}, fmt.Errorf("%w: empty", ErrBadTarget)
	}
	parts := strings.SplitN(s, ":", 3)
	t := Target{Platform: Platform(strings.ToLower(strings.TrimSpace(parts[0])))}
	if t.Platform == "" {
		return Target{}, fmt.Errorf("%w: %q has no platform", ErrBadTarget, s)
	}
	if len(parts) > 1 {
		t.ChatID = strings.TrimSpace(parts[1])
		if t.ChatID == "" {
			return Target{}, fmt.Errorf("%w: %q has an empty chat id", ErrBadTarget, s)
		}
	}
	if len(parts) > 2 {
		t.ThreadID = strings.TrimSpace(parts[2])
	}
	return t, nil
}

// Deliverer sends text to a Target through the gateway's one delivery path
// (formatting, splitting, retries, transcript). Tools, cron and BOOT.md use
// it; adapters never do. Deliver returns nil when the text was sent; a
// *QueuedError when it is kept to be sent later; an error wrapping
// ErrMaybeSent when it may or may not be in the chat. Neither of those
// two is to be delivered again.
type Deliverer interface {
	Deliver(ctx context.Context, to Target, text string) error
}

// Replier sends a side-channel reply into the chat a message came from,
// outside any agent turn (e.g. a hook telling the owner something).
type Replier interface {
	Reply(ctx context.Context, to Source, text string) error
}

// TranscriptAppender records a message in the transcript of the session
// the source maps to, without an agent turn (silent ingestion).
type TranscriptAppender interface {
	AppendTranscript(ctx context.Context, from Source, role, text string) error
}
