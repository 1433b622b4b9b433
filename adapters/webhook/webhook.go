package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Platform is the webhook platform's name.
const Platform herald.Platform = "webhook"

// PathPrefix is where routes are served: POST /webhooks/<name>.
const PathPrefix = "/webhooks/"

// Defaults of a Route's limits.
const (
	DefaultRateLimit = 30
	DefaultMaxBody   = 1 << 20
)

// Hermes' secret value for a route that checks no signature.
const hermesInsecure = "INSECURE_NO_AUTH"

// deliverLog is Hermes' deliver value that only logs the answer.
const deliverLog = "log"

// Route configures one endpoint (config.WebhookRoute, resolved).
type Route struct {
	Name           string
	Secret         string
	InsecureNoAuth bool
	Events         []string
	Prompt         string
	// Deliver is a target ("telegram:-100123", "local:c1", "slack") or
	// "log"; "" is local:<Name>.
	Deliver string
	// DeliverExtra's chat_id and thread_id (or message_thread_id), when
	// set, are rendered from the payload and complete Deliver's target.
	DeliverExtra map[string]string
	DeliverOnly  bool
	// RateLimit is requests per minute; MaxBodyBytes the largest body.
	// Zero takes DefaultRateLimit and DefaultMaxBody (config.yaml's
	// defaults are the same).
	RateLimit    int
	MaxBodyBytes int64
}

// Config configures an Adapter.
type Config struct {
	Routes []Route
	// Store keeps the delivery ids taken (*sessions.Store).
	Store KV
	// Deliverer sends answers and deliver_only texts through the
	// gateway's delivery path; it is called only while Run runs.
	Deliverer herald.Deliverer
	// Known reports whether a platform is configured; routes delivering
	// to another are skipped when Run starts. nil knows every platform.
	Known func(herald.Platform) bool
	// PublicListener is set when the inbound listener is not bound to a
	// loopback address: routes without a secret are then refused.
	PublicListener bool
	// OnReady, if set, is called once Run serves the routes.
	OnReady func()
	Log     *slog.Logger
}

// Adapter is the webhook platform.
type Adapter struct {
	cfg     Config
	log     *slog.Logger
	routes  map[string]*route
	skipped []error
	seen    seen
	mount   adapters.Mount

	mu      sync.Mutex
	running bool
}

var (
	_ adapters.Adapter       = (*Adapter)(nil)
	_ adapters.InboundRouter = (*Adapter)(nil)
	_ adapters.Healther      = (*Adapter)(nil)
)

// route is a Route ready to serve.
type route struct {
	Route
	prompt   *Template // nil: the default prompt
	extra    map[string]*Template
	target   herald.Target
	logOnly  bool
	limit    window
	disabled bool // set by Run when its target's platform is unknown
}

var routeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// New builds the adapter. A route that cannot be served safely or at all
// (no secret, a bad name, template or target) is skipped; Skipped says
// why, naming it.
func New(cfg Config) *Adapter {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	a := &Adapter{cfg: cfg, log: cfg.Log, routes: map[string]*route{}, seen: seen{store: cfg.Store}}
	for _, r := range cfg.Routes {
		rt, err := a.prepare(r)
		if err != nil {
			a.skipped = append(a.skipped, fmt.Errorf("webhook route %q skipped: %w", r.Name, err))
			continue
		}
		a.routes[r.Name] = rt
	}
	sort.Slice(a.skipped, func(i, j int) bool { return a.skipped[i].Error() < a.skipped[j].Error() })
	return a
}

// prepare checks and compiles one route.
func (a *Adapter) prepare(r Route) (*route, error) {
	where := "platforms.webhook.routes." + r.Name
	if !routeName.MatchString(r.Name) {
		return nil, fmt.Errorf("the name must be 1–64 letters, digits, '.', '_' or '-'")
	}
	if r.Secret == hermesInsecure {
		r.Secret, r.InsecureNoAuth = "", true
	}
	switch {
	case r.Secret == "" && !r.InsecureNoAuth:
		return nil, fmt.Errorf("no secret: set %s.secret (or platforms.webhook.secret), or insecure_no_auth: true to accept unsigned requests", where)
	case r.Secret == "" && a.cfg.PublicListener:
		return nil, fmt.Errorf("insecure_no_auth is refused while inbound.listen is not a loopback address: set %s.secret", where)
	}
	rt := &route{Route: r, extra: map[string]*Template{}}
	rt.limit.per = r.RateLimit
	if rt.limit.per <= 0 {
		rt.limit.per = DefaultRateLimit
	}
	if rt.MaxBodyBytes <= 0 {
		rt.MaxBodyBytes = DefaultMaxBody
	}
	if strings.TrimSpace(r.Prompt) != "" {
		t, err := ParseTemplate(r.Prompt)
		if err != nil {
			return nil, fmt.Errorf("%s.prompt: %w", where, err)
		}
		rt.prompt = t
	}
	for k, v := range r.DeliverExtra {
		switch k {
		case "chat_id", "thread_id", "message_thread_id":
		default:
			a.log.Warn("webhook route: deliver_extra key ignored", "route", r.Name, "key", k)
			continue
		}
		t, err := ParseTemplate(v)
		if err != nil {
			return nil, fmt.Errorf("%s.deliver_extra.%s: %w", where, k, err)
		}
		rt.extra[k] = t
	}
	switch d := strings.TrimSpace(r.Deliver); {
	case strings.EqualFold(d, deliverLog):
		if r.DeliverOnly {
			return nil, fmt.Errorf("%s: deliver_only needs a target in deliver, not log", where)
		}
		rt.logOnly = true
	case d == "":
		rt.target = herald.Target{Platform: herald.PlatformLocal, ChatID: r.Name}
	default:
		t, err := herald.ParseTarget(d)
		if err != nil {
			return nil, fmt.Errorf("%s.deliver: %w", where, err)
		}
		if t.Platform == Platform {
			return nil, fmt.Errorf("%s.deliver: %q would deliver to the webhook platform itself", where, d)
		}
		rt.target = t
	}
	return rt, nil
}

