package teams

import (
	"context"
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
const Platform herald.Platform = "teams"

// InboundPath is the activity endpoint on the shared inbound listener.
const InboundPath = "/api/messages"

// MaxLength is the longest text herald puts in one message (Hermes'
// limit; Teams refuses activities over about 28 KB).
const MaxLength = 4000

// Microsoft's documented endpoints.
const (
	DefaultOpenIDMetadataURL = "https://login.botframework.com/v1/.well-known/openidconfiguration"
	// DefaultTokenURL is the multi-tenant token endpoint; a bot with
	// MICROSOFT_APP_TENANT_ID gets its tenant's (TenantTokenURL).
	DefaultTokenURL = "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token"
)

// TenantTokenURL is the token endpoint of a single-tenant bot.
func TenantTokenURL(tenant string) string {
	return "https://login.microsoftonline.com/" + url.PathEscape(tenant) + "/oauth2/v2.0/token"
}

// KVStore keeps the conversations' serviceUrls across restarts;
// *sessions.Store implements it.
type KVStore = adapters.KV

// Config configures the adapter.
type Config struct {
	// AppID, AppPassword and TenantID are the bot's Microsoft app
	// registration (MICROSOFT_APP_ID, MICROSOFT_APP_PASSWORD,
	// MICROSOFT_APP_TENANT_ID).
	AppID, AppPassword, TenantID string
	// OpenIDMetadataURL is where the inbound signing keys are found
	// (default DefaultOpenIDMetadataURL).
	OpenIDMetadataURL string
	// TokenURL is the client-credentials endpoint (default
	// TenantTokenURL(TenantID), or DefaultTokenURL without a tenant).
	TokenURL string
	// HomeChannel is the conversation id of a bare "teams" target.
	HomeChannel string
	// Store keeps the serviceUrl of each conversation; nil keeps them in
	// memory only.
	Store KVStore
	// HTTPClient makes every outbound request (default: 30 s timeout).
	HTTPClient *http.Client
	// Now is the clock tokens are checked against (default time.Now).
	Now func() time.Time
	Log *slog.Logger
	// Redactor is given the app password.
	Redactor *herald.Redactor
}

// Adapter is the Teams platform.
type Adapter struct {
	cfg    Config
	log    *slog.Logger
	client *http.Client
	verify *verifier
	tokens *tokenSource
	convs  *conversations

	inbound adapters.Mount
	// pending are the answers to button presses being sent; Run waits
	// for them.
	pending sync.WaitGroup

	mu     sync.Mutex
	health string
}

// Interface guards.
var (
	_ adapters.Adapter       = (*Adapter)(nil)
	_ adapters.Editor        = (*Adapter)(nil)
	_ adapters.Deleter       = (*Adapter)(nil)
	_ adapters.Typer         = (*Adapter)(nil)
	_ adapters.ButtonSender  = (*Adapter)(nil)
	_ adapters.HomeChanneler = (*Adapter)(nil)
	_ adapters.Healther      = (*Adapter)(nil)
	_ adapters.InboundRouter = (*Adapter)(nil)
)

// New returns an adapter; Run checks the credentials.
func New(cfg Config) *Adapter {
	if cfg.OpenIDMetadataURL == "" {
		cfg.OpenIDMetadataURL = DefaultOpenIDMetadataURL
	}
	if cfg.TokenURL == "" {
		cfg.TokenURL = DefaultTokenURL
		if cfg.TenantID != "" {
			cfg.TokenURL = TenantTokenURL(cfg.TenantID)
		}
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Redactor != nil && cfg.AppPassword != "" {
		cfg.Redactor.Add(cfg.AppPassword)
	}
	return &Adapter{
		cfg: cfg, log: cfg.Log, client: cfg.HTTPClient, health: "starting",
		verify: &verifier{appID: cfg.AppID, metadataURL: cfg.OpenIDMetadataURL, client: cfg.HTTPClient, now: cfg.Now},
		tokens: &tokenSource{url: cfg.TokenURL, appID: cfg.AppID, password: cfg.AppPassword, client: cfg.HTTPClient, now: cfg.Now},
		convs:  &conversations{store: cfg.Store, urls: map[string]string{}},
	}
}

// Platform implements adapters.Adapter.
func (a *Adapter) Platform() herald.Platform { return Platform }

// Limits implements adapters.Adapter.
func (a *Adapter) Limits() adapters.Limits { return adapters.Limits{MaxLength: MaxLength} }

// HomeChannel implements adapters.HomeChanneler.
func (a *Adapter) HomeChannel() string { return a.cfg.HomeChannel }

// InboundRoutes implements adapters.InboundRouter.
func (a *Adapter) InboundRoutes() map[string]http.Handler {
	return map[string]http.Handler{InboundPath: &a.inbound}
}

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

// Run serves the activity endpoint on the inbound listener until ctx
// ends.
func (a *Adapter) Run(ctx context.Context, sink adapters.Sink) error {
	if a.cfg.AppID == "" || a.cfg.AppPassword == "" {
		a.setHealth("failed: no app id or password")
		return &adapters.FatalError{Msg: "teams: set MICROSOFT_APP_ID and MICROSOFT_APP_PASSWORD (or platforms.teams.app_id and app_password)"}
	}
	// the endpoint is up before the platform says it is connected
	remove := a.inbound.Put(a.Handler(ctx, sink))
	a.setHealth("connected")
	a.log.Info("teams activities served on the inbound listener", "path", InboundPath)
	<-ctx.Done()
	remove()
	a.pending.Wait()
	a.setHealth("stopped")
	return nil
}

// maxConversations bounds the serviceUrls kept in memory.
const maxConversations = 10000

// conversations remembers the serviceUrl of each conversation, as it
// arrived in validated activities: the only URLs the bot token is sent
// to.
type conversations struct {
	store KVStore

	mu    sync.Mutex
	urls  map[string]string
	order []string
}

func kvKey(chat string) string { return "teams.service_url." + chat }

// remember records chat's serviceUrl.
func (c *conversations) remember(ctx context.Context, chat, serviceURL string) {
	c.mu.Lock()
	old, known := c.urls[chat]
	if !known {
		c.order = append(c.order, chat)
		if len(c.order) > maxConversations {
			delete(c.urls, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.urls[chat] = serviceURL
	c.mu.Unlock()
	if old != serviceURL && c.store != nil {
		c.store.SetKV(ctx, kvKey(chat), serviceURL)
	}
}

// serviceURL returns chat's serviceUrl, or "" when no validated activity
// named one.
func (c *conversations) serviceURL(ctx context.Context, chat string) string {
	c.mu.Lock()
	u := c.urls[chat]
	c.mu.Unlock()
	if u == "" && c.store != nil {
		if v, ok, err := c.store.KV(ctx, kvKey(chat)); err == nil && ok {
			u = v
		}
	}
	return u
}

// trustedServiceURL reports whether u may be called with the bot token
// once a validated activity named it: https, or http to a loopback host
// (a local test connector).
func trustedServiceURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.User != nil || p.RawQuery != "" || p.Fragment != "" {
		return false
	}
	switch p.Scheme {
	case "https":
		return true
	case "http":
		h := p.Hostname()
		return h == "localhost" || h == "127.0.0.1" || h == "::1"
	}
	return false
}

// sameServiceURL compares two serviceUrls as the Bot Framework writes
// them (with or without a trailing slash).
func sameServiceURL(a, b string) bool {
	return strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}
