package telegram

// telegram.go holds the Adapter, its configuration and Run: getMe, then the
// long-poll loop (or the webhook server in webhook.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// DefaultAPIEndpoint is Telegram's Bot API in the library's "…/bot%s/%s"
// form (token, then method).
const DefaultAPIEndpoint = tgbotapi.APIEndpoint

// Defaults for the zero values of Config.
const (
	DefaultPollTimeout  = 30 * time.Second
	DefaultReconnectMin = time.Second
	DefaultReconnectMax = time.Minute
	// transferTimeout bounds one file download or upload.
	transferTimeout = 10 * time.Minute
)

// MaxLength is Telegram's message limit, in UTF-16 code units.
const MaxLength = 4096

// OffsetStore keeps the next getUpdates offset across restarts;
// *sessions.Store implements it.
type OffsetStore interface {
	Offset(ctx context.Context, platform string) (string, error)
	SetOffset(ctx context.Context, platform, value string) error
}

// Config configures an Adapter.
type Config struct {
	// Token is the bot token (TELEGRAM_BOT_TOKEN).
	Token string
	// APIEndpoint is the Bot API in "…/bot%s/%s" form; "" means Telegram.
	APIEndpoint string
	// PollTimeout is how long one getUpdates may wait for updates (whole
	// seconds, at least one).
	PollTimeout time.Duration
	// WebhookListen, when set, switches to webhook mode: an HTTP server on
	// this address receives updates. WebhookSecret is then required.
	WebhookListen string
	WebhookSecret string
	// WebhookURL, when set, is registered with setWebhook at start (the
	// public URL Telegram posts to). Without WebhookListen it also
	// switches to webhook mode, served at WebhookPath on the shared
	// inbound listener (webhook.go).
	WebhookURL string
	// HomeChannel is the chat a bare "telegram" target delivers to.
	HomeChannel string
	// Store keeps the polling offset; nil keeps it in memory only.
	Store OffsetStore
	// HTTPClient makes the requests; its Timeout is raised above the poll
	// timeout when shorter. nil gets a fresh client.
	HTTPClient *http.Client
	// ReconnectMin and ReconnectMax bound the backoff after network loss.
	ReconnectMin, ReconnectMax time.Duration
	// OnListen is called with the webhook server's address once it
	// listens.
	OnListen func(addr string)
	// Reactions shows processing reactions on the messages herald
	// answers: 👀 while a turn runs, then 👍 or 👎 (feedback.go).
	Reactions bool
	Log       *slog.Logger
	Redactor  *herald.Redactor
}

// Adapter is the Telegram platform.
type Adapter struct {
	cfg  Config
	log  *slog.Logger
	red  *herald.Redactor
	http *http.Client
	// transfer is http with a timeout long enough for file transfers.
	transfer *http.Client

	mu    sync.Mutex
	state string
	self  botIdentity
	// edits remembers the last text of messages this adapter sent or
	// edited, to skip identical edits; bounded by clearing.
	edits map[string]string
	// menu is the command menu SetCommands gave (menu.go); menuPublished
	// says Telegram has it.
	menu                   []tgbotapi.BotCommand
	menuSet, menuPublished bool
	// moved maps groups upgraded to supergroups to their new chat ids
	// (migrate.go).
	moved map[string]string
	// rx shows processing reactions; nil when they are off.
	rx *adapters.Reactions
	// inbound is the webhook on the shared inbound listener (webhook.go).
	inbound adapters.Mount
}

var (
	_ adapters.Adapter       = (*Adapter)(nil)
	_ adapters.Editor        = (*Adapter)(nil)
	_ adapters.Typer         = (*Adapter)(nil)
	_ adapters.Healther      = (*Adapter)(nil)
	_ adapters.HomeChanneler = (*Adapter)(nil)
)

// New returns an Adapter; nothing connects until Run (or a Send).
func New(cfg Config) *Adapter {
	if cfg.APIEndpoint == "" {
		cfg.APIEndpoint = DefaultAPIEndpoint
	}
	if cfg.PollTimeout < time.Second {
		cfg.PollTimeout = DefaultPollTimeout
	}
	if cfg.ReconnectMin <= 0 {
		cfg.ReconnectMin = DefaultReconnectMin
	}
	if cfg.ReconnectMax < cfg.ReconnectMin {
		cfg.ReconnectMax = max(DefaultReconnectMax, cfg.ReconnectMin)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Redactor == nil {
		cfg.Redactor = herald.NewRedactor()
	}
	cfg.Redactor.Add(cfg.Token, cfg.WebhookSecret)
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	// A held poll must end on Telegram's side before the client gives up.
	if least := cfg.PollTimeout + 15*time.Second; hc.Timeout < least {
		c := *hc
		c.Timeout = least
		hc = &c
	}
	// Up- and downloads of tens of MB may take longer than a poll.
	tc := *hc
	tc.Timeout = max(hc.Timeout, transferTimeout)
	a := &Adapter{cfg: cfg, log: cfg.Log, red: cfg.Redactor, http: hc, transfer: &tc, state: "not started", edits: map[string]string{}}
	if cfg.Reactions {
		a.rx = adapters.NewReactions(a.react)
	}
	return a
}

// Platform implements adapters.Adapter.
func (a *Adapter) Platform() herald.Platform { return herald.PlatformTelegram }

// Limits implements adapters.Adapter: 4096 UTF-16 units.
func (a *Adapter) Limits() adapters.Limits {
	return adapters.Limits{MaxLength: MaxLength, Count: adapters.UTF16Len}
}

// HomeChannel implements adapters.HomeChanneler.
func (a *Adapter) HomeChannel() string { return a.cfg.HomeChannel }

// Health implements adapters.Healther.
func (a *Adapter) Health() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state
}

