package cmd

import (
	"log/slog"
	"slices"
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/config"
)

// The group-manners keys of config.yaml reach the gateway's rules.
func TestGatewayConfigGroupManners(t *testing.T) {
	cfg, _, err := config.Parse([]byte(`
platforms:
  telegram:
    allowed_chats: "-100"
    allowed_channels: ["-300"]
    free_response_chats: [-200]
    mention_patterns: ["^herald\\b"]
  discord:
    ignored_channels: [7]
    allowed_roles: [900]
    reply_to_mode: all
  slack:
    free_response_channels: [C1]
`))
	if err != nil {
		t.Fatal(err)
	}
	gc := gatewayConfig(&app{e: &env{getenv: func(string) string { return "" }}, cfg: cfg, log: slog.New(slog.DiscardHandler)}, nil)
	tg, dc, sl := gc.Auth[herald.PlatformTelegram], gc.Auth[herald.PlatformDiscord], gc.Auth[herald.PlatformSlack]
	if !slices.Equal(tg.AllowedChannels, []string{"-100", "-300"}) || !slices.Equal(tg.FreeResponseChannels, []string{"-200"}) ||
		len(tg.MentionPatterns) != 1 || tg.ReplyToMode != "first" {
		t.Errorf("telegram = %+v", tg.GroupManners)
	}
	if !slices.Equal(dc.IgnoredChannels, []string{"7"}) || !slices.Equal(dc.AllowedRoles, []string{"900"}) || dc.ReplyToMode != "all" {
		t.Errorf("discord = %+v", dc.GroupManners)
	}
	if !slices.Equal(sl.FreeResponseChannels, []string{"C1"}) || sl.ReplyToMode != "" {
		t.Errorf("slack = %+v", sl.GroupManners)
	}
}
