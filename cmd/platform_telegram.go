package cmd

// platform_telegram.go adds the Telegram adapter to the gateway when a bot
// token is configured (TELEGRAM_BOT_TOKEN or platforms.telegram.token),
// unless platforms.telegram.enabled is false.

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/replica"
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

// telegramPolling is the leadership of Telegram's long polling among
// replicas (replica.Coordinator.LeaderFor).
const telegramPolling = "telegram-polling"

// leadTelegramPolling makes a polling Telegram adapter poll only while
// this replica leads telegramPolling: two replicas calling getUpdates for
// one bot would take each other's updates (Telegram answers the older
// call 409 Conflict). In webhook mode every replica receives, and ad is
// returned as it is; so is every other platform's adapter.
func leadTelegramPolling(a *app, coord *replica.Coordinator, ad adapters.Adapter) adapters.Adapter {
	tg, ok := ad.(*telegram.Adapter)
	tc := a.cfg.Platforms.Telegram
	if coord == nil || !ok || tc.WebhookListen != "" || tc.WebhookURL != "" {
		return ad
	}
	return &ledTelegram{Adapter: tg, leader: coord.LeaderFor(telegramPolling), every: coord.PollEvery(), log: a.log.With("platform", "telegram")}
}

// ledTelegram runs its Telegram adapter's Run while this replica leads
// the polling, and waits to lead again when it loses it. Everything else
// (sending, editing, buttons) is the adapter's own and works on every
// replica. Run may be called again after it returned: the update offset
// is in the store, so a new leader polls on from where the last stopped.
type ledTelegram struct {
	*telegram.Adapter
	leader  *replica.Leader
	every   time.Duration
	log     *slog.Logger
	standby atomic.Bool
}

// Run implements adapters.Adapter.
func (l *ledTelegram) Run(ctx context.Context, sink adapters.Sink) error {
	defer l.standby.Store(false)
	for {
		l.standby.Store(true)
		lctx, cancel := context.WithCancel(ctx)
		lost, err := l.leader.Lead(lctx, l.every)
		if err != nil {
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("telegram: polling leader election: %w", err)
		}
		l.standby.Store(false)
		l.log.Info("telegram: this replica polls for updates")
		go func() {
			select {
			case <-lost:
				cancel()
			case <-lctx.Done():
			}
		}()
		err = l.Adapter.Run(lctx, sink)
		cancel() // gives the lock up
		<-lost
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err // the gateway runs it again after a pause; another replica may poll meanwhile
		}
		l.log.Warn("telegram: lost the polling leadership; another replica polls")
	}
}

// Health implements adapters.Healther: "standby" while another replica
// polls.
func (l *ledTelegram) Health() string {
	if l.standby.Load() {
		return "standby"
	}
	return l.Adapter.Health()
}
