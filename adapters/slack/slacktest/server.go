package slacktest

// server.go is the fake itself: the Web API under /api/ and the Socket Mode
// websocket under /ws, with the state tests inspect.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Defaults for the identities the fake answers with.
const (
	DefaultBotUserID = "UBOT0001"
	DefaultBotID     = "BBOT0001"
	DefaultTeamID    = "T0000001"
)

// Options configure a Server. The zero value accepts any token.
type Options struct {
	// BotToken and AppToken, when set, are the only tokens accepted
	// (anything else gets invalid_auth).
	BotToken, AppToken string
	// BotUserID, BotID and TeamID are what auth.test reports.
	BotUserID, BotID, TeamID string
	// PingInterval is how often the websocket sends a PING (default 5 s;
	// slack-go reconnects when none arrives for 30 s).
	PingInterval time.Duration
}

// Post is one chat.postMessage or chat.update the bot made.
type Post struct {
	Method   string // "chat.postMessage", "chat.postEphemeral", "chat.update" or "chat.delete"
	Channel  string
	User     string // the one user who sees it (chat.postEphemeral)
	ThreadTS string // thread_ts (postMessage)
	TS       string // the message's ts: new for a post, the edited one for an update
	Text     string
	// Blocks are the Block Kit blocks sent with it, nil for none.
	Blocks []Block
	// Mrkdwn is false when the bot sent mrkdwn=false.
	Mrkdwn bool
	At     time.Time
}

// Failure is what the next calls of a method answer instead of success.
type Failure struct {
	// Status is an HTTP status (429, 500, …); 0 means 200.
	Status int
	// RetryAfter is the Retry-After header in seconds (with Status 429).
	RetryAfter int
	// Error is Slack's {"ok":false,"error":…} code, e.g. "invalid_auth".
	Error string
}

// Ack is one envelope acknowledgement the bot sent.
type Ack struct {
	EnvelopeID string
	At         time.Time
}

type envelope struct {
	id       string
	kind     string // the frame's type; "" is events_api
	payload  json.RawMessage
	attempts int       // times sent
	sentOn   *wsConn   // the connection it was last sent on
	queued   bool      // in s.pending
	firstAt  time.Time // first sent
	ackedAt  time.Time
}

type wsConn struct {
	ws   *websocket.Conn
	wmu  sync.Mutex
	done chan struct{}
}

func (c *wsConn) writeJSON(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteJSON(v)
}

// Server is a fake Slack on 127.0.0.1.
type Server struct {
	opts Options
	http *httptest.Server
	wg   sync.WaitGroup // websocket handlers and their pingers

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every state change
	posts       []Post
	calls       map[string]int
	fails       map[string][]Failure
	envs        []*envelope
	byID        map[string]*envelope
	pending     []*envelope // waiting for a connection
	conns       []*wsConn
	connections int // websocket connections accepted so far
	acks        []Ack
	seq         int
	closed      bool
	files       map[string]*File
	fileReqs    []FileRequest
	uploading   map[string]*pendingUpload
	uploads     []Upload
	// conversations.go
	history       map[string][]Message
	statuses      []StatusCall
	reactions     map[string][]string // channel/ts → names
	reactionCalls []ReactionCall
	// interactive.go
	shown map[string]*Post // channel/ts → the bot's message as it shows now
}

// New starts a fake Slack. Close it when done.
func New(opts Options) *Server {
	if opts.BotUserID == "" {
		opts.BotUserID = DefaultBotUserID
	}
	if opts.BotID == "" {
		opts.BotID = DefaultBotID
	}
	if opts.TeamID == "" {
		opts.TeamID = DefaultTeamID
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = 5 * time.Second
	}
	s := &Server{
		opts: opts, changed: make(chan struct{}),
		calls: map[string]int{}, fails: map[string][]Failure{}, byID: map[string]*envelope{},
		files: map[string]*File{}, uploading: map[string]*pendingUpload{}, shown: map[string]*Post{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/ws", s.serveWS)
	mux.HandleFunc("/files-pri/", s.serveFile)
	mux.HandleFunc("/upload/v1/", s.serveUpload)
	mux.HandleFunc("/", s.serveRoot)
	s.http = httptest.NewServer(mux)
	return s
}

// URL is the server's base URL (http://127.0.0.1:port).
func (s *Server) URL() string { return s.http.URL }

// APIURL is the Web API base to give slack.OptionAPIURL (with its
// trailing slash).
func (s *Server) APIURL() string { return s.http.URL + "/api/" }

// BotUserID is the bot's user id, as auth.test reports it.
func (s *Server) BotUserID() string { return s.opts.BotUserID }

// Close drops every websocket and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.Close()
	}
	s.http.Close()
	s.wg.Wait()
}

