package matrix

// matrix.go holds the Adapter, its configuration, and Run: log in (or
// check the access token), then /sync from the stored since token until
// the context ends.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Platform is the platform's name.
const Platform herald.Platform = "matrix"

// MaxLength is the longest message body herald sends, in bytes. A Matrix
// event may hold 65,536 bytes of JSON, and a message carries its text
// twice (body and its HTML form); a formatted body that would not fit is
// left out (format.go).
const MaxLength = 16000

// DefaultSyncTimeout is how long one /sync waits for news.
const DefaultSyncTimeout = 30 * time.Second

// requestTimeout bounds one call other than /sync.
const requestTimeout = 30 * time.Second

// Store keeps the since token (and the device id of a password login)
// across restarts; *sessions.Store implements it.
type Store = adapters.KV

// Config configures an Adapter.
type Config struct {
	// Homeserver is the client-server API's base URL (MATRIX_HOMESERVER).
	Homeserver string
	// AccessToken logs in as its user (MATRIX_ACCESS_TOKEN); without it,
	// UserID and Password log in (MATRIX_USER_ID, MATRIX_PASSWORD).
	AccessToken string
	UserID      string
	Password    string
	// DeviceID is the device a password login reuses (MATRIX_DEVICE_ID);
	// "" reuses the one the first login got, kept in the store.
	DeviceID string
	// HomeChannel is the room a bare "matrix" target delivers to.
	HomeChannel string
	// AllowedUsers may invite the bot into rooms: it joins when one of
	// them invites it ("*" lets anyone). Others' invites are left alone.
	AllowedUsers []string
	// Paired reports whether a user was let in by pairing; their invites
	// are joined too. nil: none are.
	Paired func(ctx context.Context, userID string) bool
	// Store keeps the since token; nil keeps it in memory (a restart then
	// skips what came while it was down).
	Store Store
	// HTTPClient makes the requests; nil gets a fresh client.
	HTTPClient *http.Client
	// SyncTimeout is the long poll of one /sync (DefaultSyncTimeout).
	SyncTimeout time.Duration
	Log         *slog.Logger
	Redactor    *herald.Redactor
}

// Adapter is the Matrix platform.
type Adapter struct {
	cfg Config
	log *slog.Logger
	red *herald.Redactor

	mu    sync.Mutex
	state string
	cli   *mautrix.Client
	self  string
	name  string
	rooms map[string]*roomInfo
	// typing is when the indicator was last shown in each room.
	typing map[string]time.Time
	mem    map[string]string // the store when none is configured
	// sent are the ids of the bot's recent messages, oldest first: a
	// reply to one of them in a room addresses the bot
	sent []string
}

// recentSent is how many of its own message ids the adapter remembers.
const recentSent = 256

// roomInfo is what herald knows of a joined room.
type roomInfo struct {
	members   map[string]string // user id → display name
	encrypted bool
}

var (
	_ adapters.Adapter       = (*Adapter)(nil)
	_ adapters.Editor        = (*Adapter)(nil)
	_ adapters.Deleter       = (*Adapter)(nil)
	_ adapters.Typer         = (*Adapter)(nil)
	_ adapters.Healther      = (*Adapter)(nil)
	_ adapters.HomeChanneler = (*Adapter)(nil)
	_ adapters.Pacer         = (*Adapter)(nil)
)