func (a *Adapter) setState(s string) {
	a.mu.Lock()
	a.state = s
	a.mu.Unlock()
}

// Self is the bot's id and @username as getMe reported them (zero before
// Run connected).
func (a *Adapter) Self() (id int64, username string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.self.ID, a.self.UserName
}

// Run implements adapters.Adapter.
func (a *Adapter) Run(ctx context.Context, sink adapters.Sink) error {
	a.setState("connecting")
	if a.cfg.Token == "" {
		err := &adapters.FatalError{Msg: "telegram: no bot token: set TELEGRAM_BOT_TOKEN"}
		a.setState("failed: " + err.Error())
		return err
	}
	me, err := a.getMe(ctx)
	if err != nil {
		if ctx.Err() != nil {
			a.setState("stopped")
			return nil
		}
		if adapters.IsFatal(err) {
			a.setState("failed: " + err.Error())
		} else {
			a.setState("reconnecting")
		}
		return err
	}
	a.mu.Lock()
	a.self = botIdentity{ID: me.ID, UserName: me.UserName}
	a.mu.Unlock()
	a.log.Info("telegram bot connected", "bot", "@"+me.UserName, "id", me.ID)
	a.publishMenu(ctx)
	if a.webhookMode() {
		err = a.runWebhook(ctx, sink)
	} else {
		err = a.runPoll(ctx, sink)
	}
	if err != nil && adapters.IsFatal(err) {
		a.setState("failed: " + err.Error())
	} else if ctx.Err() != nil {
		a.setState("stopped")
	}
	return err
}

func (a *Adapter) getMe(ctx context.Context) (tgbotapi.User, error) {
	resp, err := a.bot(ctx).MakeRequest("getMe", nil)
	if err != nil {
		return tgbotapi.User{}, a.classify("getMe", err)
	}
	var u tgbotapi.User
	if err := json.Unmarshal(resp.Result, &u); err != nil {
		return u, &adapters.TemporaryError{Err: fmt.Errorf("telegram: getMe: unreadable answer: %w", err)}
	}
	return u, nil
}

// runPoll long-polls getUpdates until ctx ends.
func (a *Adapter) runPoll(ctx context.Context, sink adapters.Sink) error {
	offset := 0
	if a.cfg.Store != nil {
		v, err := a.cfg.Store.Offset(ctx, string(herald.PlatformTelegram))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("telegram: load offset: %w", err)
		}
		if v != "" {
			if offset, err = strconv.Atoi(v); err != nil {
				a.log.Warn("telegram: stored offset is not a number; polling from Telegram's oldest pending update", "value", v)
				offset = 0
			}
		}
	}
	if err := a.dropWebhook(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	bo := a.newBackoff()
	for ctx.Err() == nil {
		raws, err := a.getUpdates(ctx, offset)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if adapters.IsFatal(err) {
				return err
			}
			wait := bo.next()
			var ra *adapters.RetryAfterError
			if errors.As(err, &ra) {
				wait = ra.After
			}
			a.setState("reconnecting")
			a.log.Warn("telegram: getUpdates failed; retrying", "err", a.red.Redact(err.Error()), "in", wait)
			if !sleep(ctx, wait) {
				return nil
			}
			continue
		}
		bo.reset()
		a.setState("connected")
		for _, raw := range raws {
			if ctx.Err() != nil {
				// not handed over: fetched again after a restart
				return nil
			}
			next, accepted := a.deliver(ctx, sink, raw, offset)
			if !accepted {
				wait := bo.next()
				a.log.Info("telegram: update not taken; polling it again", "in", wait)
				if !sleep(ctx, wait) {
					return nil
				}
				break
			}
			if next > offset {
				offset = next
				a.storeOffset(ctx, offset)
			}
		}
	}
	return nil
}

