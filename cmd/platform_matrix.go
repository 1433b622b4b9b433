package cmd

// platform_matrix.go adds the Matrix adapter to the gateway when a
// homeserver is configured (MATRIX_HOMESERVER or
// platforms.matrix.homeserver), unless platforms.matrix.enabled is false.
// It syncs with the homeserver itself: nothing is served on the inbound
// listener.

import (
	"context"
	"fmt"
	"net/url"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/matrix"
	"github.com/heraldgw/herald/config"
)

func init() {
	platformBuilders = append(platformBuilders, buildMatrix)
	platformCommons[matrix.Platform] = func(c *config.Config) config.Common { return c.Platforms.Matrix.Common }
}

func buildMatrix(a *app) (adapters.Adapter, bool, error) {
	mc := a.cfg.Platforms.Matrix
	// enabled: true with no homeserver still builds it, so /healthz says
	// which setting is missing
	if !config.On(mc.Enabled, mc.Homeserver != "") {
		return nil, false, nil
	}
	if mc.Homeserver != "" {
		if u, err := url.Parse(mc.Homeserver); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, false, fmt.Errorf("config.yaml: platforms.matrix.homeserver %q is not an http(s) URL (e.g. https://matrix.example.org)", mc.Homeserver)
		}
	}
	allowed := mc.AllowedUsers
	if truthy(a.e.getenv("GATEWAY_ALLOW_ALL_USERS")) {
		allowed = append(allowed, "*")
	}
	return matrix.New(matrix.Config{
		Homeserver:   mc.Homeserver,
		AccessToken:  mc.AccessToken,
		UserID:       mc.UserID,
		Password:     mc.Password,
		DeviceID:     mc.DeviceID,
		HomeChannel:  mc.HomeChannel,
		AllowedUsers: allowed,
		Paired: func(ctx context.Context, user string) bool {
			ok, err := a.store.Paired(ctx, string(matrix.Platform), user)
			return err == nil && ok
		},
		Store:    a.store,
		Log:      a.log.With("platform", "matrix"),
		Redactor: a.redactor,
	}), true, nil
}