// New returns an Adapter; nothing connects until Run.
func New(cfg Config) *Adapter {
	if cfg.SyncTimeout <= 0 {
		cfg.SyncTimeout = DefaultSyncTimeout
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Redactor == nil {
		cfg.Redactor = herald.NewRedactor()
	}
	cfg.Redactor.Add(cfg.AccessToken, cfg.Password)
	return &Adapter{cfg: cfg, log: cfg.Log, red: cfg.Redactor, state: "not started",
		rooms: map[string]*roomInfo{}, typing: map[string]time.Time{}, mem: map[string]string{}}
}

// Platform implements adapters.Adapter.
func (a *Adapter) Platform() herald.Platform { return Platform }

// Limits implements adapters.Adapter: MaxLength bytes.
func (a *Adapter) Limits() adapters.Limits {
	return adapters.Limits{MaxLength: MaxLength, Count: func(s string) int { return len(s) }}
}

// HomeChannel implements adapters.HomeChanneler.
func (a *Adapter) HomeChannel() string { return a.cfg.HomeChannel }

// Pace implements adapters.Pacer. Synapse limits each user's messages
// (rc_message: by default 0.2 a second after a burst of 10; bots are
// often exempted); a second between messages to one room keeps a reply
// in parts in order, and a 429 is retried after its retry_after_ms.
func (a *Adapter) Pace(herald.Target) adapters.Pace {
	return adapters.Pace{Every: time.Second}
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

// client is the connected client (nil before Run has logged in).
func (a *Adapter) client() *mautrix.Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cli
}

// Run implements adapters.Adapter.
func (a *Adapter) Run(ctx context.Context, sink adapters.Sink) error {
	a.setState("connecting")
	if err := a.checkConfig(); err != nil {
		a.setState("failed: " + err.Error())
		return err
	}
	for attempt := 0; ; attempt++ {
		err := a.connect(ctx)
		if err == nil {
			break
		}
		if adapters.IsFatal(err) || ctx.Err() != nil {
			if ctx.Err() != nil {
				return nil
			}
			a.setState("failed: " + err.Error())
			return err
		}
		a.setState("reconnecting")
		a.log.Warn("matrix: cannot reach the homeserver; retrying", "err", a.red.Redact(err.Error()))
		if !sleep(ctx, backoff(attempt, err)) {
			return nil
		}
	}
	a.log.Info("matrix logged in", "user_id", a.self)
	return a.syncLoop(ctx, sink)
}

// checkConfig names the first missing setting.
func (a *Adapter) checkConfig() error {
	c := a.cfg
	if strings.TrimSpace(c.Homeserver) == "" {
		return &adapters.FatalError{Msg: "matrix: no homeserver: set MATRIX_HOMESERVER or platforms.matrix.homeserver"}
	}
	if !strings.HasPrefix(c.Homeserver, "https://") && !strings.HasPrefix(c.Homeserver, "http://") {
		return &adapters.FatalError{Msg: fmt.Sprintf("matrix: homeserver %q is not an http(s) URL (e.g. https://matrix.example.org)", c.Homeserver)}
	}
	if c.AccessToken == "" && (c.UserID == "" || c.Password == "") {
		return &adapters.FatalError{Msg: "matrix: no credentials: set MATRIX_ACCESS_TOKEN, or MATRIX_USER_ID and MATRIX_PASSWORD (platforms.matrix.access_token, user_id, password)"}
	}
	return nil
}

// connect logs in when there is no access token, and checks the token
// with whoami.
func (a *Adapter) connect(ctx context.Context) error {
	cli, err := mautrix.NewClient(a.cfg.Homeserver, id.UserID(a.cfg.UserID), a.cfg.AccessToken)
	if err != nil {
		return &adapters.FatalError{Msg: fmt.Sprintf("matrix: homeserver %q is not a URL", a.cfg.Homeserver), Err: err}
	}
	// retries are the gateway's (and the sync loop's): none inside
	cli.DefaultHTTPRetries = 0
	cli.IgnoreRateLimit = true
	cli.Client = a.cfg.HTTPClient
	if cli.Client == nil {
		cli.Client = &http.Client{}
	}
	if a.cfg.AccessToken == "" {
		if err := a.login(ctx, cli); err != nil {
			return err
		}
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	who, err := cli.Whoami(rctx)
	if err != nil {
		return a.classify("whoami", err)
	}
	cli.UserID = who.UserID
	name := ""
	if dn, err := cli.GetOwnDisplayName(rctx); err == nil {
		name = dn.DisplayName
	}
	a.mu.Lock()
	a.cli, a.self, a.name = cli, string(who.UserID), name
	a.mu.Unlock()
	return nil
}

// login logs in with the password, reusing the configured or stored
// device so that restarts do not pile up devices on the account. The
// access token it gets lives only in memory.
func (a *Adapter) login(ctx context.Context, cli *mautrix.Client) error {
	key := "matrix:device:" + a.cfg.UserID
	device := a.cfg.DeviceID
	if device == "" {
		device, _ = a.kv(ctx, key)
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	resp, err := cli.Login(rctx, &mautrix.ReqLogin{
		Type:                     mautrix.AuthTypePassword,
		Identifier:               mautrix.UserIdentifier{Type: mautrix.IdentifierTypeUser, User: a.cfg.UserID},
		Password:                 a.cfg.Password,
		DeviceID:                 id.DeviceID(device),
		InitialDeviceDisplayName: "herald",
		StoreCredentials:         true,
	})
	if err != nil {
		var he mautrix.HTTPError
		if errors.As(err, &he) && (he.IsStatus(http.StatusForbidden) || he.IsStatus(http.StatusUnauthorized)) {
			return &adapters.FatalError{Msg: "matrix: the homeserver refused the login: check MATRIX_USER_ID and MATRIX_PASSWORD", Err: errors.New(a.red.Redact(err.Error()))}
		}
		return a.classify("login", err)
	}
	a.red.Add(resp.AccessToken)
	if resp.DeviceID != "" && string(resp.DeviceID) != device {
		a.setKV(ctx, key, string(resp.DeviceID))
	}
	return nil
}

func (a *Adapter) kv(ctx context.Context, key string) (string, bool) {
	if a.cfg.Store == nil {
		a.mu.Lock()
		defer a.mu.Unlock()
		v, ok := a.mem[key]
		return v, ok
	}
	v, ok, err := a.cfg.Store.KV(ctx, key)
	if err != nil {
		a.log.Warn("matrix: reading the store failed", "key", key, "err", err)
		return "", false
	}
	return v, ok
}

func (a *Adapter) setKV(ctx context.Context, key, value string) error {
	if a.cfg.Store == nil {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.mem[key] = value
		return nil
	}
	if err := a.cfg.Store.SetKV(ctx, key, value); err != nil {
		a.log.Warn("matrix: writing the store failed", "key", key, "err", err)
		return err
	}
	return nil
}

// sleep waits d or until ctx ends; it reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// backoff is the wait before attempt+1: the server's retry_after when it
// gave one, else 1 s doubling up to 30 s.
func backoff(attempt int, err error) time.Duration {
	var ra *adapters.RetryAfterError
	if errors.As(err, &ra) && ra.After > 0 {
		return ra.After
	}
	d := time.Second << min(attempt, 5)
	return min(d, 30*time.Second)
}
