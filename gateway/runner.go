package gateway

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// PlatformAuth is one platform's access rule.
type PlatformAuth struct {
	// AllowedUsers may contain "*". Empty means no allowlist.
	AllowedUsers []string
	// UnauthorizedDM is pair|ignore ("" = pair without an allowlist,
	// ignore with one).
	UnauthorizedDM string
	// TrustAll lets every user in (the local platform, whose token holder
	// is trusted, unless it has an allowlist).
	TrustAll bool
	// HomeChannel is where a bare "platform" target delivers.
	HomeChannel string
	// RequireMention: in groups, only messages that mention (or reply to)
	// the bot start turns.
	RequireMention bool
	// DisabledTools are left out of turns on this platform.
	DisabledTools []string
	// GroupManners: channel policy, wake words, roles, reply quoting
	// (manners.go).
	GroupManners
}

// Config wires a Runner.
type Config struct {
	Adapters []adapters.Adapter
	Store    Store
	Hooks    *hooks.Registry
	Agent    *agent.Agent
	Redactor *herald.Redactor
	Log      *slog.Logger
	// TurnLog gets the one line each turn leaves (turnlog.go); default
	// Log. herald chat, which says itself how its turns end, discards it.
	TurnLog *slog.Logger

	Keys          sessions.KeyOptions
	BusyMode      string // interrupt|queue
	Auth          map[herald.Platform]PlatformAuth
	AllowAllUsers bool // GATEWAY_ALLOW_ALL_USERS
	// UnauthorizedDM is the global default (pair|ignore|"").
	UnauthorizedDM string
	ShutdownGrace  time.Duration
	// HistoryLimit is how many stored messages a turn loads (default 200).
	HistoryLimit int
	Now          func() time.Time

	// Reset is the automatic reset policy (the zero value is Hermes'
	// default, both at 4:00 / 1440 minutes idle; mode "none" turns it off).
	Reset sessions.ResetPolicy
	// ResetNotify tells the user when their session was reset by the
	// policy (Hermes' session_reset.notify, default true: nil means on).
	ResetNotify *bool
	// SweepInterval is how often expired sessions are finalized (default
	// 5 minutes).
	SweepInterval time.Duration
	// ApprovalTimeout bounds a person's answer to an approval prompt
	// (default 5 minutes).
	ApprovalTimeout time.Duration
	// Approvers replace the chat approver (a prompt answered by /approve
	// or /deny) on some platforms; herald chat passes a terminal prompt
	// for "cli".
	Approvers map[herald.Platform]agent.Approver
	// ApproverUsers may press an approval prompt's buttons besides the
	// person whose message needs the approval: platform user ids, per
	// platform (platforms.<name>.approvers).
	ApproverUsers map[herald.Platform][]string
	// StreamInterval is the least time between two edits of a streamed
	// reply (default 1 s).
	StreamInterval time.Duration
	// RetryBase is the first wait before resending after a network error
	// (default 1 s; it doubles per attempt).
	RetryBase time.Duration
	// SendTimeout bounds one attempt to send, edit or delete a message
	// (default 30 s): a platform call that hangs fails that attempt. A
	// send that times out after its request was written is not repeated:
	// the message may have gone through.
	SendTimeout time.Duration
	// MaxQueue caps, per chat, the messages waiting for its intake and
	// the turns queued behind its running turn (default 100); over it
	// the user is told the message was not taken.
	MaxQueue int
	// Media configures attachments in (the cache, its cap,
	// speech-to-text) and out (which files may be sent).
	Media MediaConfig
	// PlatformFailed, when set, is told of each platform stopped for good
	// (its adapter returned a *adapters.FatalError: a port in use, a
	// revoked token), with the reason already redacted.
	PlatformFailed func(p herald.Platform, reason string)
	// Coordinator shares chats, inbound dedup and approvals with other
	// replicas of this gateway (replicas.go); nil is one process.
	Coordinator Coordinator
}

