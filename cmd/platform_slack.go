package cmd

// platform_slack.go adds the Slack adapter to the gateway when a bot token
// is configured (SLACK_BOT_TOKEN or platforms.slack.bot_token), unless
// platforms.slack.enabled is false. Socket Mode also needs SLACK_APP_TOKEN;
// mode: events needs SLACK_SIGNING_SECRET.

import (
	"fmt"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/slack"
	"github.com/heraldgw/herald/config"
)

func init() {
	platformBuilders = append(platformBuilders, buildSlack)
}

func buildSlack(a *app) (adapters.Adapter, bool, error) {
	sc := a.cfg.Platforms.Slack
	// enabled: true with no token still builds it, so /healthz says
	// which token is missing
	if !config.On(sc.Enabled, sc.BotToken != "") {
		return nil, false, nil
	}
	switch sc.Mode {
	case "", slack.ModeSocket, slack.ModeEvents:
	default:
		return nil, false, fmt.Errorf("config.yaml: platforms.slack.mode %q is not one of socket|events", sc.Mode)
	}
	switch sc.SlashReplies {
	case "", slack.SlashChannel, slack.SlashEphemeral:
	default:
		return nil, false, fmt.Errorf("config.yaml: platforms.slack.slash_replies %q is not one of channel|ephemeral", sc.SlashReplies)
	}
	return slack.New(slack.Config{
		BotToken:      sc.BotToken,
		AppToken:      sc.AppToken,
		SigningSecret: sc.SigningSecret,
		APIURL:        sc.APIURL,
		Mode:          sc.Mode,
		EventsListen:  sc.EventsListen,
		HomeChannel:   sc.HomeChannel,
		Threads:       a.store,
		Reactions:     config.On(sc.Reactions, false),
		SlashReplies:  sc.SlashReplies,
		Log:           a.log.With("platform", "slack"),
		Redactor:      a.redactor,
	}), true, nil
}
