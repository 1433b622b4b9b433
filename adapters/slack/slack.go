package slack

// slack.go is the adapter: its configuration, Run in both modes, and the
// health state.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// MaxLength is the longest message herald sends to Slack. Slack accepts
// up to 40,000 characters but recommends 4,000 per message for reading.
const MaxLength = 4000

// Modes.
const (
	ModeSocket = "socket"
	ModeEvents = "events"
)

// DefaultAPIURL is Slack's Web API base.
const DefaultAPIURL = "https://slack.com/api/"

// Config configures the adapter.
type Config struct {
	// BotToken (xoxb-…, SLACK_BOT_TOKEN) is used for every Web API call.
	BotToken string
	// AppToken (xapp-…, SLACK_APP_TOKEN) opens Socket Mode connections.
	AppToken string
	// SigningSecret (SLACK_SIGNING_SECRET) verifies Events API requests.
	SigningSecret string
	// APIURL is the Web API base, with a trailing slash (default
	// DefaultAPIURL); point it at a fake or a proxy.
	APIURL string
	// Mode is ModeSocket (default) or ModeEvents.
	Mode string
	// EventsListen, when set, is the address of a listener of the Events
	// API receiver's own (mode events), which accepts POSTs on any path.
	// When empty the receiver is served at EventsPath on the shared
	// inbound listener (events.go).
	EventsListen string
	// OnListen, if set, is told the receiver's address once it listens.
	OnListen func(addr string)
	// HomeChannel is the channel a bare "slack" target delivers to.
	HomeChannel string
	// HTTPClient is used for the Web API (default: 30 s timeout).
	HTTPClient *http.Client
	// FilesURL is Slack's file host, the only place besides APIURL's host
	// that Fetch sends the bot token to (default DefaultFilesURL; GovSlack
	// serves files from https://files.slack-gov.com/).
	FilesURL string
	// FetchTimeout bounds one Fetch, reading included (default
	// DefaultFetchTimeout); FetchLimit is the most bytes it reads
	// (default MaxFileSize).
	FetchTimeout time.Duration
	FetchLimit   int64
	// PingInterval is how long Socket Mode waits for a server ping before
	// it reconnects (slack-go's default, 30 s, when zero).
	PingInterval time.Duration
	// Threads keeps the threads the bot takes part in across restarts
	// (the gateway's state.db); nil keeps them in memory only.
	Threads ThreadStore
	// ThreadTTL is how long after the bot's last post in a thread a reply
	// there still counts as addressed to it (default DefaultThreadTTL);
	// MaxThreads bounds how many threads are remembered (default
	// DefaultMaxThreads).
	ThreadTTL  time.Duration
	MaxThreads int
	// Reactions shows processing reactions on the messages herald
	// answers: :eyes: while it works, then :white_check_mark: or :x:
	// (platforms.slack.reactions).
	Reactions bool
	// SlashReplies is where the replies to a slash command go:
	// SlashChannel (default) posts them in the channel it was typed in,
	// SlashEphemeral shows them only to the user who typed it
	// (platforms.slack.slash_replies).
	SlashReplies string
	Log          *slog.Logger
	Redactor     *herald.Redactor
}

// Adapter is the Slack platform.
type Adapter struct {
	cfg Config
	log *slog.Logger
	api *slackapi.Client
	// fetcher downloads files (Fetch); it follows redirects only on hosts
	// that may get the token
	fetcher *http.Client

	mu      sync.Mutex
	health  string
	botUser string      // the bot's user id, from auth.test
	threads *threadSet  // threads the bot took part in
	seen    *boundedSet // threads whose earlier messages this process knows
	fb      feedback
	rx      *adapters.Reactions // follows the messages in work for fb
	replies sync.WaitGroup      // answers to button presses being posted
	edits   map[string]string   // channel/ts → last text, for skipping identical edits
	editQ   []string
	// commands are the names of the gateway's commands (SetCommands);
	// nil until it gives them
	commands map[string]bool
	// inbound is the Events API receiver on the shared inbound listener.
	inbound adapters.Mount
}

