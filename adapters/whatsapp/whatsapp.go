package whatsapp

// whatsapp.go holds the Adapter, its configuration and Run: the webhook is
// put on the shared inbound listener and the access token is checked once
// against the phone number it is for.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Platform is the platform's name.
const Platform herald.Platform = "whatsapp"

// DefaultAPIBase is the Graph API version herald speaks.
const DefaultAPIBase = "https://graph.facebook.com/v21.0"

// WebhookPath is the webhook's path on the shared inbound listener.
const WebhookPath = "/whatsapp/webhook"

// MaxLength is the longest text body the Cloud API takes, in characters.
const MaxLength = 4096

// Window is WhatsApp's customer-service window: free-form messages may be
// sent to a user only this long after their last message.
const Window = 24 * time.Hour

// requestTimeout bounds one Graph API call; transferTimeout a media
// download or upload.
const (
	requestTimeout  = 30 * time.Second
	transferTimeout = 10 * time.Minute
)

// Store keeps each user's last inbound time across restarts;
// *sessions.Store implements it.
type Store = adapters.KV

// Config configures an Adapter.
type Config struct {
	// AccessToken is the Graph API token (WHATSAPP_ACCESS_TOKEN).
	AccessToken string
	// PhoneNumberID is the business phone number's id, not the number
	// itself (WHATSAPP_PHONE_NUMBER_ID).
	PhoneNumberID string
	// VerifyToken answers Meta's webhook verification
	// (WHATSAPP_VERIFY_TOKEN).
	VerifyToken string
	// AppSecret signs webhook payloads (WHATSAPP_APP_SECRET).
	AppSecret string
	// APIBase is the Graph API with its version; "" means DefaultAPIBase.
	APIBase string
	// HomeChannel is the wa_id a bare "whatsapp" target delivers to.
	HomeChannel string
	// Store keeps the customer-service windows; nil keeps them in memory.
	Store Store
	// HTTPClient makes the requests; nil gets a fresh client.
	HTTPClient *http.Client
	// Now is the clock (time.Now when nil).
	Now      func() time.Time
	Log      *slog.Logger
	Redactor *herald.Redactor
}

// Adapter is the WhatsApp platform.
type Adapter struct {
	cfg      Config
	log      *slog.Logger
	red      *herald.Redactor
	http     *http.Client
	transfer *http.Client
	windows  *windows

	mu    sync.Mutex
	state string
	// inbound is the webhook on the shared inbound listener.
	inbound adapters.Mount
	// last is each user's last message, for the typing indicator
	// (typing.go).
	last map[string]lastMessage
}

var (
	_ adapters.Adapter       = (*Adapter)(nil)
	_ adapters.Healther      = (*Adapter)(nil)
	_ adapters.HomeChanneler = (*Adapter)(nil)
	_ adapters.Pacer         = (*Adapter)(nil)
	_ adapters.InboundRouter = (*Adapter)(nil)
)

// New returns an Adapter; nothing is served until Run.
func New(cfg Config) *Adapter {
	cfg.APIBase = strings.TrimRight(cfg.APIBase, "/")
	if cfg.APIBase == "" {
		cfg.APIBase = DefaultAPIBase
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Redactor == nil {
		cfg.Redactor = herald.NewRedactor()
	}
	cfg.Redactor.Add(cfg.AccessToken, cfg.AppSecret, cfg.VerifyToken)
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: requestTimeout}
	}
	tc := *hc
	tc.Timeout = max(hc.Timeout, transferTimeout)
	return &Adapter{
		cfg: cfg, log: cfg.Log, red: cfg.Redactor, http: hc, transfer: &tc, state: "not started",
		windows: newWindows(cfg.Store, cfg.Now, cfg.Log),
	}
}

// Platform implements adapters.Adapter.
func (a *Adapter) Platform() herald.Platform { return Platform }

// Limits implements adapters.Adapter: 4096 characters.
func (a *Adapter) Limits() adapters.Limits { return adapters.Limits{MaxLength: MaxLength} }

// HomeChannel implements adapters.HomeChanneler.
func (a *Adapter) HomeChannel() string { return a.cfg.HomeChannel }

// Pace implements adapters.Pacer. Meta documents a default throughput of
// 80 messages a second per business phone number; to one user herald
// keeps a second between messages, so a reply in several parts arrives
// in order without tripping the per-user ("pair") limit, error 131056.
func (a *Adapter) Pace(herald.Target) adapters.Pace {
	return adapters.Pace{Every: time.Second, BotPerSecond: 80}
}

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

// InboundRoutes implements adapters.InboundRouter.
func (a *Adapter) InboundRoutes() map[string]http.Handler {
	return map[string]http.Handler{WebhookPath: &a.inbound}
}

// Run implements adapters.Adapter: it serves the webhook until ctx ends.
func (a *Adapter) Run(ctx context.Context, sink adapters.Sink) error {
	a.setState("connecting")
	if err := a.checkConfig(); err != nil {
		a.setState("failed: " + err.Error())
		return err
	}
	if err := a.checkToken(ctx); err != nil {
		if adapters.IsFatal(err) {
			a.setState("failed: " + err.Error())
			return err
		}
		// the Graph API may be back by the first send; the webhook works
		// without it
		a.log.Warn("whatsapp: the access token could not be checked", "err", a.red.Redact(err.Error()))
	}
	a.windows.prune(ctx)
	// the webhook is up before the platform says it is connected
	defer a.inbound.Put(a.webhookHandler(ctx, sink))()
	a.setState("connected")
	a.log.Info("whatsapp webhook served on the inbound listener", "path", WebhookPath)
	<-ctx.Done()
	return nil
}

// checkConfig names the first missing setting.
func (a *Adapter) checkConfig() error {
	for _, s := range []struct{ v, env, key string }{
		{a.cfg.AccessToken, "WHATSAPP_ACCESS_TOKEN", "access_token"},
		{a.cfg.PhoneNumberID, "WHATSAPP_PHONE_NUMBER_ID", "phone_number_id"},
		{a.cfg.AppSecret, "WHATSAPP_APP_SECRET", "app_secret"},
		{a.cfg.VerifyToken, "WHATSAPP_VERIFY_TOKEN", "verify_token"},
	} {
		if strings.TrimSpace(s.v) == "" {
			return &adapters.FatalError{Msg: fmt.Sprintf("whatsapp: no %s: set %s or platforms.whatsapp.%s", s.key, s.env, s.key)}
		}
	}
	return nil
}

// checkToken reads the phone number the token is for.
func (a *Adapter) checkToken(ctx context.Context) error {
	var out struct {
		ID string `json:"id"`
	}
	err := a.graph(ctx, a.http, http.MethodGet, "/"+url.PathEscape(a.cfg.PhoneNumberID), nil, "", &out)
	if err != nil {
		return err
	}
	if out.ID == "" {
		return errors.New("whatsapp: the Graph API answered for no phone number")
	}
	return nil
}
