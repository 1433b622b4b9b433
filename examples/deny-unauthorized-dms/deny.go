// Package denydms drops DMs from users it does not know before the
// gateway's auth runs, so they get no reply and no pairing code: the Go
// form of Hermes' "deny_unauthorized_dms" pre_gateway_dispatch example.
// Groups are left to the gateway's own rules.
package denydms

import (
	"context"
	"slices"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/hooks"
)

// New returns the plugin; approved are "platform:user_id" or bare user ids.
func New(approved ...string) hooks.Plugin {
	return hooks.Plugin{
		Name:        "deny-unauthorized-dms",
		Description: "silently skip DMs from unknown users (no pairing)",
		Register: func(c *hooks.PluginContext) error {
			c.RegisterHook(hooks.PreGatewayDispatchHook, hooks.Func(func(ctx context.Context, d *hooks.Dispatch) *hooks.DispatchDecision {
				s := d.Message.Source
				if s.ChatType != herald.ChatDM {
					return nil
				}
				if slices.Contains(approved, s.UserID) || slices.Contains(approved, string(s.Platform)+":"+s.UserID) {
					return nil
				}
				return &hooks.DispatchDecision{Action: "skip", Reason: "unauthorized-dm"}
			}))
			return nil
		},
	}
}
