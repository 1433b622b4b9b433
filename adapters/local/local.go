package local

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
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
	// EventNames, if set, names the events beyond the catalogue's that
	// /v1/events may carry (the commands plugins registered:
	// "command:weather"). POST /v1/events/ticket returns them, since a
	// browser's EventSource delivers a named event only to a listener of
	// that name.
	EventNames func() []string
	// Health reports every platform's state for /healthz, and the state
	// store's under "store" ("ok" or "failed: …").
	Health func() map[string]string
	// Delivery reports the gateway's delivery counters for /healthz; nil
	// leaves them out.
	Delivery func() Delivery
	// Replica reports, for /healthz, the replica's id and, when
	// replicas coordinate, cron leadership and chat leases; nil, or a nil
	// result, leaves them out.
	Replica func() any
	// OnListen is called with the bound address once listening.
	OnListen func(addr string)
	// Limits bound each client of the API (zero fields: the shared
	// defaults, adapters.DefaultHTTPLimits).
	Limits adapters.HTTPLimits
	// EventBuffer is how many bytes of events one /v1/events client may
	// fall behind by before it is dropped (default DefaultEventBuffer).
	EventBuffer int
	// MaxUpload bounds the decoded bytes of one message's attachments
	// (default DefaultMaxUpload); the request body may be that much in
	// base64 on top of MaxBody.
	MaxUpload int64
	// FilesDir is where files the gateway sends are kept for GET
	// /v1/files/{id}; "" refuses them.
	FilesDir string
	// MaxFileSize bounds a file the gateway sends (default
	// DefaultMaxFileSize).
	MaxFileSize int64
	// Outbox keeps every message sent to a chat for GET
	// /v1/chats/{chat_id}/messages; nil keeps none (replies then reach
	// only the request that caused them).
	Outbox Outbox
	Log    *slog.Logger
}

// Adapter is the local platform.
type Adapter struct {
	cfg  Config
	log  *slog.Logger
	seq  atomic.Int64
	addr atomic.Value // string

	mu      sync.Mutex
	replies adapters.Replies[Reply]  // inbound message id → replies collector
	readers map[string]chan struct{} // chat → closed at its next outbox message
	state   atomic.Value             // string
	extra   map[string]http.HandlerFunc
	// denied answers a request without the token on an extra endpoint
	// that has its own error shape (HandleAPI)
	denied map[string]func(w http.ResponseWriter, msg string)

	hub     *eventHub
	tickets tickets

	media mediaStore
}

// Reply is one message the gateway sent: text, or a file with its
// caption as text.
type Reply struct {
	// ID is the message's id in the chat's outbox (GET
	// /v1/chats/{chat_id}/messages).
	ID   string   `json:"id,omitempty"`
	Text string   `json:"text"`
	File *FileRef `json:"file,omitempty"`
	// Buttons are the choices under the message (an approval prompt's);
	// a press is POST /v1/chats/{chat_id}/press.
	Buttons []Button `json:"buttons,omitempty"`

	// sent is the id Send returned for it (an outbox id, or one made up
	// when there is no outbox): Edit finds the reply by it
	sent string
}

var (
	_ adapters.Adapter      = (*Adapter)(nil)
	_ adapters.Healther     = (*Adapter)(nil)
	_ adapters.ButtonSender = (*Adapter)(nil)
	_ adapters.Editor       = (*Adapter)(nil)
)

// New returns the local adapter.
func New(cfg Config) *Adapter {
	a := &Adapter{cfg: cfg, log: cfg.Log, readers: map[string]chan struct{}{}, extra: map[string]http.HandlerFunc{}, denied: map[string]func(http.ResponseWriter, string){}}
	a.hub = newEventHub(cfg.Events, cfg.EventBuffer)
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
	limits := a.cfg.Limits
	if limits.MaxBody <= 0 {
		limits.MaxBody = a.bodyLimit()
	}
	if err := adapters.ServeHTTP(ctx, ln, a.Handler(sink), limits, 2*time.Second); err != nil {
		a.state.Store("failed: " + err.Error())
		return err
	}
	a.state.Store("stopped")
	return nil
}

// Handle adds an authenticated endpoint (a pattern such as
// "POST /v1/cron/run") served with the API. Call it before Run.
func (a *Adapter) Handle(pattern string, h http.HandlerFunc) {
	a.mu.Lock()
	a.extra[pattern] = h
	a.mu.Unlock()
}

