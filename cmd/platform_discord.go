package cmd

// platform_discord.go adds the Discord adapter to the gateway when a bot
// token is configured (DISCORD_BOT_TOKEN or platforms.discord.token),
// unless platforms.discord.enabled is false.

import (
	"fmt"
	"strings"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/discord"
	"github.com/heraldgw/herald/config"
)

func init() {
	platformBuilders = append(platformBuilders, buildDiscord)
}

func buildDiscord(a *app) (adapters.Adapter, bool, error) {
	dc := a.cfg.Platforms.Discord
	// enabled: true with no token still builds it, so /healthz says
	// which token is missing
	if !config.On(dc.Enabled, dc.Token != "") {
		return nil, false, nil
	}
	switch strings.ToLower(strings.TrimSpace(dc.AllowBots)) {
	case "", "none", "mentions", "all":
	default:
		return nil, false, fmt.Errorf("platforms.discord.allow_bots: %q is not one of none|mentions|all", dc.AllowBots)
	}
	if dc.MaxUploadMB < 0 || dc.MaxUploadMB > 500 {
		return nil, false, fmt.Errorf("platforms.discord.max_upload_mb: %d is not between 1 and 500", dc.MaxUploadMB)
	}
	return discord.New(discord.Config{
		MaxUpload:     int64(dc.MaxUploadMB) << 20,
		Token:         dc.Token,
		APIBase:       dc.APIBase,
		HomeChannel:   dc.HomeChannel,
		AllowBots:     strings.ToLower(strings.TrimSpace(dc.AllowBots)),
		OpenTimeout:   dc.OpenTimeout.D(),
		Reactions:     config.On(dc.Reactions, false),
		CommandGuilds: dc.CommandGuilds,
		ShardID:       dc.ShardID,
		ShardCount:    dc.ShardCount,
		Log:           a.log.With("platform", "discord"),
	}), true, nil
}