// Runner is the gateway.
type Runner struct {
	cfg      Config
	log      *slog.Logger
	hooks    *hooks.Registry
	store    Store
	adapters map[herald.Platform]adapters.Adapter
	order    []herald.Platform

	mu    sync.Mutex
	chats map[string]*chat

	accepting atomic.Bool
	work      tracker // intake and turn goroutines
	bg        tracker // journal watchers and notices sent off the intake
	finishing batch[inboxKey]
	// unfinished are the journal rows the last run left unfinished
	// (read by New, handled by Run)
	unfinished []sessions.Inbound
	health     sync.Map // platform → string
	// storeErr is the last store failure ("" after a write succeeded):
	// /healthz reports it.
	storeErr atomic.Pointer[string]
	// storeDamage is what the integrity check at start found ("" or nil:
	// nothing); it stays until restart.
	storeDamage atomic.Pointer[string]
	startedAt   time.Time
	// pace spaces messages per chat and holds a chat a 429 closed
	pace pacer
	// outboxKick wakes the loop delivering queued messages
	outboxKick chan struct{}
	// maybeSent counts sends that timed out after their request was
	// written (delivered or not: unknown) and were not repeated
	maybeSent atomic.Int64
	// pressable are the approvals waiting now, by button token (press.go)
	pressable pressables
	// queued is how many messages wait in the outbound queue
	queued atomic.Int64
	// coord, handoff, pulls and sharedDone are the replicas' (replicas.go):
	// handoff holds the receipts of messages received here until their
	// chat's queue is taken.
	coord      Coordinator
	handoff    sync.Map // inboxKey → *adapters.Receipt
	pulls      pullLocks
	sharedDone batch[sharedRow]
	baseCtx    context.Context
	cancelBase context.CancelFunc
}

var (
	_ adapters.Sink             = (*Runner)(nil)
	_ herald.Deliverer          = (*Runner)(nil)
	_ herald.Replier            = (*Runner)(nil)
	_ herald.TranscriptAppender = (*Runner)(nil)
)

