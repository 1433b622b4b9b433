package cmd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/agent/sandbox"
	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// app is what every command that talks to the agent needs, built from
// the configuration in one place.
type app struct {
	e        *env
	cfg      *config.Config
	home     string
	log      *slog.Logger
	logFile  *os.File
	redactor *herald.Redactor
	store    *sessions.Store
	hooks    *hooks.Registry
	agent    *agent.Agent
	// judge is the model behind prompt and agent hooks: the agent's,
	// without its hooks; nil offline
	judge    hooks.Judge
	endpoint config.Endpoint
	plugins  []hooks.LoadedPlugin
	closers  []func()
	// sandboxWarning, when set, says the terminal tool runs unconfined;
	// the gateway logs it once at start.
	sandboxWarning string
	// sendPaths confines the files the agent sends (send_file, MEDIA:
	// lines).
	sendPaths *agent.Paths
	// late stands in for the gateway's Runner for adapters built before
	// it (platform_webhook.go).
	late *lateGateway
}

type appOptions struct {
	logToFile bool // gateway.log
	quiet     bool // log warnings and errors only to stderr (chat)
	level     slog.Level
}

// loadConfig finds the home, creates it and loads config.yaml.
func (e *env) loadConfig() (*config.Config, []config.Warning, error) {
	home, err := config.Home(e.home, e.getenv)
	if err != nil {
		return nil, nil, err
	}
	if err := config.EnsureHome(home); err != nil {
		return nil, nil, err
	}
	return config.Load(home, e.getenv)
}