var (
	_ adapters.Adapter       = (*Adapter)(nil)
	_ adapters.Editor        = (*Adapter)(nil)
	_ adapters.Healther      = (*Adapter)(nil)
	_ adapters.HomeChanneler = (*Adapter)(nil)
	_ adapters.Fetcher       = (*Adapter)(nil)
	_ adapters.FileSender    = (*Adapter)(nil)
	_ adapters.Typer         = (*Adapter)(nil)
)

// New builds the adapter; nothing connects until Run.
func New(cfg Config) *Adapter {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Redactor == nil {
		cfg.Redactor = herald.NewRedactor()
	}
	cfg.Redactor.Add(cfg.BotToken, cfg.AppToken, cfg.SigningSecret)
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		// slack-go appends method names directly to the base
		cfg.APIURL += "/"
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeSocket
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.FilesURL == "" {
		cfg.FilesURL = DefaultFilesURL
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = DefaultFetchTimeout
	}
	if cfg.FetchLimit <= 0 {
		cfg.FetchLimit = MaxFileSize
	}
	if cfg.SlashReplies == "" {
		cfg.SlashReplies = SlashChannel
	}
	if cfg.ThreadTTL <= 0 {
		cfg.ThreadTTL = DefaultThreadTTL
	}
	if cfg.MaxThreads <= 0 {
		cfg.MaxThreads = DefaultMaxThreads
	}
	a := &Adapter{cfg: cfg, log: cfg.Log, health: "starting", edits: map[string]string{}}
	a.threads = newThreadSet(cfg.Threads, cfg.ThreadTTL, cfg.MaxThreads, cfg.Log)
	a.seen = newBoundedSet(cfg.MaxThreads)
	a.fb.shown = map[string]*shown{}
	a.rx = adapters.NewFeedback(a.show, statusRenewAfter)
	opts := []slackapi.Option{
		slackapi.OptionAPIURL(cfg.APIURL),
		slackapi.OptionHTTPClient(cfg.HTTPClient),
		slackapi.OptionLog(libLogger{a}),
	}
	if cfg.AppToken != "" {
		opts = append(opts, slackapi.OptionAppLevelToken(cfg.AppToken))
	}
	a.api = slackapi.New(cfg.BotToken, opts...)
	a.fetcher = a.newFetchClient()
	return a
}

// Platform implements adapters.Adapter.
func (a *Adapter) Platform() herald.Platform { return herald.PlatformSlack }

// Limits implements adapters.Adapter: 4,000 characters.
func (a *Adapter) Limits() adapters.Limits { return adapters.Limits{MaxLength: MaxLength} }

// HomeChannel implements adapters.HomeChanneler.
func (a *Adapter) HomeChannel() string { return a.cfg.HomeChannel }

// Health implements adapters.Healther.
func (a *Adapter) Health() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.health
}

func (a *Adapter) setHealth(s string) {
	a.mu.Lock()
	a.health = s
	a.mu.Unlock()
}

func (a *Adapter) botUserID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.botUser
}

// fail records why Run is returning: "failed: …" when the gateway will
// not restart the adapter, "reconnecting: …" when it will.
func (a *Adapter) fail(err error) error {
	state := "reconnecting: "
	if adapters.IsFatal(err) {
		state = "failed: "
	}
	a.setHealth(state + a.cfg.Redactor.Redact(err.Error()))
	return err
}

