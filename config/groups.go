package config

// groups.go: how the bot behaves in group chats — which channels it
// answers in, wake words that count as a mention, and whether replies
// quote the message they answer. Hermes' key names.

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Reply quoting modes (reply_to_mode).
const (
	ReplyFirst = "first" // the first message of a reply quotes (default)
	ReplyAll   = "all"   // every message of a reply quotes
	ReplyOff   = "off"   // none does
)

// IDList is a list of platform ids: a YAML list, or one value with ids
// separated by commas (Hermes' env-var form). Numbers are read as written,
// so a Discord snowflake keeps all its digits.
type IDList []string

func (l *IDList) UnmarshalYAML(n *yaml.Node) error {
	var out IDList
	add := func(x *yaml.Node) error {
		if x.Kind != yaml.ScalarNode {
			return nodeError(x, "expected an id")
		}
		if x.Tag == "!!null" {
			return nil
		}
		for _, p := range strings.Split(x.Value, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if err := add(n); err != nil {
			return err
		}
	case yaml.SequenceNode:
		for _, x := range n.Content {
			if err := add(x); err != nil {
				return err
			}
		}
	default:
		return nodeError(n, "expected an id or a list of ids")
	}
	*l = out
	return nil
}

// Patterns are regular expressions (Go's RE2 syntax), matched without
// regard to letter case. A pattern that does not compile is an error
// naming its line.
type Patterns []*regexp.Regexp

func (p *Patterns) UnmarshalYAML(n *yaml.Node) error {
	var nodes []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag != "!!null" {
			nodes = []*yaml.Node{n}
		}
	case yaml.SequenceNode:
		nodes = n.Content
	default:
		return nodeError(n, "expected a pattern or a list of patterns")
	}
	var out Patterns
	for _, x := range nodes {
		if x.Kind != yaml.ScalarNode {
			return nodeError(x, "expected a pattern")
		}
		if strings.TrimSpace(x.Value) == "" {
			continue
		}
		re, err := regexp.Compile("(?i)" + x.Value)
		if err != nil {
			return nodeError(x, "mention pattern %q: %v", x.Value, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
		out = append(out, re)
	}
	*p = out
	return nil
}

// ReplyMode is reply_to_mode: first, all or off ("" = first). YAML's
// false (how YAML 1.1 readers take a bare off) is off.
type ReplyMode string

func (m *ReplyMode) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return nodeError(n, "reply_to_mode: expected first, all or off")
	}
	v := strings.ToLower(strings.TrimSpace(n.Value))
	switch v {
	case ReplyFirst, ReplyAll, ReplyOff:
	case "false", "no":
		v = ReplyOff
	case "":
		v = ""
	default:
		return nodeError(n, "reply_to_mode %q is not one of first|all|off", n.Value)
	}
	*m = ReplyMode(v)
	return nil
}

// Or is m, or def when m is unset.
func (m ReplyMode) Or(def string) string {
	if m == "" {
		return def
	}
	return string(m)
}

// Groups is what every platform shares about group chats. Channel lists
// hold chat ids (a Discord thread matches by its own id or its parent
// channel's; "*" matches every chat).
type Groups struct {
	// AllowedChannels: when set, the bot answers in no other group chat.
	AllowedChannels IDList `yaml:"allowed_channels"`
	// IgnoredChannels: group chats where the bot never answers, even when
	// mentioned.
	IgnoredChannels IDList `yaml:"ignored_channels"`
	// FreeResponseChannels: group chats where the bot answers without
	// being mentioned.
	FreeResponseChannels IDList `yaml:"free_response_channels"`
	// MentionPatterns are wake words: a group message matching one counts
	// as mentioning the bot.
	MentionPatterns Patterns `yaml:"mention_patterns"`
}
