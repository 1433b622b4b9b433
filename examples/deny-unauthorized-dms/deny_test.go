package denydms_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/examples/deny-unauthorized-dms"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/gateway/gatewaytest"
	"github.com/heraldgw/herald/hooks"
)

// Without the plugin a stranger's DM on a platform with no allowlist gets
// a pairing code; with it, nothing at all.
func TestStrangersGetNothing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		plugins []hooks.Plugin
		replies int
	}{
		{"without the plugin", nil, 1},
		{"with the plugin", []hooks.Plugin{denydms.New("local:friend")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gatewaytest.Start(t, gatewaytest.Options{Plugins: tc.plugins, Local: &gateway.PlatformAuth{AllowedUsers: []string{"friend"}, UnauthorizedDM: gateway.DMPair}})
			r := g.Post(t, gatewaytest.Message{Chat: "d1", User: "stranger", Text: "hi"})
			if r.Status != "skipped" || len(r.Replies) != tc.replies {
				t.Fatalf("stranger: %+v", r)
			}
			_, pending, _ := g.Store.Pairings(context.Background(), time.Now())
			if len(pending) != tc.replies {
				t.Fatalf("%d pairing codes", len(pending))
			}
			if r := g.Post(t, gatewaytest.Message{Chat: "d2", User: "friend", Text: "hi"}); r.Text() != agent.EchoPrefix+"hi" {
				t.Fatalf("friend: %q", r.Text())
			}
		})
	}
}
