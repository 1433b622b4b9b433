package local

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Config configures the local platform.
type Config struct {
	Listen           string
	Token            string
	AllowedHosts     []string
	MaxMessageLength int
	// Events subscribes fn to every hook point; it returns an unsubscribe
	// function. Nil disables /v1/events.
	Events func(fn func(name string, payload any)) (unsubscribe func())
	// Health reports every platform's state for /healthz, and the state
	// store's under "store" ("ok" or "failed: …").
	Health func() map[string]string
	// OnListen is called with the bound address once listening.
	OnListen func(addr string)
	Log      *slog.Logger
}

// Adapter is the local platform.
type Adapter struct {
	cfg  Config
	log  *slog.Logger
	seq  atomic.Int64
	addr atomic.Value // string

	mu      sync.Mutex
	waiters map[string]*waiter // inbound message id → replies collector
	state   atomic.Value       // string
	extra   map[string]http.HandlerFunc
}

type waiter struct {
	mu      sync.Mutex
	replies []Reply
}

// Reply is one message the gateway sent.
type Reply struct {
	Text string `json:"text"`
}

var (
	_ adapters.Adapter  = (*Adapter)(nil)
	_ adapters.Healther = (*Adapter)(nil)
)

// New returns the local adapter.
func New(cfg Config) *Adapter {
	a := &Adapter{cfg: cfg, log: cfg.Log, waiters: map[string]*waiter{}, extra: map[string]http.HandlerFunc{}}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.state.Store("connecting")
	// generated message ids must not repeat after a restart: the gateway
	// keeps the ids it has seen (its inbound journal) and skips repeats
	a.seq.Store(time.Now().UnixNano())
	return a
}

func (a *Adapter) Platform() herald.Platform { return herald.PlatformLocal }

func (a *Adapter) Limits() adapters.Limits {
	return adapters.Limits{MaxLength: a.cfg.MaxMessageLength}
}

func (a *Adapter) Health() string { return a.state.Load().(string) }

// Addr is the address the API listens on ("" before Run binds it).
func (a *Adapter) Addr() string {
	s, _ := a.addr.Load().(string)
	return s
}

// Run serves the API until ctx ends.
func (a *Adapter) Run(ctx context.Context, sink adapters.Sink) error {
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		a.state.Store("failed: " + err.Error())
		return &adapters.FatalError{Msg: fmt.Sprintf("local: cannot listen on %s (set platforms.local.listen or HERALD_LOCAL_LISTEN)", a.cfg.Listen), Err: err}
	}
	a.addr.Store(ln.Addr().String())
	a.state.Store("connected")
	if a.cfg.OnListen != nil {
		a.cfg.OnListen(ln.Addr().String())
	}
	srv := &http.Server{Handler: a.Handler(sink), ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		a.state.Store("stopped")
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		a.state.Store("failed: " + err.Error())
		return err
	}
}

// Handle adds an authenticated endpoint (a pattern such as
// "POST /v1/cron/run") served with the API. Call it before Run.
func (a *Adapter) Handle(pattern string, h http.HandlerFunc) {
	a.mu.Lock()
	a.extra[pattern] = h
	a.mu.Unlock()
}

// Handler returns the HTTP handler (exported for tests that serve it on
// their own listener).
func (a *Adapter) Handler(sink adapters.Sink) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", a.auth(func(w http.ResponseWriter, r *http.Request) { a.postMessage(w, r, sink) }))
	mux.HandleFunc("GET /v1/events", a.auth(a.events))
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.HandleFunc("GET /{$}", a.page)
	a.mu.Lock()
	for p, h := range a.extra {
		mux.HandleFunc(p, a.auth(h))
	}
	a.mu.Unlock()
	mux.HandleFunc("/v1/", a.auth(func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	}))
	return a.hostCheck(mux)
}