// notify wakes waiters; call with s.mu held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// wait blocks until cond (called with s.mu held) is true or ctx ends.
func (s *Server) wait(ctx context.Context, what string, cond func() bool) error {
	for {
		s.mu.Lock()
		ok := cond()
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("slacktest: waiting for %s: %w", what, ctx.Err())
		case <-ch:
		}
	}
}

// nextTS returns a fresh, increasing message timestamp; call with s.mu
// held.
func (s *Server) nextTS() string {
	s.seq++
	return fmt.Sprintf("%d.%06d", 1700000000+s.seq, s.seq)
}

// --- Web API ---

type apiResp map[string]any

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	if err := r.ParseForm(); err != nil {
		writeJSON(w, 200, apiResp{"ok": false, "error": "invalid_form_data"})
		return
	}
	token := r.PostForm.Get("token")
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		token = strings.TrimPrefix(h, "Bearer ")
	}

	s.mu.Lock()
	s.calls[method]++
	var fail *Failure
	if q := s.fails[method]; len(q) > 0 {
		fail = &q[0]
		s.fails[method] = q[1:]
	}
	s.notify()
	s.mu.Unlock()

	if fail != nil {
		status := fail.Status
		if status == 0 {
			status = 200
		}
		if fail.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(fail.RetryAfter))
		}
		code := fail.Error
		if code == "" && status == http.StatusTooManyRequests {
			code = "ratelimited"
		}
		writeJSON(w, status, apiResp{"ok": false, "error": code})
		return
	}

	want := s.opts.BotToken
	if method == "apps.connections.open" {
		want = s.opts.AppToken
	}
	if token == "" {
		writeJSON(w, 200, apiResp{"ok": false, "error": "not_authed"})
		return
	}
	if want != "" && token != want {
		writeJSON(w, 200, apiResp{"ok": false, "error": "invalid_auth"})
		return
	}

	switch method {
	case "auth.test":
		writeJSON(w, 200, apiResp{"ok": true, "url": "https://fake.slack.test/", "team": "fake", "user": "herald",
			"team_id": s.opts.TeamID, "user_id": s.opts.BotUserID, "bot_id": s.opts.BotID})
	case "apps.connections.open":
		u := "ws" + strings.TrimPrefix(s.http.URL, "http") + "/ws"
		writeJSON(w, 200, apiResp{"ok": true, "url": u})
	case "chat.postMessage", "chat.update", "chat.postEphemeral":
		f := r.PostForm
		if method == "chat.postEphemeral" && f.Get("user") == "" {
			writeJSON(w, 200, apiResp{"ok": false, "error": "user_not_in_channel"})
			return
		}
		ch := f.Get("channel")
		if ch == "" {
			writeJSON(w, 200, apiResp{"ok": false, "error": "channel_not_found"})
			return
		}
		if f.Get("text") == "" && f.Get("blocks") == "" {
			writeJSON(w, 200, apiResp{"ok": false, "error": "no_text"})
			return
		}
		if len([]rune(f.Get("text"))) > 40000 {
			writeJSON(w, 200, apiResp{"ok": false, "error": "msg_too_long"})
			return
		}
		blocks, err := parseBlocks(f.Get("blocks"))
		if err != nil {
			writeJSON(w, 200, apiResp{"ok": false, "error": "invalid_blocks", "errors": []string{err.Error()}})
			return
		}
		p := Post{Method: method, Channel: ch, ThreadTS: f.Get("thread_ts"), Text: f.Get("text"), Blocks: blocks,
			Mrkdwn: f.Get("mrkdwn") != "false", User: f.Get("user"), At: time.Now()}
		s.mu.Lock()
		if method == "chat.update" {
			p.TS = f.Get("ts")
		} else {
			p.TS = s.nextTS()
		}
		s.posts = append(s.posts, p)
		s.showLocked(p, f.Has("blocks"))
		if method == "chat.postMessage" {
			s.recordLocked(Message{Channel: ch, TS: p.TS, ThreadTS: p.ThreadTS, User: s.opts.BotUserID, BotID: s.opts.BotID, Text: p.Text})
		}
		s.notify()
		s.mu.Unlock()
		msg := apiResp{"type": "message", "user": s.opts.BotUserID, "bot_id": s.opts.BotID, "text": p.Text, "ts": p.TS}
		if p.ThreadTS != "" {
			msg["thread_ts"] = p.ThreadTS
		}
		if method == "chat.postEphemeral" {
			// Slack answers an ephemeral post with its ts alone
			writeJSON(w, 200, apiResp{"ok": true, "message_ts": p.TS})
			return
		}
		writeJSON(w, 200, apiResp{"ok": true, "channel": ch, "ts": p.TS, "text": p.Text, "message": msg})
	case "conversations.replies":
		s.replies(w, r)
	case "assistant.threads.setStatus":
		s.setStatus(w, r)
	case "reactions.add", "reactions.remove":
		s.react(w, r, method)
	case "chat.delete":
		f := r.PostForm
		p := Post{Method: method, Channel: f.Get("channel"), TS: f.Get("ts"), At: time.Now()}
		s.mu.Lock()
		s.posts = append(s.posts, p)
		s.notify()
		s.mu.Unlock()
		writeJSON(w, 200, apiResp{"ok": true, "channel": p.Channel, "ts": p.TS})
	case "files.info":
		s.fileInfo(w, r)
	case "files.getUploadURLExternal":
		s.getUploadURL(w, r)
	case "files.completeUploadExternal":
		s.completeUpload(w, r)
	default:
		writeJSON(w, 200, apiResp{"ok": false, "error": "unknown_method"})
	}
}

