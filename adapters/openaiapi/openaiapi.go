package openaiapi

// openaiapi.go: the adapter (platform "api"): its configuration, its
// endpoints, Send and Edit handing what the gateway sends to the request
// that caused it, and the hook points that tell a request its turn's
// session, usage and end.

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// DefaultModel is the model name every client may ask for.
const DefaultModel = "herald"

// Store is what the API keeps in the state store.
type Store interface {
	// SessionSource returns where a stored session's messages come from
	// (found false when no session has that id).
	SessionSource(ctx context.Context, id string) (src herald.Source, found bool, err error)
	KV(ctx context.Context, key string) (string, bool, error)
	SetKV(ctx context.Context, key, value string) error
	DeleteKV(ctx context.Context, keys ...string) error
}

// Config configures the API.
type Config struct {
	// Model is the configured model's name, listed as an alias of
	// "herald" ("" lists "herald" alone).
	Model string
	// Transcript seeds a stateless request's session with its earlier
	// messages.
	Transcript herald.TranscriptAppender
	Store      Store
	// Observe subscribes fn to what the gateway's hook points say of
	// turns on platform api (in the order they happened): a streamed
	// answer learns its session from a turn's start before its headers
	// are sent, and an answer's usage is the sum of its model calls'.
	// Nil: a streamed answer of a new chat goes without the header, and
	// usage is 0.
	Observe func(fn func(TurnEvent)) (unsubscribe func())
	Log     *slog.Logger
	Now     func() time.Time
}

// TurnEvent is one hook point of a turn on platform api.
type TurnEvent struct {
	// Kind is TurnStarted (agent:start), TurnUsage (post_api_request) or
	// TurnEnded (agent:end).
	Kind      string
	ChatID    string // TurnStarted
	SessionID string
	// Usage of one model call (TurnUsage).
	PromptTokens, CompletionTokens int
}

// TurnEvent kinds.
const (
	TurnStarted = "started"
	TurnUsage   = "usage"
	TurnEnded   = "ended"
)

// Router is where the API's endpoints are served: the local platform's
// listener (local.Adapter), whose token guards them.
type Router interface {
	HandleAPI(pattern string, h http.HandlerFunc, denied func(w http.ResponseWriter, msg string))
}

// Adapter is the API's platform.
type Adapter struct {
	cfg Config
	log *slog.Logger
	seq atomic.Int64

	sink adapters.HeldSink

	replies adapters.Replies[sentText]

	mu sync.Mutex
	// sent maps a message id Send returned to the request it went to,
	// so that Edit finds it; an entry lives as long as its request
	sent map[string]sentTo
	// busy holds a channel per chat with a request in flight; the next
	// request on that chat waits for it to close
	busy map[string]chan struct{}
	// starting are the requests whose turn has not started, by chat;
	// running those whose turn runs, by session (turn events find them)
	starting map[string]*turn
	running  map[string]*turn
	// awaiting are sessions whose turn waits for an approval, with their
	// chat: a new session is stored only when its first turn ends, so
	// the request answering the approval finds it here
	awaiting map[string]herald.Source
}

// maxAwaiting bounds Adapter.awaiting (an approval prompt times out in
// minutes; an entry left behind is only a lookup).
const maxAwaiting = 1024

// sentText is a message sent (or edited) in answer to a request: its id
// and its whole text now.
type sentText struct {
	id, text string
}

type sentTo struct {
	chat, cause string
}

var (
	_ adapters.Adapter  = (*Adapter)(nil)
	_ adapters.Editor   = (*Adapter)(nil)
	_ adapters.Healther = (*Adapter)(nil)
)

// New returns the API adapter; Register serves its endpoints.
func New(cfg Config) *Adapter {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Adapter{cfg: cfg, log: cfg.Log,
		sent: map[string]sentTo{}, busy: map[string]chan struct{}{}, starting: map[string]*turn{}, running: map[string]*turn{}, awaiting: map[string]herald.Source{}}
	a.seq.Store(time.Now().UnixNano())
	return a
}

