package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/adapters/runs"
	"github.com/heraldgw/herald/adapters/webhook"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/cron"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/sessions"
)

// platformBuilder builds one platform's adapter from the configuration;
// ok is false when the platform is not configured. Each platform adds
// itself to platformBuilders in its own file.
type platformBuilder func(a *app) (ad adapters.Adapter, ok bool, err error)

var platformBuilders []platformBuilder

// platformCommons give the shared settings (allowed users, home channel,
// …) of platforms that register them beside their builder, so that a new
// platform needs no line in gatewayConfig or homeChannel.
var platformCommons = map[herald.Platform]func(*config.Config) config.Common{}

// gatewayHooks are started with the gateway after the registry exists
// (directory hooks, shell hooks, BOOT.md, cron); each returns a stop
// function. Files register them in init.
type gatewayHook func(ctx context.Context, a *app, g *gatewayParts) (stop func(), err error)

var gatewayHooks []gatewayHook

// gatewayParts is what gatewayHooks may use.
type gatewayParts struct {
	runner *gateway.Runner
	local  *local.Adapter
	// leader elects the replica that runs cron; nil for one process
	leader cron.Leader
}

func (e *env) gateway(ctx context.Context, args []string) error {
	if len(args) > 0 {
		if sub, ok := serviceCommands[args[0]]; ok {
			return sub(e, ctx, args[1:])
		}
	}
	fs := e.flags("gateway")
	acceptHooks := fs.Bool("accept-hooks", false, "consent to every configured shell hook")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("unknown gateway command %q (herald gateway runs it; its commands are install, uninstall, start, stop, restart and status)", pos[0])
	}
	if *acceptHooks {
		e.acceptHooks = true
	}
	a, err := e.newApp(appOptions{logToFile: true})
	if err != nil {
		return err
	}
	defer a.close()
	// one gateway per home on SQLite; replicas of a PostgreSQL store are
	// told apart by their replica id instead
	if a.store.Path() != "" {
		lock, err := lockGateway(a.home)
		if err != nil {
			return err
		}
		defer lock.release()
	}
	a.log.Info("state store", "backend", a.store.Backend(), "replica", a.store.ReplicaID())
	if a.sandboxWarning != "" {
		a.log.Warn(a.sandboxWarning)
	}

	if a.endpoint.Offline {
		a.log.Warn("no model credentials configured: using the offline echo model, which repeats what it is told (say \"run: <command>\" to see it call the terminal tool). Set OPENAI_API_KEY, and OPENAI_BASE_URL or model.base_url for another endpoint, to use a real model.")
	} else {
		a.log.Info("model", "model", a.endpoint.Model, "base_url", a.endpoint.BaseURL)
	}

	token, err := localToken(a.home)
	if err != nil {
		return err
	}
	a.redactor.Add(token)
	runnerReady := make(chan *gateway.Runner, 1)
	// started is the runner once it is built (the local platform is built
	// first and may be asked for /healthz before)
	started := func() *gateway.Runner {
		select {
		case r := <-runnerReady:
			runnerReady <- r
			return r
		default:
			return nil
		}
	}
	var runner *gateway.Runner
	lc := a.cfg.Platforms.Local
	addrFile := filepath.Join(a.home, "local.addr")
	loc := local.New(local.Config{
		Listen: lc.Listen, Token: token, AllowedHosts: lc.AllowedHosts, MaxMessageLength: lc.MaxMessageLength, Log: a.log.With("platform", "local"),
		// a little over media.max_bytes, so that the gateway's own limit
		// message answers a file just over it
		MaxUpload: a.cfg.Media.MaxBytes + 1<<20, FilesDir: filepath.Join(a.home, "local-files"),
		Outbox: a.store,
		Events: localEvents(a), EventNames: pluginCommandEvents(a),
		Health: func() map[string]string {
			if r := started(); r != nil {
				return r.Health()
			}
			return map[string]string{"local": "starting"}
		},
		Replica: func() any {
			if r := started(); r != nil {
				if st, ok := r.Replica(); ok {
					return st
				}
			}
			// one process: its id alone (the store names it)
			return map[string]string{"id": a.store.ReplicaID()}
		},
		Delivery: func() local.Delivery {
			if r := started(); r != nil {
				d := r.Delivery()
				return local.Delivery{MaybeSent: d.MaybeSent, Queued: d.Queued}
			}
			return local.Delivery{}
		},
		OnListen: func(addr string) {
			os.WriteFile(addrFile, []byte(addr+"\n"), 0o600)
			fmt.Fprintf(e.stdout, "herald gateway: local platform listening on http://%s\n", addr)
			fmt.Fprintf(e.stdout, "  token: %s\n", filepath.Join(a.home, "local.token"))
			fmt.Fprintf(e.stdout, "  try:   curl -s -H \"Authorization: Bearer $(cat %s)\" -d '{\"chat_id\":\"c1\",\"user_id\":\"u1\",\"text\":\"hi\"}' http://%s/v1/messages\n", filepath.Join(a.home, "local.token"), addr)
			a.log.Info("local platform listening", "addr", addr)
		},
	})
	api := newAPI(a, loc, func() herald.TranscriptAppender { return runner })
	ads := []adapters.Adapter{loc, api, newRuns(a, loc)}
	// the platforms people talk on (api and runs live on local's listener)
	talkedOn := map[herald.Platform]bool{loc.Platform(): true}
	a.late = &lateGateway{}
	// replicas coordinate through the store's PostgreSQL; some platforms
	// connect on one replica at a time
	coord, closeCoord, err := openReplica(a)
	if err != nil {
		return err
	}
	defer closeCoord()
	for _, b := range platformBuilders {
		ad, ok, err := b(a)
		if err != nil {
			return err
		}
		if ok {
			ad = leadTelegramPolling(a, coord, ad)
			ads = append(ads, ad)
			talkedOn[ad.Platform()] = true
		}
	}
	inbound, err := openInbound(a, ads)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	gcfg := gatewayConfig(a, ads)
	allFailed := watchPlatforms(e, talkedOn, cancel)
	gcfg.PlatformFailed = allFailed.failed
	if coord != nil {
		gcfg.Coordinator = coord
	}
	runner = gateway.New(gcfg)
	a.late.bind(runner, ads)
	runnerReady <- runner

	if inbound != nil {
		inboundDone := make(chan struct{})
		go func() {
			defer close(inboundDone)
			if err := inbound.serve(runCtx); err != nil {
				a.log.Error("inbound listener stopped", "err", err)
			}
		}()
		defer func() { cancel(); <-inboundDone }()
	}
	parts := &gatewayParts{runner: runner, local: loc}
	if coord != nil {
		parts.leader = coord.Leader()
	}
	var stops []func()
	for _, gh := range gatewayHooks {
		stop, err := gh(runCtx, a, parts)
		if err != nil {
			for _, s := range stops {
				s()
			}
			return err
		}
		if stop != nil {
			stops = append(stops, stop)
		}
	}
	err = runner.Run(runCtx)
	for i := len(stops) - 1; i >= 0; i-- {
		stops[i]()
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	a.closeHooks(dctx)
	dcancel()
	os.Remove(addrFile)
	a.log.Info("gateway stopped")
	if err == nil {
		err = allFailed.err()
	}
	return err
}