// HandleAPI is Handle for an endpoint with an error shape of its own
// (the OpenAI-compatible API): a request without the token is answered
// 401 by denied, with herald's sentence as msg.
func (a *Adapter) HandleAPI(pattern string, h http.HandlerFunc, denied func(w http.ResponseWriter, msg string)) {
	a.mu.Lock()
	a.extra[pattern] = h
	a.denied[pattern] = denied
	a.mu.Unlock()
}

// Handler returns the HTTP handler (exported for tests that serve it on
// their own listener).
func (a *Adapter) Handler(sink adapters.Sink) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", a.auth(func(w http.ResponseWriter, r *http.Request) { a.postMessage(w, r, sink) }))
	mux.HandleFunc("GET /v1/events", a.authOrTicket(a.hub.serve))
	mux.HandleFunc("POST /v1/events/ticket", a.auth(a.issueTicket))
	mux.HandleFunc("POST /v1/chats/{chat_id}/press", a.auth(func(w http.ResponseWriter, r *http.Request) { a.press(w, r, sink) }))
	mux.HandleFunc("GET /v1/files/{id}", a.auth(a.getFile))
	mux.HandleFunc("GET /v1/chats/{chat_id}/messages", a.auth(a.getMessages))
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.HandleFunc("GET /{$}", a.page)
	mux.HandleFunc("GET /console/{file}", a.consoleFile)
	a.mu.Lock()
	for p, h := range a.extra {
		if denied := a.denied[p]; denied != nil {
			mux.HandleFunc(p, a.authWith(h, denied))
			continue
		}
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
	return a.authWith(next, func(w http.ResponseWriter, msg string) { writeErr(w, http.StatusUnauthorized, msg) })
}

