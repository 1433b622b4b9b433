package cmd

// platform_telegram.go adds the Telegram adapter to the gateway when a bot
// token is configured (TELEGRAM_BOT_TOKEN or platforms.telegram.token),
// unless platforms.telegram.enabled is false.

import (
	"time"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/config"
)

func init() {
	platformBuilders = append(platformBuilders, buildTelegram)
}

func buildTelegram(a *app) (adapters.Adapter, bool, error) {
	tc := a.cfg.Platforms.Telegram
	// enabled: true with no token still builds it, so /healthz says
	// which token is missing
	if !config.On(tc.Enabled, tc.Token != "") {
		return nil, false, nil
	}
	return telegram.New(telegram.Config{
		Token:         tc.Token,
		APIEndpoint:   tc.APIEndpoint,
		PollTimeout:   time.Duration(tc.PollTimeout) * time.Second,
		WebhookListen: tc.WebhookListen,
		WebhookSecret: tc.WebhookSecret,
		WebhookURL:    tc.WebhookURL,
		HomeChannel:   tc.HomeChannel,
		Store:         a.store,
		Reactions:     config.On(tc.Reactions, false),
		Log:           a.log.With("platform", "telegram"),
		Redactor:      a.redactor,
	}), true, nil
}