// FailNext makes the next n calls of a Web API method ("chat.postMessage",
// "auth.test", "apps.connections.open", …) answer f.
func (s *Server) FailNext(method string, n int, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails[method] = append(s.fails[method], f)
	}
}

// RateLimitNext makes the next n chat.postMessage calls answer 429 with
// Retry-After: retryAfter seconds.
func (s *Server) RateLimitNext(n, retryAfter int) {
	s.FailNext("chat.postMessage", n, Failure{Status: http.StatusTooManyRequests, RetryAfter: retryAfter})
}

// Calls returns how many times a Web API method was called, failures
// included.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Posts returns what the bot posted and edited, in order.
func (s *Server) Posts() []Post {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Post(nil), s.posts...)
}

// WaitPosts waits until the bot has made at least n posts or edits and
// returns them all.
func (s *Server) WaitPosts(ctx context.Context, n int) ([]Post, error) {
	err := s.wait(ctx, fmt.Sprintf("%d posts", n), func() bool { return len(s.posts) >= n })
	return s.Posts(), err
}

// WaitMessages waits until the bot has posted at least n messages
// (chat.postMessage; edits not counted) and returns them.
func (s *Server) WaitMessages(ctx context.Context, n int) ([]Post, error) {
	count := func() []Post {
		var out []Post
		for _, p := range s.posts {
			if p.Method == "chat.postMessage" {
				out = append(out, p)
			}
		}
		return out
	}
	err := s.wait(ctx, fmt.Sprintf("%d messages", n), func() bool { return len(count()) >= n })
	s.mu.Lock()
	defer s.mu.Unlock()
	return count(), err
}

// --- Socket Mode ---

var upgrader = websocket.Upgrader{
	// slack-go dials with Origin: https://api.slack.com; gorilla's default
	// check would refuse it with 403 and the client would retry forever.
	CheckOrigin: func(*http.Request) bool { return true },
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &wsConn{ws: ws, done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ws.Close()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	defer ws.Close()

	hello := map[string]any{"type": "hello", "num_connections": 1,
		"connection_info": map[string]any{"app_id": "A0000001"},
		"debug_info":      map[string]any{"host": "slacktest", "approximate_connection_time": 3600}}
	if c.writeJSON(hello) != nil {
		return
	}

	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.opts.PingInterval)
		defer t.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-t.C:
				c.wmu.Lock()
				err := ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second))
				c.wmu.Unlock()
				if err != nil {
					return
				}
			}
		}
	}()
	defer close(c.done)

	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.connections++
	pending := s.pending
	s.pending = nil
	for _, e := range pending {
		e.queued = false
	}
	s.notify()
	s.mu.Unlock()
	for _, e := range pending {
		s.send(c, e)
	}

	defer func() {
		s.mu.Lock()
		for i, x := range s.conns {
			if x == c {
				s.conns = append(s.conns[:i], s.conns[i+1:]...)
				break
			}
		}
		// like Slack, re-send what this connection never acknowledged, on
		// another open connection or the next one
		for _, e := range s.envs {
			if e.sentOn == c && e.ackedAt.IsZero() && !s.closed {
				s.queue(e)
			}
		}
		var other *wsConn
		var resend []*envelope
		if n := len(s.conns); n > 0 && len(s.pending) > 0 {
			other, resend = s.conns[n-1], s.pending
			s.pending = nil
			for _, e := range resend {
				e.queued = false
			}
		}
		s.notify()
		s.mu.Unlock()
		for _, e := range resend {
			s.send(other, e)
		}
	}()
	for {
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := ws.ReadJSON(&ack); err != nil {
			return
		}
		s.mu.Lock()
		now := time.Now()
		s.acks = append(s.acks, Ack{EnvelopeID: ack.EnvelopeID, At: now})
		if e := s.byID[ack.EnvelopeID]; e != nil && e.ackedAt.IsZero() {
			e.ackedAt = now
		}
		s.notify()
		s.mu.Unlock()
	}
}