// authWith lets requests with the bearer token through to next; denied
// answers the others (with status 401).
func (a *Adapter) authWith(next http.HandlerFunc, denied func(w http.ResponseWriter, msg string)) http.HandlerFunc {
	want := []byte("Bearer " + a.cfg.Token)
	return func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if a.cfg.Token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="herald"`)
			denied(w, "missing or wrong bearer token (see local.token in the herald home)")
			return
		}
		next(w, r)
	}
}

// MaxBody is the largest request body accepted.
const MaxBody = 1 << 20

// MaxIDLength bounds chat_id, user_id, thread_id and message_id, in bytes.
const MaxIDLength = 256

// MaxWait bounds ?wait=, in seconds: a longer wait is cut to it.
const MaxWait = 600

type inbound struct {
	ChatID    string `json:"chat_id"`
	UserID    string `json:"user_id"`
	UserName  string `json:"user_name"`
	ChatType  string `json:"chat_type"`
	ThreadID  string `json:"thread_id"`
	Text      string `json:"text"`
	MessageID string `json:"message_id"`
	Mentioned *bool  `json:"mentioned"`
	// Media are attachments, their bytes in base64.
	Media []inMedia `json:"media"`
}

type response struct {
	SessionID string  `json:"session_id"`
	Status    string  `json:"status"`
	Replies   []Reply `json:"replies"`
	MessageID string  `json:"message_id"`
}

func (a *Adapter) postMessage(w http.ResponseWriter, r *http.Request, sink adapters.Sink) {
	limit := a.bodyLimit()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is over %d bytes (attachments may hold %d bytes before base64)", limit, a.maxUpload()))
			return
		}
		writeErr(w, http.StatusBadRequest, "reading body: "+err.Error())
		return
	}
	in, err := decodeInbound(body)
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	// only attachments may take the body over MaxBody
	rest := len(body)
	for _, m := range in.Media {
		rest -= len(m.Data)
	}
	if rest > MaxBody {
		writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is over %d bytes without its attachments", MaxBody))
		return
	}
	wait, err := parseWait(r.URL.Query().Get("wait"))
	if err != nil {
		writeErr(w, http.StatusBadRequest, err.Error())
		return
	}
	id := in.MessageID
	if id == "" {
		id = newMessageID()
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
	if msg.Media, err = a.takeMedia(in.Media); err != nil {
		var ue *errUpload
		errors.As(err, &ue)
		writeErr(w, ue.status, ue.msg)
		return
	}
	wt, ok := a.await(id, in.ChatID)
	if !ok {
		writeErr(w, http.StatusConflict, "message_id "+strconv.Quote(id)+" is already in flight for another chat")
		return
	}
	defer a.release(id, wt)

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
	out.Replies = wt.Got()
	adapters.WriteJSON(w, status, out)
}

// decodeInbound reads a /v1/messages body: one JSON object and nothing
// after it, with a chat_id, a known chat_type and ids of at most
// MaxIDLength bytes.
func decodeInbound(body []byte) (inbound, error) {
	var in inbound
	if err := decodeOne(body, &in); err != nil {
		return in, err
	}
	if in.ChatID == "" {
		return in, errors.New(`"chat_id" is required`)
	}
	for _, f := range []struct{ name, v string }{{"chat_id", in.ChatID}, {"user_id", in.UserID}, {"thread_id", in.ThreadID}, {"message_id", in.MessageID}} {
		if len(f.v) > MaxIDLength {
			return in, fmt.Errorf("%q is %d bytes long; at most %d are allowed", f.name, len(f.v), MaxIDLength)
		}
	}
	switch in.ChatType {
	case "":
		in.ChatType = string(herald.ChatDM)
	case "dm", "group", "channel", "thread", "forum":
	default:
		return in, errors.New(`"chat_type" must be one of dm, group, channel, thread, forum`)
	}
	return in, nil
}

// decodeOne reads a request body that must be one JSON value and
// nothing after it into v.
func decodeOne(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body is not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("body has data after its JSON object (send one object per request)")
	}
	return nil
}

// parseWait reads ?wait= (seconds, default 60, cut to MaxWait).
func parseWait(s string) (time.Duration, error) {
	if s == "" {
		return 60 * time.Second, nil
	}
	secs, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("wait=%q is not a number of seconds", s)
	case math.IsNaN(secs) || math.IsInf(secs, 0):
		return 0, fmt.Errorf("wait=%q is not a finite number of seconds", s)
	case secs < 0:
		return 0, fmt.Errorf("wait=%q is negative", s)
	}
	return time.Duration(min(secs, MaxWait) * float64(time.Second)), nil
}

// newMessageID names a message that came without an id. It is random so
// that no client can guess another's id and collect its replies.
func newMessageID() string {
	return "m" + rand.Text()
}

// await registers a request waiting for the replies to message id from
// chat (adapters.Replies.Await).
func (a *Adapter) await(id, chat string) (*adapters.Waiter[Reply], bool) {
	return a.replies.Await(id, chat)
}

func (a *Adapter) release(id string, wt *adapters.Waiter[Reply]) {
	a.replies.Release(id, wt)
}

// Send stores the message in the chat's outbox, and hands it to the
// request that caused it if that request came from the chat and still
// waits. It fails, and the message counts as not sent, if it cannot be
// stored.
func (a *Adapter) Send(ctx context.Context, to herald.Target, m adapters.Outgoing) (adapters.Sent, error) {
	rp := Reply{Text: m.Text, Buttons: wireButtons(m.Buttons)}
	id, err := a.keep(ctx, to, rp)
	if err != nil {
		return adapters.Sent{}, err
	}
	if id == "" {
		id = "r" + strconv.FormatInt(a.seq.Add(1), 10)
	} else {
		rp.ID = id
	}
	rp.sent = id
	a.deliver(to, m.Cause, rp)
	return adapters.Sent{MessageID: id}, nil
}

// deliver hands a reply to the request that caused it, if that request
// came from the chat the reply goes to.
func (a *Adapter) deliver(to herald.Target, cause string, rp Reply) {
	a.replies.Deliver(to.ChatID, cause, rp)
}

// Delivery is what /healthz says of delivery.
type Delivery struct {
	// MaybeSent counts sends that timed out after they were written and
	// were not repeated (delivered or not: unknown) since the start.
	MaybeSent int64 `json:"maybe_sent"`
	// Queued is how many messages wait in the outbound queue for a
	// platform's rate limit to pass.
	Queued int64 `json:"queued"`
}

// healthz answers 200 with status "ok", or "degraded" when a platform
// failed for good; and 503 with status "failing" when the state store
// fails (Health reports it under "store"), since then no message can be
// kept. Delivery's counters are reported as they are: a queue or a
// maybe-sent message does not change the status; so is the replica id.
func (a *Adapter) healthz(w http.ResponseWriter, r *http.Request) {
	platforms := map[string]string{"local": a.Health()}
	if a.cfg.Health != nil {
		platforms = maps.Clone(a.cfg.Health())
	}
	body := map[string]any{"platforms": platforms}
	if a.cfg.Delivery != nil {
		body["delivery"] = a.cfg.Delivery()
	}
	if a.cfg.Replica != nil {
		if rs := a.cfg.Replica(); rs != nil {
			body["replica"] = rs
		}
	}
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
	adapters.WriteJSON(w, code, body)
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	adapters.WriteJSON(w, status, map[string]string{"error": msg})
}
