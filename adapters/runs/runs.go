package runs

// runs.go: the adapter (platform "runs"): its configuration, the runs it
// holds and their retention, Send and Edit handing what the gateway
// sends to the run of the chat, and the hook points fed to the runs they
// belong to.

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Platform is the runs' platform.
const Platform herald.Platform = "runs"

// Defaults of Config.
const (
	DefaultKeep        = time.Hour
	DefaultMaxRuns     = 1000
	DefaultMaxLog      = 1 << 20
	DefaultMaxTotalLog = 64 << 20
)

// EndWait bounds the wait, once a run's message was handled, for its
// turn's agent:end (emitted just after, and delivered to observers off
// the hot path), so that the run's last hook points precede its end.
const EndWait = 5 * time.Second

// Store is what runs read from the state store.
type Store interface {
	// SessionSource returns where a stored session's messages come from
	// (found false when no session has that id).
	SessionSource(ctx context.Context, id string) (src herald.Source, found bool, err error)
}

// Config configures the runs API.
type Config struct {
	Store Store
	// Events subscribes fn to every hook point, in the order they were
	// emitted, as the local platform's /v1/events gets them; it returns
	// an unsubscribe function. Nil: a run's log has no hook points, and
	// its end does not wait for agent:end.
	Events func(fn func(HookPoint)) (unsubscribe func())
	// SessionKey is the gateway's session key of a chat (approval hook
	// points name a session by it).
	SessionKey func(src herald.Source) string
	// Redact masks secrets in an error shown to the client.
	Redact func(string) string
	// Keep, MaxRuns, MaxLog and MaxTotalLog bound what is kept (zero:
	// the defaults).
	Keep        time.Duration
	MaxRuns     int
	MaxLog      int
	MaxTotalLog int
	Log         *slog.Logger
	Now         func() time.Time
}

// HookPoint is one hook point as Config.Events hands it over.
type HookPoint struct {
	Name string
	// Context is the payload in its JSON wire form, secrets masked (nil
	// for none).
	Context json.RawMessage
	// Time is when it was emitted (time.Now, with its monotonic clock):
	// a run's text deltas are ordered among its hook points by it.
	Time time.Time
}

// Router is where the endpoints are served: the local platform's
// listener (local.Adapter), whose token and Host check guard them.
type Router interface {
	Handle(pattern string, h http.HandlerFunc)
}

// Adapter is the runs' platform.
type Adapter struct {
	cfg Config
	log *slog.Logger
	seq atomic.Int64

	sink adapters.HeldSink
	// quit is closed when Run ends; watchers counts the runs' watching
	// goroutines, which Run waits for
	quit     chan struct{}
	watchers sync.WaitGroup

	// active counts the runs going on (Following)
	active atomic.Int64

	mu   sync.Mutex
	runs map[string]*run
	// active runs by chat, session id and session key (hook points name
	// one of them)
	byChat    map[string]*run
	bySession map[string]*run
	byKey     map[string]*run
}

var (
	_ adapters.Adapter  = (*Adapter)(nil)
	_ adapters.Editor   = (*Adapter)(nil)
	_ adapters.Healther = (*Adapter)(nil)
)

// New returns the runs adapter; Register serves its endpoints.
func New(cfg Config) *Adapter {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Redact == nil {
		cfg.Redact = func(s string) string { return s }
	}
	if cfg.SessionKey == nil {
		cfg.SessionKey = func(herald.Source) string { return "" }
	}
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	if cfg.MaxLog <= 0 {
		cfg.MaxLog = DefaultMaxLog
	}
	if cfg.MaxTotalLog <= 0 {
		cfg.MaxTotalLog = DefaultMaxTotalLog
	}
	a := &Adapter{cfg: cfg, log: cfg.Log, quit: make(chan struct{}),
		runs: map[string]*run{}, byChat: map[string]*run{}, bySession: map[string]*run{}, byKey: map[string]*run{}}
	a.seq.Store(time.Now().UnixNano())
	return a
}

// Register serves the endpoints on rt. Call it before rt serves.
func (a *Adapter) Register(rt Router) {
	rt.Handle("POST /v1/runs", a.create)
	rt.Handle("GET /v1/runs/{id}", a.get)
	rt.Handle("GET /v1/runs/{id}/events", a.events)
	rt.Handle("POST /v1/runs/{id}/approval", a.approval)
	rt.Handle("POST /v1/runs/{id}/stop", a.stop)
}

func (a *Adapter) Platform() herald.Platform { return Platform }

// Limits: a reply is one message of any length.
func (a *Adapter) Limits() adapters.Limits { return adapters.Limits{} }

// Health is "connected" while Run holds the gateway's Sink.
func (a *Adapter) Health() string { return a.sink.Health() }

// Run takes the gateway's Sink and the hook points, and holds them until
// ctx ends; runs still going then end stopped.
func (a *Adapter) Run(ctx context.Context, sink adapters.Sink) error {
	var unsubscribe func()
	if a.cfg.Events != nil {
		unsubscribe = a.cfg.Events(a.hookPoint)
	}
	// runs wait for the Sink, and start once the hook points reach
	// them; "connected" takes runs
	a.sink.Hold(sink)
	a.sink.SetServing(true)
	<-ctx.Done()
	a.sink.SetServing(false)
	close(a.quit)
	a.watchers.Wait()
	if unsubscribe != nil {
		unsubscribe()
	}
	return nil
}

