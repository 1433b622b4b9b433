package sessions

import (
	"strings"

	"github.com/heraldgw/herald"
)

// KeyOptions are the settings that shape session keys.
type KeyOptions struct {
	// GroupPerUser isolates each participant of a group (Hermes'
	// group_sessions_per_user, default true).
	GroupPerUser bool
	// ThreadPerUser isolates participants inside threads too (default
	// false: a thread is one shared conversation).
	ThreadPerUser bool
}

// Key builds the session key for a source, as Hermes does:
// agent:main:{platform}:dm:{chat_id}[:{thread_id}] for DMs, and
// agent:main:{platform}:{chat_type}:{chat_id}[:{thread_id}][:{user_id}]
// otherwise.
func Key(src herald.Source, o KeyOptions) string {
	var b strings.Builder
	b.WriteString("agent:main:")
	b.WriteString(string(src.Platform))
	if src.ChatType == herald.ChatDM || src.ChatType == "" {
		b.WriteString(":dm")
		if src.ChatID != "" {
			b.WriteString(":" + src.ChatID)
		}
		if src.ThreadID != "" {
			b.WriteString(":" + src.ThreadID)
		}
		return b.String()
	}
	b.WriteString(":" + string(src.ChatType))
	if src.ChatID != "" {
		b.WriteString(":" + src.ChatID)
	}
	if src.ThreadID != "" {
		b.WriteString(":" + src.ThreadID)
	}
	perUser := o.GroupPerUser
	if src.ThreadID != "" && !o.ThreadPerUser {
		perUser = false
	}
	if perUser && src.UserID != "" {
		b.WriteString(":" + src.UserID)
	}
	return b.String()
}

// RekeyChat returns key with its chat id from replaced by to, and whether
// key belongs to chat from at all (agent:main:{platform}:{type}:{chat}…).
func RekeyChat(key, from, to string) (string, bool) {
	parts := strings.SplitN(key, ":", 6)
	if len(parts) < 5 || parts[4] != from {
		return key, false
	}
	parts[4] = to
	return strings.Join(parts, ":"), true
}

// KeyPlatform returns the platform part of a session key.
func KeyPlatform(key string) string {
	parts := strings.SplitN(key, ":", 4)
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}