// Run implements adapters.Adapter. It checks the bot token with auth.test
// (learning the bot's user id), then serves Socket Mode or the Events API
// until ctx ends.
func (a *Adapter) Run(ctx context.Context, sink adapters.Sink) error {
	// the feedback of messages in work is taken down before Run returns
	defer a.rx.Wait()
	defer a.replies.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if a.cfg.BotToken == "" {
		return a.fail(&adapters.FatalError{Msg: "slack: no bot token: set SLACK_BOT_TOKEN (or platforms.slack.bot_token)"})
	}
	switch a.cfg.Mode {
	case ModeSocket:
		if a.cfg.AppToken == "" {
			return a.fail(&adapters.FatalError{Msg: "slack: Socket Mode needs an app-level token: set SLACK_APP_TOKEN (or platforms.slack.app_token), or use mode: events"})
		}
	case ModeEvents:
		if a.cfg.SigningSecret == "" {
			return a.fail(&adapters.FatalError{Msg: "slack: the Events API needs the signing secret: set SLACK_SIGNING_SECRET (or platforms.slack.signing_secret)"})
		}
	default:
		return a.fail(&adapters.FatalError{Msg: fmt.Sprintf("slack: platforms.slack.mode %q is not socket or events", a.cfg.Mode)})
	}
	if a.cfg.SlashReplies != SlashChannel && a.cfg.SlashReplies != SlashEphemeral {
		return a.fail(&adapters.FatalError{Msg: fmt.Sprintf("slack: platforms.slack.slash_replies %q is not channel or ephemeral", a.cfg.SlashReplies)})
	}
	a.setHealth("connecting")
	auth, err := a.api.AuthTestContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return a.fail(mapError("auth.test", err, "SLACK_BOT_TOKEN"))
	}
	a.mu.Lock()
	a.botUser = auth.UserID
	a.mu.Unlock()
	a.log.Info("slack bot authenticated", "user_id", auth.UserID, "team_id", auth.TeamID, "mode", a.cfg.Mode)
	if err := a.threads.load(ctx); err != nil {
		// follow-ups in older threads then need a mention again; the
		// adapter itself works
		a.log.Warn("could not read the slack threads herald took part in", "err", err)
	}

	if a.cfg.Mode == ModeEvents {
		return a.runEvents(ctx, sink)
	}
	return a.runSocket(ctx, sink)
}

// runSocket runs slack-go's Socket Mode client. Its Events channel is
// drained by one goroutine that acks each envelope before handing the
// event on; Run waits for it.
func (a *Adapter) runSocket(ctx context.Context, sink adapters.Sink) error {
	var opts []socketmode.Option
	if a.cfg.PingInterval > 0 {
		opts = append(opts, socketmode.OptionPingInterval(a.cfg.PingInterval))
	}
	opts = append(opts, socketmode.OptionLog(libLogger{a}))
	sm := socketmode.New(a.api, opts...)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case ev := <-sm.Events:
				a.safeSocketEvent(runCtx, sm, sink, ev)
			case <-done:
				return
			case <-runCtx.Done():
				return
			}
		}
	}()
	err := sm.RunContext(runCtx)
	// RunContext sends its events synchronously, so none can follow it
	close(done)
	wg.Wait()
	if ctx.Err() != nil {
		a.setHealth("stopped")
		return nil
	}
	if err == nil {
		err = errors.New("socket mode stopped")
	}
	return a.fail(mapError("socket mode", err, "SLACK_APP_TOKEN"))
}

// safeSocketEvent is the recover boundary of the drain goroutine: a bad
// event is logged and dropped, and the connection goes on.
func (a *Adapter) safeSocketEvent(ctx context.Context, sm *socketmode.Client, sink adapters.Sink, ev socketmode.Event) {
	defer func() {
		if x := recover(); x != nil {
			a.log.Error("slack event handling panicked; event dropped", "type", ev.Type, "panic", fmt.Sprint(x), "stack", string(debug.Stack()))
		}
	}()
	a.socketEvent(ctx, sm, sink, ev)
}

// ackTimeout bounds writing an ack; Slack's window is 3 s.
const ackTimeout = 2 * time.Second

