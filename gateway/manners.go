package gateway

// manners.go: how herald behaves in group chats — the channel policy
// (allowed, ignored and free-response channels), what counts as being
// addressed (a mention or a reply to the bot, a wake word, a
// free-response channel; never a command addressed to another bot),
// Discord roles that let a member in, and which messages of a reply quote
// the message they answer (reply_to_mode).

import (
	"regexp"
	"slices"

	"github.com/heraldgw/herald"
)

// GroupManners is one platform's rules for group chats. Channel lists
// hold chat ids; a chat matches by its ChatID or its ThreadID (a Discord
// thread by its own id or its parent channel's), and "*" matches every
// chat. DMs are not channels: none of the lists applies to them.
type GroupManners struct {
	// AllowedChannels, when set, are the only group chats herald answers
	// in.
	AllowedChannels []string
	// IgnoredChannels are group chats herald never answers in, even when
	// mentioned.
	IgnoredChannels []string
	// FreeResponseChannels are group chats where herald answers without
	// being mentioned.
	FreeResponseChannels []string
	// MentionPatterns are wake words: a group message matching one counts
	// as a mention.
	MentionPatterns []*regexp.Regexp
	// AllowedRoles let a member with one of these roles (in the server
	// the message came from: Message.UserRoles) in, as AllowedUsers do.
	AllowedRoles []string
	// ReplyToMode is which messages of a reply in a group quote the
	// message answered: "first" (the first message of each reply), "all",
	// or "off"/"" (none). Replies in DMs never quote.
	ReplyToMode string
}

// inChannels reports whether src's chat or thread is listed.
func inChannels(list []string, src herald.Source) bool {
	for _, id := range list {
		if id == "*" || id == src.ChatID || (src.ThreadID != "" && id == src.ThreadID) {
			return true
		}
	}
	return false
}

// channelAllowed reports whether herald may answer in src's chat at all.
func (g GroupManners) channelAllowed(src herald.Source) bool {
	if src.ChatType == herald.ChatDM {
		return true
	}
	if len(g.AllowedChannels) > 0 && !inChannels(g.AllowedChannels, src) {
		return false
	}
	return !inChannels(g.IgnoredChannels, src)
}

// freeResponse reports whether herald answers in src's chat unmentioned.
func (g GroupManners) freeResponse(src herald.Source) bool {
	return src.ChatType != herald.ChatDM && inChannels(g.FreeResponseChannels, src)
}

// roleAllowed reports whether m's sender has one of the allowed roles.
// Roles belong to a server: a DM's count for nothing.
func (g GroupManners) roleAllowed(m *herald.Message) bool {
	if m.Source.ChatType == herald.ChatDM || len(g.AllowedRoles) == 0 {
		return false
	}
	return slices.ContainsFunc(m.UserRoles, func(r string) bool { return slices.Contains(g.AllowedRoles, r) })
}

// addressed reports whether a group message is for herald. A command
// addressed to another bot (/status@otherbot) is not, unless the message
// itself mentions or replies to herald; anything else is when herald was
// mentioned or replied to, when the platform does not require a mention,
// in a free-response channel, or when a wake word matches.
func (pa PlatformAuth) addressed(m *herald.Message) bool {
	if _, bot, _ := herald.SplitCommand(m.Text); bot != "" {
		return m.Mentioned
	}
	if m.Mentioned || !pa.RequireMention || pa.freeResponse(m.Source) {
		return true
	}
	for _, re := range pa.MentionPatterns {
		if re.MatchString(m.Text) {
			return true
		}
	}
	return false
}

// quoting is which messages of one reply quote the message it answers.
type quoting struct {
	id  string // the platform message id quoted ("" = none)
	all bool   // every message, not only the first
}

// quoteFor is how a reply to m quotes it, by its platform's reply_to_mode.
func (r *Runner) quoteFor(m herald.Message) quoting {
	if m.Internal || m.ID == "" || m.Source.ChatType == herald.ChatDM {
		return quoting{}
	}
	switch r.cfg.Auth[m.Source.Platform].ReplyToMode {
	case "first":
		return quoting{id: m.ID}
	case "all":
		return quoting{id: m.ID, all: true}
	}
	return quoting{}
}

// of is the ReplyTo of a reply's part (1-based).
func (q quoting) of(part int) string {
	if part == 1 || q.all {
		return q.id
	}
	return ""
}