// New builds a Runner; nothing runs until Run.
func New(cfg Config) *Runner {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.TurnLog == nil {
		cfg.TurnLog = cfg.Log
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HistoryLimit <= 0 {
		cfg.HistoryLimit = 200
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 10 * time.Second
	}
	if cfg.BusyMode == "" {
		cfg.BusyMode = "interrupt"
	}
	if cfg.Reset.Mode == "" && cfg.Reset.AtHour == 0 && cfg.Reset.IdleMinutes == 0 {
		cfg.Reset = sessions.DefaultResetPolicy
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = 5 * time.Minute
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = agent.DefaultApprovalTimeout
	}
	if cfg.StreamInterval <= 0 {
		cfg.StreamInterval = time.Second
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = time.Second
	}
	if cfg.SendTimeout <= 0 {
		cfg.SendTimeout = 30 * time.Second
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = 100
	}
	if cfg.Redactor == nil {
		cfg.Redactor = herald.NewRedactor()
	}
	r := &Runner{
		cfg: cfg, log: cfg.Log, hooks: cfg.Hooks, store: cfg.Store,
		adapters: map[herald.Platform]adapters.Adapter{}, chats: map[string]*chat{},
		outboxKick: make(chan struct{}, 1), coord: cfg.Coordinator,
	}
	r.pulls.seed = maphash.MakeSeed()
	for _, a := range cfg.Adapters {
		r.adapters[a.Platform()] = a
		r.order = append(r.order, a.Platform())
		r.health.Store(a.Platform(), "starting")
		if m, ok := a.(adapters.CommandMenu); ok {
			m.SetCommands(r.commandMenu())
		}
	}
	r.baseCtx, r.cancelBase = context.WithCancel(context.Background())
	if r.store != nil {
		r.unfinished = r.readUnfinished()
		r.countQueued(context.Background())
	}
	r.accepting.Store(true)
	return r
}

// Run starts every adapter and the expiry sweep, emits gateway:startup,
// and serves until ctx ends; then it stops accepting, fires
// on_session_finalize (platform "gateway") for each session with a running
// turn, lets running turns finish (bounded by ShutdownGrace, then cancels
// them) and returns.
func (r *Runner) Run(ctx context.Context) error {
	r.startedAt = r.cfg.Now()
	// before any adapter runs: what the last run stored but did not
	// finish (it crashed) is handled first
	r.replayUnfinished(ctx, r.unfinished)
	r.unfinished = nil
	actx, stopAdapters := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, p := range r.order {
		a := r.adapters[p]
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runAdapter(actx, a)
		}()
	}
	wg.Add(3)
	go func() {
		defer wg.Done()
		r.sweepLoop(actx)
	}()
	if r.coord != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runCoordinator(actx)
		}()
	}
	go func() {
		defer wg.Done()
		r.outboxLoop(actx)
	}()
	go func() {
		defer wg.Done()
		r.checkStore(actx)
	}()
	var names []string
	for _, p := range r.order {
		names = append(names, string(p))
	}
	r.hooks.Emit(hooks.GatewayStartup, &hooks.Startup{Platforms: names})
	r.log.Info("gateway started", "platforms", strings.Join(names, ","))

	<-ctx.Done()
	r.log.Info("gateway stopping: no new messages; waiting for running turns", "grace", r.cfg.ShutdownGrace)
	r.accepting.Store(false)
	r.finalizeRunning()
	done := r.work.close()
	grace := time.NewTimer(r.cfg.ShutdownGrace)
	select {
	case <-done:
	case <-grace.C:
		r.log.Warn("shutdown grace over; cancelling running turns")
		r.cancelBase() // also ends deliveries waiting to retry
		<-done
	}
	// every receipt is resolved now; let the journal record it
	bgDone := r.bg.close()
	select {
	case <-bgDone:
	case <-grace.C:
		r.cancelBase()
		<-bgDone
	}
	grace.Stop()
	r.leave()
	stopAdapters()
	wg.Wait()
	r.cancelBase()
	return nil
}

// Reconnect bounds for an adapter whose Run returned: the first wait is
// about reconnectMin, doubling per failure up to reconnectMax (a platform
// that comes back is noticed within two minutes); a connection that stayed
// up for stableAfter was healthy, so its next failure starts from
// reconnectMin again.
const (
	reconnectMin = time.Second
	reconnectMax = 2 * time.Minute
	stableAfter  = time.Minute
)

// runAdapter runs one adapter under a recover boundary, restarting it with
// capped exponential backoff and jitter unless it failed fatally
// (adapters.FatalError: a revoked token, say), which stops it for good.
func (r *Runner) runAdapter(ctx context.Context, a adapters.Adapter) {
	p := a.Platform()
	backoff := reconnectMin
	for ctx.Err() == nil {
		r.health.Store(p, "connecting")
		started := time.Now()
		err := r.runOnce(ctx, a)
		if ctx.Err() != nil {
			r.health.Store(p, "stopped")
			return
		}
		if err == nil {
			err = errors.New("adapter stopped")
		}
		if adapters.IsFatal(err) {
			r.health.Store(p, "failed: "+r.cfg.Redactor.Redact(err.Error()))
			r.log.Error("platform stopped for good", "platform", p, "err", r.cfg.Redactor.Redact(err.Error()))
			if r.cfg.PlatformFailed != nil {
				r.cfg.PlatformFailed(p, r.cfg.Redactor.Redact(err.Error()))
			}
			return
		}
		if time.Since(started) >= stableAfter {
			backoff = reconnectMin
		}
		r.health.Store(p, "reconnecting")
		wait := backoff/2 + rand.N(backoff/2+1)
		r.log.Warn("platform connection lost; reconnecting", "platform", p, "err", r.cfg.Redactor.Redact(err.Error()), "in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			r.health.Store(p, "stopped")
			return
		case <-t.C:
		}
		backoff = min(2*backoff, reconnectMax)
	}
}