// newApp loads the configuration and builds logger, store, registry and
// agent. The caller must call close.
func (e *env) newApp(o appOptions) (*app, error) {
	cfg, warns, err := e.loadConfig()
	if err != nil {
		return nil, err
	}
	a := &app{e: e, cfg: cfg, home: cfg.Home}
	a.redactor = herald.NewRedactor()
	for _, v := range cfg.Secrets {
		a.redactor.Add(v)
	}
	if err := a.setupLog(o); err != nil {
		return nil, err
	}
	// no process without CAP_SYS_PTRACE (the terminal tool's commands,
	// hooks) may read the secrets in herald's memory or /proc environ
	if err := sandbox.ProtectSelf(); err != nil {
		a.log.Warn("could not mark herald non-dumpable: processes it starts may read its memory and environment", "err", err)
	}
	if o.logToFile {
		// the gateway's log keeps them
		for _, w := range warns {
			a.log.Warn(w.String())
		}
	} else {
		e.warnConfig(warns)
	}
	st, err := openStore(cfg)
	if err != nil {
		a.close()
		return nil, err
	}
	a.store = st
	a.closers = append(a.closers, func() { st.Close() })
	a.hooks = hooks.NewRegistry(a.log.With("component", "hooks"))
	a.plugins = a.hooks.LoadPlugins(e.plugins...)
	for _, p := range a.plugins {
		a.log.Info("plugin loaded", "plugin", p.Name, "events", strings.Join(p.Events, ","))
	}
	a.endpoint = cfg.ResolveModel()
	a.agent = newAgent(a.endpoint, cfg, a.hooks, a.redactor, a.log)
	a.agent.ApprovalMemory = st // "always" answers live in the state store
	// prompt and agent hooks ask the agent's model, without its hooks;
	// the offline echo model cannot judge, so offline they do not load
	if !a.endpoint.Offline {
		a.judge = agent.NewJudge(a.agent)
	}
	if err := registerTools(a); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

// storeOpenTimeout bounds connecting to and migrating a PostgreSQL store
// at start, so that an unreachable server is an error, not a hang.
const storeOpenTimeout = time.Minute

// openStore opens the state store the configuration names: state.db in the
// home, or the PostgreSQL database of store: (HERALD_DATABASE_URL).
func openStore(cfg *config.Config) (*sessions.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
	defer cancel()
	return sessions.OpenStore(ctx, sessions.Spec{Path: filepath.Join(cfg.Home, "state.db"), URL: cfg.Store, ReplicaID: cfg.ReplicaID})
}

// newAgent builds the agent for an endpoint: the one model resolver's
// answer is used by the gateway, herald chat, cron and BOOT.md alike.
func newAgent(ep config.Endpoint, cfg *config.Config, reg *hooks.Registry, red *herald.Redactor, log *slog.Logger) *agent.Agent {
	var model agent.Model = agent.Echo{}
	if !ep.Offline {
		model = agent.NewOpenAI(ep.BaseURL, ep.APIKey, nil)
	}
	return &agent.Agent{
		Model: model, Tools: agent.NewTools(), Hooks: reg, Redactor: red, Log: log.With("component", "agent"),
		ModelName: ep.Model, Provider: ep.Provider, BaseURL: ep.BaseURL, ContextWindow: ep.ContextWindow,
		MaxTokens: ep.MaxTokens, MaxIterations: cfg.Agent.MaxIterations, SystemPrompt: cfg.Agent.SystemPrompt,
		ApprovalMode: cfg.Approvals.Mode, ApprovalTimeout: cfg.Approvals.Timeout.D(),
		TranscriptDir: filepath.Join(cfg.Home, "transcripts"),
		Vision:        cfg.Vision(agent.SupportsVision),
	}
}

func (a *app) setupLog(o appOptions) error {
	level := o.level
	if lv := a.cfg.Logging.Level; lv != "" && o.level == 0 {
		if err := level.UnmarshalText([]byte(lv)); err != nil {
			level = slog.LevelInfo
		}
	}
	var w io.Writer = a.e.stderr
	stderrLevel := level
	if o.quiet {
		stderrLevel = slog.LevelWarn
	}
	handlers := []slog.Handler{slog.NewTextHandler(w, &slog.HandlerOptions{Level: stderrLevel})}
	if o.logToFile {
		f, err := os.OpenFile(filepath.Join(a.home, "logs", "gateway.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("open log: %w", err)
		}
		a.logFile = f
		a.closers = append(a.closers, func() { f.Close() })
		handlers = append(handlers, slog.NewTextHandler(f, &slog.HandlerOptions{Level: min(level, slog.LevelInfo)}))
	}
	a.log = slog.New(&redactHandler{r: a.redactor, hs: handlers})
	return nil
}

func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}

// closeHooks drains the hook queues (bounded).
func (a *app) closeHooks(ctx context.Context) {
	if a.hooks != nil {
		if err := a.hooks.Close(ctx); err != nil {
			a.log.Warn("hook queues not drained at exit", "err", err)
		}
	}
}

// redactHandler passes each record through the one redactor before it
// reaches any log sink, and fans out to several handlers.
type redactHandler struct {
	r  *herald.Redactor
	hs []slog.Handler
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	for _, x := range h.hs {
		if x.Enabled(ctx, l) {
			return true
		}
	}
	return false
}

func (h *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	rec.Attrs(func(at slog.Attr) bool {
		out.AddAttrs(h.redactAttr(at))
		return true
	})
	var errs []error
	for _, x := range h.hs {
		if x.Enabled(ctx, rec.Level) {
			errs = append(errs, x.Handle(ctx, out.Clone()))
		}
	}
	return errors.Join(errs...)
}

func (h *redactHandler) redactAttr(at slog.Attr) slog.Attr {
	v := at.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(at.Key, h.r.Redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, 0, len(g))
		for _, x := range g {
			out = append(out, h.redactAttr(x))
		}
		return slog.Group(at.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(at.Key, h.r.Redact(err.Error()))
		}
		return slog.String(at.Key, h.r.Redact(fmt.Sprint(v.Any())))
	}
	return slog.Attr{Key: at.Key, Value: v}
}

func (h *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.redactAttr(a)
	}
	hs := make([]slog.Handler, len(h.hs))
	for i, x := range h.hs {
		hs[i] = x.WithAttrs(red)
	}
	return &redactHandler{r: h.r, hs: hs}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	hs := make([]slog.Handler, len(h.hs))
	for i, x := range h.hs {
		hs[i] = x.WithGroup(name)
	}
	return &redactHandler{r: h.r, hs: hs}
}

// localToken returns the local platform's token, creating it (0600) on
// first use.
func localToken(home string) (string, error) {
	p := filepath.Join(home, "local.token")
	if b, err := herald.ReadRegularFile(p); err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", p, err)
	}
	var buf [24]byte
	if _, err := rand.Read(buf[:]); err != nil {
		return "", err
	}
	t := "hl_" + hex.EncodeToString(buf[:])
	if err := os.WriteFile(p, []byte(t+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", p, err)
	}
	return t, nil
}
