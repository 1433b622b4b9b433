package cmd

// platform_teams.go adds the Microsoft Teams adapter to the gateway when
// an app id is configured (MICROSOFT_APP_ID or platforms.teams.app_id),
// unless platforms.teams.enabled is false. Its activity endpoint,
// /api/messages, is served on the inbound listener.

import (
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/teams"
	"github.com/heraldgw/herald/config"
)

func init() {
	platformBuilders = append(platformBuilders, buildTeams)
	platformCommons[teams.Platform] = func(c *config.Config) config.Common { return c.Platforms.Teams.Common }
}

func buildTeams(a *app) (adapters.Adapter, bool, error) {
	tc := a.cfg.Platforms.Teams
	// enabled: true with no app id still builds it, so /healthz says
	// what is missing
	if !config.On(tc.Enabled, tc.AppID != "") {
		return nil, false, nil
	}
	return teams.New(teams.Config{
		AppID:             tc.AppID,
		AppPassword:       tc.AppPassword,
		TenantID:          tc.TenantID,
		OpenIDMetadataURL: tc.OpenIDMetadataURL,
		TokenURL:          tc.TokenURL,
		HomeChannel:       tc.HomeChannel,
		Store:             a.store,
		Log:               a.log.With("platform", "teams"),
		Redactor:          a.redactor,
	}), true, nil
}