// platformWatch stops the gateway once every platform people talk on has
// stopped for good; until then each failure is one line on stderr, so that
// it is seen beside the platforms that keep serving.
type platformWatch struct {
	mu      sync.Mutex
	e       *env
	left    map[herald.Platform]bool
	stop    context.CancelFunc
	lastErr error
}

func watchPlatforms(e *env, talkedOn map[herald.Platform]bool, stop context.CancelFunc) *platformWatch {
	return &platformWatch{e: e, left: talkedOn, stop: stop}
}

func (w *platformWatch) failed(p herald.Platform, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.left[p] {
		return
	}
	delete(w.left, p)
	line := fmt.Sprintf("platform %s failed to start or stopped for good: %s", p, reason)
	if len(w.left) > 0 {
		fmt.Fprintf(w.e.stderr, "herald: %s (the other platforms keep running)\n", line)
		return
	}
	w.lastErr = &exitError{code: 1, msg: line}
	w.stop()
}

// err is the error the gateway exits with: set once no platform is left.
func (w *platformWatch) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastErr
}

// gatewayConfig builds the Runner's configuration from herald's.
func gatewayConfig(a *app, ads []adapters.Adapter) gateway.Config {
	c := a.cfg
	auth := map[herald.Platform]gateway.PlatformAuth{}
	approvers := map[herald.Platform][]string{}
	add := func(p herald.Platform, cm config.Common, trust bool, gm gateway.GroupManners) {
		approvers[p] = cm.Approvers
		gm.AllowedChannels = append(gm.AllowedChannels, cm.AllowedChannels...)
		gm.IgnoredChannels = cm.IgnoredChannels
		gm.FreeResponseChannels = append(gm.FreeResponseChannels, cm.FreeResponseChannels...)
		gm.MentionPatterns = cm.MentionPatterns
		auth[p] = gateway.PlatformAuth{
			AllowedUsers: cm.AllowedUsers, UnauthorizedDM: firstNonEmpty(cm.UnauthorizedDM, c.UnauthorizedDM),
			TrustAll: trust, HomeChannel: cm.HomeChannel, RequireMention: config.On(cm.RequireMention, true),
			DisabledTools: cm.DisabledTools, GroupManners: gm,
		}
	}
	tg, dc := c.Platforms.Telegram, c.Platforms.Discord
	add(herald.PlatformLocal, c.Platforms.Local.Common, true, gateway.GroupManners{})
	add(herald.PlatformAPI, config.Common{}, true, gateway.GroupManners{}) // behind the local token
	add(runs.Platform, config.Common{}, true, gateway.GroupManners{})      // behind the local token
	add(herald.PlatformTelegram, tg.Common, false, gateway.GroupManners{ReplyToMode: tg.ReplyToMode.Or(config.ReplyFirst),
		AllowedChannels: tg.AllowedChats, FreeResponseChannels: tg.FreeResponseChats})
	add(herald.PlatformDiscord, dc.Common, false, gateway.GroupManners{ReplyToMode: dc.ReplyToMode.Or(config.ReplyFirst), AllowedRoles: dc.AllowedRoles})
	// Slack answers a channel message in a thread under it: no quoting
	add(herald.PlatformSlack, c.Platforms.Slack.Common, false, gateway.GroupManners{})
	add(herald.PlatformCLI, config.Common{}, true, gateway.GroupManners{})
	// each route authenticates its sender by signature
	add(webhook.Platform, config.Common{}, true, gateway.GroupManners{})
	for p, common := range platformCommons {
		add(p, common(c), false, gateway.GroupManners{})
	}
	media := gateway.MediaConfig{Dir: filepath.Join(a.home, "media"), MaxBytes: c.Media.MaxBytes, SendPaths: a.sendPaths}
	if ep, ok := c.STTEndpoint(); ok {
		media.Transcriber = agent.NewTranscriber(ep.BaseURL, ep.APIKey, ep.Model, nil)
	}
	return gateway.Config{
		Media:    media,
		Adapters: ads, Store: a.store, Hooks: a.hooks, Agent: a.agent, Redactor: a.redactor, Log: a.log.With("component", "gateway"),
		Keys:            sessionKeyOptions(c),
		BusyMode:        c.BusyMode(),
		Auth:            auth,
		AllowAllUsers:   truthy(a.e.getenv("GATEWAY_ALLOW_ALL_USERS")),
		ShutdownGrace:   c.ShutdownGrace.D(),
		UnauthorizedDM:  c.UnauthorizedDM,
		Reset:           sessions.ResetPolicy{Mode: c.SessionReset.Mode, AtHour: c.SessionReset.AtHour, IdleMinutes: c.SessionReset.IdleMinutes},
		ResetNotify:     c.SessionReset.Notify,
		ApprovalTimeout: c.Approvals.Timeout.D(),
		ApproverUsers:   approvers,
	}
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