// deliver hands one raw update to the sink and returns the offset after it.
// accepted is false when the sink refused it (the update must be fetched
// again).
func (a *Adapter) deliver(ctx context.Context, sink adapters.Sink, raw json.RawMessage, offset int) (next int, accepted bool) {
	a.mu.Lock()
	self := a.self
	a.mu.Unlock()
	id, m, ok, err := translate(raw, self)
	if err != nil {
		// an update the library's types cannot read (a field Telegram
		// changed, say) can never be handled: skip it rather than fetch it
		// forever; without even an update_id there is nothing to skip to
		var probe struct {
			UpdateID int `json:"update_id"`
		}
		if json.Unmarshal(raw, &probe) != nil || probe.UpdateID == 0 {
			a.log.Error("telegram: an update without a readable update_id; pausing polling", "err", err)
			return offset, false
		}
		a.log.Warn("telegram: skipping an unreadable update", "update_id", probe.UpdateID, "err", err)
		return max(offset, probe.UpdateID+1), true
	}
	if id < offset {
		return offset, true // already handed over; the server sent it again
	}
	if from, to, moved := migration(raw); moved && !a.moveChat(ctx, sink, from, to) {
		return offset, false
	}
	if !ok {
		a.handlePress(ctx, sink, raw)
		return id + 1, true
	}
	if adapters.Refused(a.rx.Receive(ctx, sink, m, m.Source.ChatID)) {
		return offset, false
	}
	return id + 1, true
}

func (a *Adapter) storeOffset(ctx context.Context, offset int) {
	if a.cfg.Store == nil {
		return
	}
	// The update was handed over: its offset must be written even if Run
	// is being stopped right now.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := a.cfg.Store.SetOffset(sctx, string(herald.PlatformTelegram), strconv.Itoa(offset)); err != nil {
		a.log.Error("telegram: could not store the update offset; a restart may answer an update twice", "offset", offset, "err", err)
	}
}

// dropWebhook removes any webhook before polling: one left by webhook
// mode or another deployment makes Telegram answer every getUpdates with
// 409. Updates waiting for the webhook are kept and polled.
func (a *Adapter) dropWebhook(ctx context.Context) error {
	if _, err := a.bot(ctx).Request(tgbotapi.DeleteWebhookConfig{}); err != nil {
		return a.classify("deleteWebhook", err)
	}
	return nil
}

// getUpdates asks for updates from offset and returns them raw.
func (a *Adapter) getUpdates(ctx context.Context, offset int) ([]json.RawMessage, error) {
	resp, err := a.bot(ctx).Request(tgbotapi.UpdateConfig{Offset: offset, Timeout: int(a.cfg.PollTimeout / time.Second), AllowedUpdates: allowedUpdates})
	if err != nil {
		var te *tgbotapi.Error
		if errors.As(err, &te) && te.Code == http.StatusConflict {
			return nil, &adapters.TemporaryError{Err: fmt.Errorf("telegram: getUpdates: %s (another process polls with this token, or a webhook is set: stop the other process, or configure platforms.telegram.webhook_listen)", te.Message)}
		}
		return nil, a.classify("getUpdates", err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(resp.Result, &raws); err != nil {
		return nil, &adapters.TemporaryError{Err: fmt.Errorf("telegram: getUpdates: unreadable answer: %w", err)}
	}
	return raws, nil
}

// bot returns a library client whose requests carry ctx. The library has
// no context support, so each call gets a shallow client of its own.
func (a *Adapter) bot(ctx context.Context) *tgbotapi.BotAPI {
	return a.botWith(ctx, a.http)
}

// transferBot is bot for uploads, with the longer transfer timeout.
func (a *Adapter) transferBot(ctx context.Context) *tgbotapi.BotAPI {
	return a.botWith(ctx, a.transfer)
}

func (a *Adapter) botWith(ctx context.Context, c *http.Client) *tgbotapi.BotAPI {
	b := &tgbotapi.BotAPI{Token: a.cfg.Token, Client: ctxDoer{ctx: ctx, c: c}}
	b.SetAPIEndpoint(a.cfg.APIEndpoint)
	return b
}

// ctxDoer attaches one call's context to the library's requests.
type ctxDoer struct {
	ctx context.Context
	c   *http.Client
}

func (d ctxDoer) Do(r *http.Request) (*http.Response, error) { return d.c.Do(r.WithContext(d.ctx)) }

// backoff is capped exponential backoff with jitter.
type backoff struct {
	min, max, cur time.Duration
}

func (a *Adapter) newBackoff() *backoff {
	return &backoff{min: a.cfg.ReconnectMin, max: a.cfg.ReconnectMax, cur: a.cfg.ReconnectMin}
}

// next returns a wait in [cur/2, cur] and doubles cur up to max.
func (b *backoff) next() time.Duration {
	d := b.cur/2 + rand.N(b.cur/2+1)
	b.cur = min(b.cur*2, b.max)
	return d
}

func (b *backoff) reset() { b.cur = b.min }

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
