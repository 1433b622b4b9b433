package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestGroupManners(t *testing.T) {
	cfg, warns, err := Parse([]byte(`
platforms:
  discord:
    allowed_channels: [1491973769726791812, "222"]
    ignored_channels: "333, 444"
    free_response_channels: 555
    allowed_roles: [900]
    mention_patterns: ["^hey herald\\b", "herald,"]
    reply_to_mode: all
  telegram:
    allowed_chats: "-100"
    free_response_chats: [-200]
    reply_to_mode: off
  slack:
    mention_patterns: hermes
`))
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse = %v, %v", warns, err)
	}
	d := cfg.Platforms.Discord
	if !slices.Equal(d.AllowedChannels, []string{"1491973769726791812", "222"}) || !slices.Equal(d.IgnoredChannels, []string{"333", "444"}) ||
		!slices.Equal(d.FreeResponseChannels, []string{"555"}) || !slices.Equal(d.AllowedRoles, []string{"900"}) {
		t.Errorf("discord lists = %+v", d)
	}
	if len(d.MentionPatterns) != 2 || !d.MentionPatterns[0].MatchString("Hey Herald, hi") || d.MentionPatterns[0].MatchString("they herald") {
		t.Errorf("mention patterns = %v", d.MentionPatterns)
	}
	if d.ReplyToMode.Or(ReplyFirst) != ReplyAll || cfg.Platforms.Telegram.ReplyToMode.Or(ReplyFirst) != ReplyOff {
		t.Errorf("reply modes: %q %q", d.ReplyToMode, cfg.Platforms.Telegram.ReplyToMode)
	}
	tg := cfg.Platforms.Telegram
	if !slices.Equal(tg.AllowedChats, []string{"-100"}) || !slices.Equal(tg.FreeResponseChats, []string{"-200"}) {
		t.Errorf("telegram = %+v", tg)
	}
	if len(cfg.Platforms.Slack.MentionPatterns) != 1 {
		t.Errorf("slack patterns = %v", cfg.Platforms.Slack.MentionPatterns)
	}
	// YAML 1.1's reading of a bare off
	cfg, _, err = Parse([]byte("platforms:\n  telegram:\n    reply_to_mode: false\n"))
	if err != nil || cfg.Platforms.Telegram.ReplyToMode != ReplyOff {
		t.Errorf("reply_to_mode false = %q, %v", cfg.Platforms.Telegram.ReplyToMode, err)
	}
}

func TestGroupMannersBadInput(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		line int
		msg  string
	}{
		{"platforms:\n  telegram:\n    mention_patterns:\n      - ok\n      - '(?<=x)y'\n", 5, "mention pattern"},
		{"platforms:\n  slack:\n    mention_patterns: '['\n", 3, "missing closing ]"},
		{"platforms:\n  discord:\n    reply_to_mode: sometimes\n", 3, `reply_to_mode "sometimes" is not one of first|all|off`},
		{"platforms:\n  discord:\n    allowed_channels: {a: 1}\n", 3, "expected an id or a list of ids"},
	} {
		_, _, err := Parse([]byte(tc.yaml))
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != tc.line || !strings.Contains(ce.Msg, tc.msg) {
			t.Errorf("%q: err = %v; want config.yaml:%d: …%s…", tc.yaml, err, tc.line, tc.msg)
		}
	}
}