// Send hands a message to the run of the chat it goes to.
func (a *Adapter) Send(ctx context.Context, to herald.Target, m adapters.Outgoing) (adapters.Sent, error) {
	id := "r" + strconv.FormatInt(a.seq.Add(1), 10)
	if r := a.activeIn(to.ChatID); r != nil {
		r.sent(id, m.Cause, m.Text)
	} else {
		a.log.Debug("runs message with no run in its chat", "chat", to.ChatID)
	}
	return adapters.Sent{MessageID: id}, nil
}

// Edit replaces the text of a message sent to a run still going (a
// streamed reply).
func (a *Adapter) Edit(ctx context.Context, to herald.Target, messageID, text string) error {
	if r := a.activeIn(to.ChatID); r != nil {
		r.edited(messageID, text)
	}
	return nil
}

// Following reports whether a run is going on: hook points matter to
// the adapter only then, so a feed may skip encoding them otherwise.
func (a *Adapter) Following() bool { return a.active.Load() > 0 }

func (a *Adapter) activeIn(chat string) *run {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.byChat[chat]
}

// hookKeys is what a hook point's context says of where it belongs and
// what the run's own events take from it.
type hookKeys struct {
	Platform   string `json:"platform"`
	ChatID     string `json:"chat_id"`
	SessionID  string `json:"session_id"`
	SessionKey string `json:"session_key"`
	// pre_gateway_dispatch: {"event": message}
	Event *struct {
		Source herald.Source `json:"source"`
	} `json:"event"`

	ToolName    string `json:"tool_name"`
	ToolCallID  string `json:"tool_call_id"`
	DurationMS  int64  `json:"duration_ms"`
	Command     string `json:"command"`
	Description string `json:"description"`
	Choice      string `json:"choice"`
	Failed      bool   `json:"failed"`
	Error       string `json:"error"`
}

// hookPoint is Config.Events' callback: it finds the run a hook point
// belongs to and logs it there.
func (a *Adapter) hookPoint(hp HookPoint) {
	var k hookKeys
	if len(hp.Context) > 0 {
		// a key of another type is left out; the others are read
		var te *json.UnmarshalTypeError
		if err := json.Unmarshal(hp.Context, &k); err != nil && !errors.As(err, &te) {
			return
		}
	} else {
		hp.Context = json.RawMessage("{}")
	}
	r := a.runOf(hp.Name, &k)
	if r == nil {
		return
	}
	r.hookPoint(hp, &k)
}

// runOf is the active run a hook point belongs to, by its chat, its
// session or its session key; it learns a run's session id from the
// points that tie it to the chat (session:start, agent:start).
func (a *Adapter) runOf(name string, k *hookKeys) *run {
	a.mu.Lock()
	defer a.mu.Unlock()
	var r *run
	switch {
	case k.Platform == string(Platform) && k.ChatID != "":
		r = a.byChat[k.ChatID]
	case k.Event != nil && k.Event.Source.Platform == Platform:
		r = a.byChat[k.Event.Source.ChatID]
	}
	if r == nil && k.SessionKey != "" {
		r = a.byKey[k.SessionKey]
	}
	if r == nil && k.SessionID != "" {
		r = a.bySession[k.SessionID]
	}
	if r != nil && k.SessionID != "" && (name == "session:start" || name == "agent:start") {
		a.bySession[k.SessionID] = r
		r.setSession(k.SessionID)
	}
	return r
}

// ended takes a finished run out of the indexes of active runs and
// applies the retention bounds.
func (a *Adapter) ended(r *run) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.endedLocked(r)
}

// endedLocked is ended with a.mu held.
func (a *Adapter) endedLocked(r *run) {
	if a.byChat[r.src.ChatID] == r {
		delete(a.byChat, r.src.ChatID)
		a.active.Add(-1)
	}
	for id, x := range a.bySession {
		if x == r {
			delete(a.bySession, id)
		}
	}
	if a.byKey[r.key] == r {
		delete(a.byKey, r.key)
	}
	a.pruneLocked()
}

// pruneLocked forgets finished runs past Keep, beyond MaxRuns, and, the
// oldest first, while their logs together pass MaxTotalLog.
func (a *Adapter) pruneLocked() {
	now := a.cfg.Now()
	var done []*run
	total := 0
	for id, r := range a.runs {
		fin, size, ok := r.finishedInfo()
		if !ok {
			continue
		}
		if now.Sub(fin) > a.cfg.Keep {
			delete(a.runs, id)
			continue
		}
		done = append(done, r)
		total += size
	}
	if len(done) <= a.cfg.MaxRuns && total <= a.cfg.MaxTotalLog {
		return
	}
	sortByFinish(done)
	for i := 0; i < len(done) && (len(done)-i > a.cfg.MaxRuns || total > a.cfg.MaxTotalLog); i++ {
		_, size, _ := done[i].finishedInfo()
		total -= size
		delete(a.runs, done[i].id)
	}
}

func newRunID() string {
	return "run_" + strings.ToLower(rand.Text())
}