// Register serves the API's endpoints on rt. Call it before rt serves.
func (a *Adapter) Register(rt Router) {
	rt.HandleAPI("GET /v1/models", a.models, denied)
	rt.HandleAPI("GET /v1/models/{id}", a.model, denied)
	rt.HandleAPI("POST /v1/chat/completions", a.chatCompletions, denied)
	rt.HandleAPI("POST /v1/responses", a.createResponse, denied)
	rt.HandleAPI("GET /v1/responses/{id}", a.getResponse, denied)
	rt.HandleAPI("DELETE /v1/responses/{id}", a.deleteResponse, denied)
}

func denied(w http.ResponseWriter, msg string) {
	writeError(w, http.StatusUnauthorized, apiError{Message: msg, Type: "invalid_request_error", Code: "invalid_api_key"})
}

func (a *Adapter) Platform() herald.Platform { return herald.PlatformAPI }

// Limits: an answer is one message of any length.
func (a *Adapter) Limits() adapters.Limits { return adapters.Limits{} }

// Health is "connected" while Run holds the gateway's Sink (the
// endpoints are served by the local platform's listener).
func (a *Adapter) Health() string { return a.sink.Health() }

// Run takes the gateway's Sink and holds it until ctx ends.
func (a *Adapter) Run(ctx context.Context, sink adapters.Sink) error {
	a.sink.Hold(sink)
	a.sink.SetServing(true)
	defer a.sink.SetServing(false)
	var unsubscribe func()
	if a.cfg.Observe != nil {
		unsubscribe = a.cfg.Observe(a.observe)
	}
	<-ctx.Done()
	if unsubscribe != nil {
		unsubscribe()
	}
	return nil
}

// Send hands a message to the request that caused it.
func (a *Adapter) Send(ctx context.Context, to herald.Target, m adapters.Outgoing) (adapters.Sent, error) {
	id := "r" + strconv.FormatInt(a.seq.Add(1), 10)
	a.mu.Lock()
	a.sent[id] = sentTo{chat: to.ChatID, cause: m.Cause}
	a.mu.Unlock()
	if !a.replies.Deliver(to.ChatID, m.Cause, sentText{id: id, text: m.Text}) {
		// no request waits for it (a notice sent on its own)
		a.mu.Lock()
		delete(a.sent, id)
		a.mu.Unlock()
		a.log.Debug("api message with no request waiting for it", "chat", to.ChatID)
	}
	return adapters.Sent{MessageID: id}, nil
}

// Edit replaces the text of a message sent to a request still running: a
// streamed answer gets the new text as a delta.
func (a *Adapter) Edit(ctx context.Context, to herald.Target, messageID, text string) error {
	a.mu.Lock()
	ref, ok := a.sent[messageID]
	a.mu.Unlock()
	if ok && ref.chat == to.ChatID {
		a.replies.Deliver(ref.chat, ref.cause, sentText{id: messageID, text: text})
	}
	return nil
}

// observe is Config.Observe's callback: it hands a turn's session, its
// usage and its end to the request it answers.
func (a *Adapter) observe(ev TurnEvent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch ev.Kind {
	case TurnStarted:
		t := a.starting[ev.ChatID]
		if t == nil {
			return
		}
		delete(a.starting, ev.ChatID)
		a.running[ev.SessionID] = t
		t.started <- ev.SessionID // buffered 1, sent once
	case TurnUsage:
		if t := a.running[ev.SessionID]; t != nil {
			t.usage.PromptTokens += ev.PromptTokens
			t.usage.CompletionTokens += ev.CompletionTokens
			t.usage.TotalTokens += ev.PromptTokens + ev.CompletionTokens
		}
	case TurnEnded:
		if t := a.running[ev.SessionID]; t != nil {
			delete(a.running, ev.SessionID)
			close(t.ended)
		}
	}
}