// runOnce is one Run of a, behind the recover boundary: a panic is logged
// with its stack and returned as an error, so the adapter is restarted.
func (r *Runner) runOnce(ctx context.Context, a adapters.Adapter) (err error) {
	defer func() {
		if x := recover(); x != nil {
			r.log.Error("adapter panicked", "platform", a.Platform(), "panic", r.cfg.Redactor.Redact(fmt.Sprint(x)), "stack", string(debug.Stack()))
			err = fmt.Errorf("adapter panicked: %v", x)
		}
	}()
	return a.Run(ctx, r)
}

// StoreKey is the key under which Health reports the state store.
const StoreKey = "store"

// Health returns each platform's state, and the state store's under
// StoreKey: "ok", or "failed: …" once a write (or a read a turn needed)
// failed, until a write succeeds again, and for good when the integrity
// check at start found damage.
func (r *Runner) Health() map[string]string {
	out := map[string]string{StoreKey: "ok"}
	if e := r.storeErr.Load(); e != nil && *e != "" {
		out[StoreKey] = "failed: " + *e
	}
	if e := r.storeDamage.Load(); e != nil && *e != "" {
		out[StoreKey] = "failed: " + *e
	}
	for _, p := range r.order {
		state := "unknown"
		if h, ok := r.adapters[p].(adapters.Healther); ok {
			state = h.Health()
		} else if v, ok := r.health.Load(p); ok {
			state = v.(string)
		}
		if v, ok := r.health.Load(p); ok && strings.HasPrefix(v.(string), "failed") {
			state = v.(string)
		}
		out[string(p)] = state
	}
	return out
}

// Delivery is the state of delivery /healthz reports besides Health.
type Delivery struct {
	// MaybeSent is how many sends timed out after they were written and
	// were not repeated since the gateway started (see Runner.MaybeSent).
	MaybeSent int64
	// Queued is how many messages wait in the outbound queue for a rate
	// limit to pass.
	Queued int64
}

// Delivery returns the state of delivery now.
func (r *Runner) Delivery() Delivery {
	return Delivery{MaybeSent: r.MaybeSent(), Queued: r.queued.Load()}
}

// Platforms lists the configured platforms in start order.
func (r *Runner) Platforms() []string {
	out := make([]string, 0, len(r.order))
	for _, p := range r.order {
		out = append(out, string(p))
	}
	sort.Strings(out)
	return out
}

// Adapter returns the adapter of a platform.
func (r *Runner) Adapter(p herald.Platform) (adapters.Adapter, bool) {
	a, ok := r.adapters[p]
	return a, ok
}

// checkStore runs the store's integrity check once, at start, so that a
// damaged state.db shows in Health before a message finds it.
func (r *Runner) checkStore(ctx context.Context) {
	if r.store == nil {
		return
	}
	err := r.store.Check(ctx)
	if err == nil || ctx.Err() != nil {
		return
	}
	msg := r.cfg.Redactor.Redact(err.Error())
	r.log.Error("state store failed its integrity check", "err", msg)
	r.storeDamage.Store(&msg)
}

// storeResult records the outcome of a store operation for Health: a
// failure marks the store failing, a success clears it. A cancelled
// context or a store closed at shutdown says nothing about the store.
func (r *Runner) storeResult(err error) {
	switch {
	case err == nil:
		if e := r.storeErr.Load(); e != nil && *e != "" {
			r.log.Info("state store working again")
			r.storeErr.Store(nil)
		}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, sessions.ErrClosed):
	default:
		msg := r.cfg.Redactor.Redact(err.Error())
		r.storeErr.Store(&msg)
	}
}
