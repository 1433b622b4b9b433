package cmd

// platform_runs.go wires the runs API (platform "runs") onto the local
// platform's listener, and the hook-point feed it shares with the local
// platform's /v1/events.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/adapters/runs"
	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// newRuns builds the runs adapter and serves it on loc.
func newRuns(a *app, loc *local.Adapter) *runs.Adapter {
	keys := sessionKeyOptions(a.cfg)
	var r *runs.Adapter
	r = runs.New(runs.Config{
		Store: apiStore{a.store},
		Events: func(fn func(runs.HookPoint)) func() {
			// hook points are encoded only while a run goes on
			return subscribeHookPoints(a, "runs events", func() bool { return r.Following() },
				func(name string, ctx json.RawMessage, at time.Time, _ uint64) {
					fn(runs.HookPoint{Name: name, Context: ctx, Time: at})
				})
		},
		SessionKey: func(src herald.Source) string { return sessions.Key(src, keys) },
		Redact:     a.redactor.Redact,
		Log:        a.log.With("platform", string(runs.Platform)),
	})
	r.Register(loc)
	return r
}

// subscribeHookPoints subscribes fn to every hook point as it fires, its
// payload in its JSON wire form with secrets masked (it leaves the
// process; nil for none), with the time it was emitted and the firing's
// id (hooks.Event.Point). While wanted (if
// set) says no, hook points are skipped unencoded.
func subscribeHookPoints(a *app, name string, wanted func() bool, fn func(name string, ctx json.RawMessage, at time.Time, point uint64)) (unsubscribe func()) {
	return a.hooks.Subscribe(hooks.Subscription{Name: name, Attach: hooks.AttachInternal, Events: []string{"*"}, QueueSize: 8192,
		Handler: func(ctx context.Context, ev hooks.Event) (any, error) {
			if wanted != nil && !wanted() {
				return nil, nil
			}
			if ev.Payload == nil {
				fn(ev.Name, nil, ev.Time, ev.Point)
				return nil, nil
			}
			b, err := json.Marshal(ev.Payload)
			if err != nil {
				return nil, err
			}
			fn(ev.Name, json.RawMessage(hooks.RedactJSON(a.redactor, b)), ev.Time, ev.Point)
			return nil, nil
		}})
}

// sessionKeyOptions are the gateway's session key options.
func sessionKeyOptions(c *config.Config) sessions.KeyOptions {
	return sessions.KeyOptions{GroupPerUser: config.On(c.GroupSessionsPerUser, true)}
}