func (a *Adapter) socketEvent(ctx context.Context, sm *socketmode.Client, sink adapters.Sink, ev socketmode.Event) {
	switch ev.Type {
	case socketmode.EventTypeConnecting:
		if a.Health() == "connected" {
			a.setHealth("reconnecting")
		}
	case socketmode.EventTypeConnected:
		a.setHealth("connected")
		a.log.Info("slack socket mode connected")
	case socketmode.EventTypeConnectionError:
		var detail string
		if ce, ok := ev.Data.(*slackapi.ConnectionErrorEvent); ok && ce.ErrorObj != nil {
			detail = a.cfg.Redactor.Redact(ce.ErrorObj.Error())
		}
		a.setHealth("reconnecting")
		a.log.Warn("slack socket mode connection failed; retrying", "err", detail)
	case socketmode.EventTypeErrorBadMessage:
		// an envelope slack-go could not parse still needs its ack, or
		// Slack re-sends it forever
		if bm, ok := ev.Data.(*socketmode.ErrorBadMessage); ok {
			var env struct {
				EnvelopeID string `json:"envelope_id"`
			}
			if json.Unmarshal(bm.Message, &env) == nil && env.EnvelopeID != "" {
				a.ack(ctx, sm, env.EnvelopeID)
			}
			a.log.Warn("slack sent an event herald could not read; acknowledged and dropped", "err", bm.Cause)
		}
	case socketmode.EventTypeInteractive:
		// a press is not stored by the gateway nor sent again by Slack:
		// acked at once, so the 3 s window never waits for the sink
		if ev.Request != nil && ev.Request.EnvelopeID != "" {
			a.ack(ctx, sm, ev.Request.EnvelopeID)
		}
		if ic, ok := ev.Data.(slackapi.InteractionCallback); ok {
			a.handleInteraction(ctx, sink, ic)
		}
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeSlashCommand:
		// the event is handed on first and acked once the gateway took
		// (stored) it: an envelope the gateway refused is not acked, so
		// Slack re-sends it
		taken := true
		if api, ok := ev.Data.(slackevents.EventsAPIEvent); ok && ev.Type == socketmode.EventTypeEventsAPI {
			if ev.Request != nil && ev.Request.RetryAttempt > 0 {
				a.log.Debug("slack re-delivered an envelope", "envelope_id", ev.Request.EnvelopeID, "retry_attempt", ev.Request.RetryAttempt, "reason", ev.Request.RetryReason)
			}
			taken = a.handle(ctx, sink, api)
		}
		if c, ok := ev.Data.(slackapi.SlashCommand); ok && ev.Type == socketmode.EventTypeSlashCommand {
			taken = a.handleSlash(ctx, sink, c)
		}
		if taken && ev.Request != nil && ev.Request.EnvelopeID != "" {
			a.ack(ctx, sm, ev.Request.EnvelopeID)
		}
	}
}

func (a *Adapter) ack(ctx context.Context, sm *socketmode.Client, envelopeID string) {
	actx, cancel := context.WithTimeout(ctx, ackTimeout)
	defer cancel()
	if err := sm.AckCtx(actx, envelopeID, nil); err != nil {
		a.log.Warn("slack ack failed", "envelope_id", envelopeID, "err", err)
	}
}

// handle turns one Events API callback into a message for the sink. It
// reports false when the sink refused the message (it could not store it,
// or it is shutting down): the event must not be acknowledged.
func (a *Adapter) handle(ctx context.Context, sink adapters.Sink, ev slackevents.EventsAPIEvent) bool {
	if ev.Type != slackevents.CallbackEvent {
		return true
	}
	m, ok := a.translate(ctx, ev.InnerEvent.Data)
	if !ok {
		return true
	}
	a.withThreadContext(ctx, &m)
	return !adapters.Refused(a.rx.Receive(ctx, sink, m, m.Source.ChatID))
}

// libLogger sends slack-go's log lines to slog at debug level, redacted.
type libLogger struct{ a *Adapter }

func (l libLogger) Output(_ int, s string) error {
	l.a.log.Debug("slack-go: " + l.a.cfg.Redactor.Redact(strings.TrimSpace(s)))
	return nil
}