// send writes one envelope to c, or queues it again when that fails.
func (s *Server) send(c *wsConn, e *envelope) {
	s.mu.Lock()
	e.attempts++
	e.sentOn = c
	if e.firstAt.IsZero() {
		e.firstAt = time.Now()
	}
	kind := e.kind
	if kind == "" {
		kind = "events_api"
	}
	frame := map[string]any{"type": kind, "envelope_id": e.id, "payload": e.payload,
		"accepts_response_payload": kind == "slash_commands", "retry_attempt": e.attempts - 1}
	if e.attempts > 1 {
		frame["retry_reason"] = "timeout"
	}
	s.mu.Unlock()
	if err := c.writeJSON(frame); err != nil {
		s.mu.Lock()
		s.queue(e)
		s.mu.Unlock()
	}
}

// queue puts e in pending once; call with s.mu held.
func (s *Server) queue(e *envelope) {
	e.sentOn = nil
	if !e.queued {
		e.queued = true
		s.pending = append(s.pending, e)
	}
}

// deliver sends e on the newest connection, or queues it.
func (s *Server) deliver(e *envelope) {
	s.mu.Lock()
	var c *wsConn
	if n := len(s.conns); n > 0 {
		c = s.conns[n-1]
	} else {
		s.queue(e)
	}
	s.mu.Unlock()
	if c != nil {
		s.send(c, e)
	}
}

// Connections returns how many websocket connections the fake has
// accepted so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connections
}

// WaitConnected waits until the fake has accepted n connections in total
// and one of them is open.
func (s *Server) WaitConnected(ctx context.Context, n int) error {
	return s.wait(ctx, fmt.Sprintf("connection %d", n), func() bool { return s.connections >= n && len(s.conns) > 0 })
}

// Disconnect sends Slack's disconnect request on every open connection
// (the client is expected to open a new one).
func (s *Server) Disconnect(reason string) {
	s.mu.Lock()
	conns := append([]*wsConn(nil), s.conns...)
	s.mu.Unlock()
	for _, c := range conns {
		c.writeJSON(map[string]any{"type": "disconnect", "reason": reason, "debug_info": map[string]any{"host": "slacktest"}})
	}
}

// DropConnections closes every websocket abruptly, as a network failure
// would.
func (s *Server) DropConnections() {
	s.mu.Lock()
	conns := append([]*wsConn(nil), s.conns...)
	s.mu.Unlock()
	for _, c := range conns {
		if tc, ok := c.ws.NetConn().(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.ws.Close()
	}
}

// Acks returns every acknowledgement received, in order.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ack(nil), s.acks...)
}

// WaitAcked waits until the envelope has been acknowledged.
func (s *Server) WaitAcked(ctx context.Context, envelopeID string) error {
	return s.wait(ctx, "ack of "+envelopeID, func() bool {
		e := s.byID[envelopeID]
		return e != nil && !e.ackedAt.IsZero()
	})
}

// CheckAcks reports an error naming every injected envelope that was not
// acknowledged within d of being first sent (Slack allows 3 s). It waits
// for acks still inside their window.
func (s *Server) CheckAcks(d time.Duration) error {
	for {
		s.mu.Lock()
		var bad []string
		var next time.Time // the earliest deadline still open
		now := time.Now()
		for _, e := range s.envs {
			switch {
			case e.firstAt.IsZero():
				bad = append(bad, e.id+" (never sent: no connection)")
			case e.ackedAt.IsZero():
				if dl := e.firstAt.Add(d); dl.After(now) {
					if next.IsZero() || dl.Before(next) {
						next = dl
					}
				} else {
					bad = append(bad, e.id+" (not acked)")
				}
			case e.ackedAt.Sub(e.firstAt) > d:
				bad = append(bad, fmt.Sprintf("%s (acked after %s)", e.id, e.ackedAt.Sub(e.firstAt)))
			}
		}
		ch := s.changed
		s.mu.Unlock()
		if next.IsZero() {
			if len(bad) > 0 {
				return fmt.Errorf("slacktest: envelopes not acked within %s: %s", d, strings.Join(bad, ", "))
			}
			return nil
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}
