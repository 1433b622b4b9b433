package cmd

// platform_webhook.go adds the webhook platform (adapters/webhook) to the
// gateway when platforms.webhook has routes, unless
// platforms.webhook.enabled is false. Its routes are served on the
// inbound listener (inbound.go); answers are delivered through the
// Runner, which exists only after the adapters are built: lateGateway
// stands in for it until then.

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/webhook"
	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/gateway"
)

func init() {
	platformBuilders = append(platformBuilders, buildWebhook)
}

func buildWebhook(a *app) (adapters.Adapter, bool, error) {
	wc := a.cfg.Platforms.Webhook
	if !config.On(wc.Enabled, len(wc.Routes) > 0) {
		return nil, false, nil
	}
	names := make([]string, 0, len(wc.Routes))
	for name := range wc.Routes {
		names = append(names, name)
	}
	sort.Strings(names)
	routes := make([]webhook.Route, 0, len(names))
	for _, name := range names {
		r := wc.Routes[name]
		routes = append(routes, webhook.Route{
			Name: name, Secret: r.Secret, InsecureNoAuth: r.InsecureNoAuth, Events: r.Events, Prompt: r.Prompt,
			Deliver: r.Deliver, DeliverExtra: r.DeliverExtra, DeliverOnly: r.DeliverOnly,
			RateLimit: r.RateLimit, MaxBodyBytes: r.MaxBodyBytes,
		})
	}
	ad := webhook.New(webhook.Config{
		Routes: routes, Store: a.store, Deliverer: a.late, Known: a.late.known,
		PublicListener: !loopbackAddr(a.cfg.Inbound.Listen),
		Log:            a.log.With("platform", "webhook"),
	})
	for _, err := range ad.Skipped() {
		a.log.Error(err.Error())
	}
	return ad, true, nil
}

// lateGateway is the Runner for adapters built before it: a Deliverer,
// and the set of configured platforms.
type lateGateway struct {
	mu        sync.Mutex
	runner    *gateway.Runner
	platforms map[herald.Platform]bool
}

// bind makes the gateway real: r delivers, ads are the platforms.
func (l *lateGateway) bind(r *gateway.Runner, ads []adapters.Adapter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runner = r
	l.platforms = map[herald.Platform]bool{}
	for _, ad := range ads {
		l.platforms[ad.Platform()] = true
	}
}

var errNoGateway = errors.New("the gateway is not running")

// Deliver implements herald.Deliverer.
func (l *lateGateway) Deliver(ctx context.Context, to herald.Target, text string) error {
	l.mu.Lock()
	r := l.runner
	l.mu.Unlock()
	if r == nil {
		return errNoGateway
	}
	return r.Deliver(ctx, to, text)
}

// known reports whether p is a configured platform.
func (l *lateGateway) known(p herald.Platform) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.platforms[p]
}