// Skipped returns the errors of the routes New skipped, each naming its
// route.
func (a *Adapter) Skipped() []error { return a.skipped }

// Platform implements adapters.Adapter.
func (a *Adapter) Platform() herald.Platform { return Platform }

// Limits implements adapters.Adapter: an answer is relayed whole; the
// platform it is delivered to splits it.
func (a *Adapter) Limits() adapters.Limits { return adapters.Limits{} }

// InboundRoutes implements adapters.InboundRouter: one path per route.
func (a *Adapter) InboundRoutes() map[string]http.Handler {
	out := map[string]http.Handler{}
	for name := range a.routes {
		out[PathPrefix+name] = &a.mount
	}
	return out
}

// Health implements adapters.Healther.
func (a *Adapter) Health() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case len(a.routes) == 0:
		return "failed: no route can be served"
	case a.running:
		return "connected"
	}
	return "connecting"
}

// Run implements adapters.Adapter: it serves the routes on the inbound
// listener until ctx ends.
func (a *Adapter) Run(ctx context.Context, sink adapters.Sink) error {
	if len(a.routes) == 0 {
		return &adapters.FatalError{Msg: "webhook: no route can be served (see the errors above naming each)"}
	}
	if a.cfg.Store == nil || a.cfg.Deliverer == nil {
		return &adapters.FatalError{Msg: "webhook: the adapter needs a store and a deliverer"}
	}
	if a.cfg.Known != nil {
		for _, rt := range a.routes {
			if !rt.logOnly && !a.cfg.Known(rt.target.Platform) {
				rt.disabled = true
				a.log.Error(fmt.Sprintf("webhook route %q skipped: platforms.webhook.routes.%s.deliver names platform %q, which is not configured", rt.Name, rt.Name, rt.target.Platform))
			}
		}
	}
	if n, err := a.seen.prune(ctx, time.Now()); err != nil {
		a.log.Warn("webhook: could not prune old delivery ids", "err", err)
	} else if n > 0 {
		a.log.Debug("webhook: pruned old delivery ids", "count", n)
	}
	defer a.mount.Put(a.handler(ctx, sink))()
	a.setRunning(true)
	defer a.setRunning(false)
	if a.cfg.OnReady != nil {
		a.cfg.OnReady()
	}
	<-ctx.Done()
	return nil
}

func (a *Adapter) setRunning(on bool) {
	a.mu.Lock()
	a.running = on
	a.mu.Unlock()
}

// Send implements adapters.Adapter: what the gateway says in a route's
// chat (the answer of a run, or a notice) goes to the route's target,
// through the gateway's delivery path.
func (a *Adapter) Send(ctx context.Context, to herald.Target, m adapters.Outgoing) (adapters.Sent, error) {
	rt, ok := a.routes[to.ChatID]
	if !ok {
		return adapters.Sent{}, &adapters.FatalError{Msg: fmt.Sprintf("webhook: no route %q", to.ChatID)}
	}
	target, logOnly := rt.target, rt.logOnly
	if to.ThreadID != "" {
		rec, ok, err := a.seen.lookup(ctx, rt.Name, to.ThreadID)
		if err != nil {
			return adapters.Sent{}, &adapters.TemporaryError{Err: err}
		}
		if ok {
			logOnly = rec.To == deliverLog
			if !logOnly {
				if t, err := herald.ParseTarget(rec.To); err == nil {
					target = t
				}
			}
		}
	}
	if logOnly {
		a.log.Info("webhook answer", "route", rt.Name, "delivery", to.ThreadID, "text", head(m.Text, 200))
		return adapters.Sent{}, nil
	}
	if err := a.cfg.Deliverer.Deliver(ctx, target, m.Text); err != nil {
		// the gateway's delivery path has retried already; repeating it
		// here could only double what went through
		return adapters.Sent{}, &adapters.FatalError{Msg: fmt.Sprintf("webhook: route %s: delivery to %s failed", rt.Name, target), Err: err}
	}
	return adapters.Sent{}, nil
}

// head is s cut to n runes.
func head(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// errNoRoute is a request for a route that is not served.
var errNoRoute = errors.New("no such route")