func (a *Adapter) hostCheck(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.hostAllowed(r.Host) {
			writeErr(w, http.StatusForbidden, "host "+strconv.Quote(r.Host)+" is not allowed (add it to platforms.local.allowed_hosts)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *Adapter) hostAllowed(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(strings.ToLower(h), "[]")
	switch h {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return true
	}
	if strings.HasSuffix(h, ".localhost") {
		return true
	}
	for _, allowed := range a.cfg.AllowedHosts {
		if strings.EqualFold(allowed, h) || strings.EqualFold(allowed, host) {
			return true
		}
	}
	return false
}

func (a *Adapter) auth(next http.HandlerFunc) http.HandlerFunc {
	want := []byte("Bearer " + a.cfg.Token)
	return func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if a.cfg.Token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="herald"`)
			writeErr(w, http.StatusUnauthorized, "missing or wrong bearer token (see local.token in the herald home)")
			return
		}
		next(w, r)
	}
}

// MaxBody is the largest request body accepted.
const MaxBody = 1 << 20

type inbound struct {
	ChatID    string `json:"chat_id"`
	UserID    string `json:"user_id"`
	UserName  string `json:"user_name"`
	ChatType  string `json:"chat_type"`
	ThreadID  string `json:"thread_id"`
	Text      string `json:"text"`
	MessageID string `json:"message_id"`
	Mentioned *bool  `json:"mentioned"`
}

type response struct {
	SessionID string  `json:"session_id"`
	Status    string  `json:"status"`
	Replies   []Reply `json:"replies"`
	MessageID string  `json:"message_id"`
}

func (a *Adapter) postMessage(w http.ResponseWriter, r *http.Request, sink adapters.Sink) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is over %d bytes", MaxBody))
			return
		}
		writeErr(w, http.StatusBadRequest, "reading body: "+err.Error())
		return
	}
	var in inbound
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if err := dec.Decode(&in); err != nil {
		writeErr(w, http.StatusBadRequest, "body is not valid JSON: "+err.Error())
		return
	}
	if in.ChatID == "" {
		writeErr(w, http.StatusBadRequest, `"chat_id" is required`)
		return
	}
	switch in.ChatType {
	case "":
		in.ChatType = string(herald.ChatDM)
	case "dm", "group", "channel", "thread", "forum":
	default:
		writeErr(w, http.StatusBadRequest, `"chat_type" must be one of dm, group, channel, thread, forum`)
		return
	}
	wait := 60 * time.Second
	if s := r.URL.Query().Get("wait"); s != "" {
		secs, err := strconv.ParseFloat(s, 64)
		if err != nil || secs < 0 {
			writeErr(w, http.StatusBadRequest, "wait must be a number of seconds")
			return
		}
		wait = time.Duration(secs * float64(time.Second))
	}
	id := in.MessageID
	if id == "" {
		id = "m" + strconv.FormatInt(a.seq.Add(1), 10)
	}
	msg := herald.Message{
		ID: id, Text: in.Text, Received: time.Now(),
		Source: herald.Source{Platform: herald.PlatformLocal, ChatID: in.ChatID, ChatType: herald.ChatType(in.ChatType), UserID: in.UserID, UserName: in.UserName, ThreadID: in.ThreadID},
	}
	if in.Mentioned != nil {
		msg.Mentioned = *in.Mentioned
	} else {
		msg.Mentioned = true
	}
	wt := &waiter{}
	a.mu.Lock()
	a.waiters[id] = wt
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.waiters, id)
		a.mu.Unlock()
	}()

	rec := sink.Receive(r.Context(), msg)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	status := http.StatusOK
	var out response
	select {
	case <-rec.Done():
		o := rec.Outcome()
		out.Status, out.SessionID = o.Status, o.SessionID
	case <-timer.C:
		status = http.StatusAccepted
		out.Status = adapters.StatusPending
	case <-r.Context().Done():
		return
	}
	out.MessageID = id
	wt.mu.Lock()
	out.Replies = append([]Reply{}, wt.replies...)
	wt.mu.Unlock()
	writeJSON(w, status, out)
}

// Send records a reply for the request that caused it.
func (a *Adapter) Send(ctx context.Context, to herald.Target, m adapters.Outgoing) (adapters.Sent, error) {
	id := "r" + strconv.FormatInt(a.seq.Add(1), 10)
	a.mu.Lock()
	wt := a.waiters[m.Cause]
	a.mu.Unlock()
	if wt != nil {
		wt.mu.Lock()
		wt.replies = append(wt.replies, Reply{Text: m.Text})
		wt.mu.Unlock()
	}
	return adapters.Sent{MessageID: id}, nil
}

func (a *Adapter) events(w http.ResponseWriter, r *http.Request) {
	if a.cfg.Events == nil {
		writeErr(w, http.StatusNotFound, "events are not available")
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeErr(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	type frame struct {
		name string
		data []byte
	}
	ch := make(chan frame, 4096)
	var dropped atomic.Int64
	unsub := a.cfg.Events(func(name string, payload any) {
		ctxJSON, err := json.Marshal(payload)
		if err != nil || payload == nil {
			ctxJSON = []byte("{}")
		}
		data, _ := json.Marshal(struct {
			EventType string          `json:"event_type"`
			Context   json.RawMessage `json:"context"`
		}{name, ctxJSON})
		select {
		case ch <- frame{name, data}:
		default:
			dropped.Add(1)
		}
	})
	defer unsub()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": herald events\n\n")
	fl.Flush()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			if n := dropped.Swap(0); n > 0 {
				fmt.Fprintf(w, ": %d events dropped (client too slow)\n\n", n)
			} else {
				fmt.Fprint(w, ": keep-alive\n\n")
			}
			fl.Flush()
		case f := <-ch:
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", f.name, f.data)
			// write whatever else is already waiting before flushing
			for more := true; more; {
				select {
				case f := <-ch:
					fmt.Fprintf(w, "event: %s\ndata: %s\n\n", f.name, f.data)
				default:
					more = false
				}
			}
			fl.Flush()
		}
	}
}

// healthz answers 200 with status "ok", or "degraded" when a platform
// failed for good; and 503 with status "failing" when the state store
// fails (Health reports it under "store"), since then no message can be
// kept.
func (a *Adapter) healthz(w http.ResponseWriter, r *http.Request) {
	platforms := map[string]string{"local": a.Health()}
	if a.cfg.Health != nil {
		platforms = maps.Clone(a.cfg.Health())
	}
	body := map[string]any{"platforms": platforms}
	store, hasStore := platforms["store"]
	if hasStore {
		delete(platforms, "store")
		body["store"] = store
	}
	status, code := "ok", http.StatusOK
	for _, s := range platforms {
		if strings.HasPrefix(s, "failed") {
			status = "degraded"
		}
	}
	if strings.HasPrefix(store, "failed") {
		status, code = "failing", http.StatusServiceUnavailable
	}
	body["status"] = status
	writeJSON(w, code, body)
}

//go:embed page.html
var pageHTML []byte

func (a *Adapter) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'")
	w.Write(pageHTML)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
