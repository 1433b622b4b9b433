package discordtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
)

// MaxContent is Discord's limit on a message's content, in characters.
const MaxContent = 2000

// Bot identity the fake reports for /users/@me and READY.
const (
	BotID   = "900000000000000001"
	BotName = "herald"
	// AppID is the bot's application, as READY's application.id gives
	// it; it differs from BotID so that a client mixing them up fails.
	AppID = "900000000000000007"
)

// Message is one message the bot sent.
type Message struct {
	ID        string
	ChannelID string
	Content   string
	// ReplyTo is message_reference.message_id, if any.
	ReplyTo string
	// AllowedMentions is the allowed_mentions object as sent (nil when
	// absent).
	AllowedMentions json.RawMessage
	// Body is the request's JSON (payload_json for an upload).
	Body json.RawMessage
	// Files are the uploaded files, in order.
	Files []File
	// Attachments describe Files as the fake answered them.
	Attachments []*discordgo.MessageAttachment
	// Components are the message's components as the bot last set them
	// (nil when it never sent any; "[]" once an edit removed them).
	Components json.RawMessage
	// Interaction is the id of the interaction this message answers (the
	// original response or a follow-up), "" for a channel message.
	Interaction string
}

// Edit is one edit the bot made.
type Edit struct {
	ChannelID string
	MessageID string
	Content   string
	// Components are the components the edit carried (nil when it
	// carried none, which keeps the message's; "[]" removes them).
	Components json.RawMessage
	// Webhook is set for an edit through an interaction's webhook
	// (PATCH /webhooks/{app}/{token}/messages/…).
	Webhook bool
}

type event struct {
	seq  int64
	typ  string
	data json.RawMessage
}

type failure struct {
	status     int
	retryAfter time.Duration
}

// Server is a fake Discord. The zero value is not usable; call New.
type Server struct {
	http *httptest.Server

	mu            sync.Mutex
	changed       chan struct{}
	closed        bool
	token         string
	events        []event
	lastSeq       int64 // highest event seq assigned
	deliveredTo   int64 // highest event seq written to a connection
	nextID        int64
	conn          *conn // the connection that completed a handshake, if any
	conns         map[*conn]struct{}
	sessionN      int
	sessionID     string
	identifies    int
	lastIdent     json.RawMessage
	resumes       int
	replay        int
	op7           int
	refuse        int
	refused       int
	sent          []Message
	messages      map[string]*Message // id → sent message, for edits
	edits         []Edit
	deleted       []string
	typing        map[string]int
	reactions     []Reaction
	reactFail     int
	failures      []failure
	rejected      int
	channels      map[string]*discordgo.Channel
	files         map[string]attachment // URL path → attachment
	extras        map[string]voiceExtra // attachment id → voice fields
	chunked       bool
	downloads     int
	stall         bool
	quit          chan struct{} // closed by Close
	downloadsAuth int
	uploadLimit   int64
	interactions  map[string]*Interaction // id → interaction
	commandSets   []CommandSet
	commandFail   []failure
	wg            sync.WaitGroup
}

type conn struct {
	ws  *websocket.Conn
	wmu sync.Mutex // gorilla allows one concurrent writer
}

func (c *conn) write(v any) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.WriteJSON(v)
}

func (c *conn) closeWith(code int, text string) {
	c.wmu.Lock()
	c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
	c.wmu.Unlock()
	c.ws.Close()
}

// New starts a fake Discord on 127.0.0.1.
func New() *Server {
	s := &Server{
		changed:  make(chan struct{}),
		quit:     make(chan struct{}),
		conns:    map[*conn]struct{}{},
		messages: map[string]*Message{},
		typing:   map[string]int{},
		channels: map[string]*discordgo.Channel{},
		files:    map[string]attachment{},
		extras:   map[string]voiceExtra{},
		nextID:   1000,

		interactions: map[string]*Interaction{},

		uploadLimit: DefaultUploadLimit,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v9/gateway", s.auth(s.gateway))
	mux.HandleFunc("GET /api/v9/gateway/bot", s.auth(s.gatewayBot))
	mux.HandleFunc("GET /api/v9/users/@me", s.auth(s.me))
	mux.HandleFunc("GET /api/v9/channels/{id}", s.auth(s.channel))
	mux.HandleFunc("POST /api/v9/channels/{id}/messages", s.auth(s.postMessage))
	mux.HandleFunc("PATCH /api/v9/channels/{id}/messages/{mid}", s.auth(s.patchMessage))
	mux.HandleFunc("DELETE /api/v9/channels/{id}/messages/{mid}", s.auth(s.deleteMessage))
	mux.HandleFunc("POST /api/v9/channels/{id}/typing", s.auth(s.postTyping))
	mux.HandleFunc("PUT /api/v9/channels/{id}/messages/{mid}/reactions/{emoji}/@me", s.auth(s.reaction("add")))
	mux.HandleFunc("DELETE /api/v9/channels/{id}/messages/{mid}/reactions/{emoji}/@me", s.auth(s.reaction("remove")))
	s.interactionRoutes(mux)
	mux.HandleFunc("GET /gateway/", s.serveWS)
	mux.HandleFunc("GET /attachments/", s.serveAttachment)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, 0, "404: Not Found")
	})
	s.http = httptest.NewServer(mux)
	return s
}

// URL is the server's base URL (http://127.0.0.1:port).
func (s *Server) URL() string { return s.http.URL }

// APIBase is the REST base to configure a client with
// (http://127.0.0.1:port/api/v9/).
func (s *Server) APIBase() string { return s.http.URL + "/api/v9/" }

// GatewayURL is what /api/v9/gateway answers.
func (s *Server) GatewayURL() string {
	return "ws" + strings.TrimPrefix(s.http.URL, "http") + "/gateway"
}

// Bot is the bot user.
func (s *Server) Bot() *discordgo.User {
	return &discordgo.User{ID: BotID, Username: BotName, Bot: true}
}

// Close drops every connection, stops the server and waits for its
// goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed {
		close(s.quit)
	}
	s.closed = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.conn = nil
	s.notify()
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.Close()
	}
	s.http.Close()
	s.wg.Wait()
}

// notify wakes every waiter; s.mu must be held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// wait blocks until cond (called with s.mu held) is true or ctx ends.
func (s *Server) wait(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		if cond() {
			s.mu.Unlock()
			return nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// RequireToken makes every REST call and IDENTIFY that does not carry
// token ("Bot <token>" on REST) fail: 401 on REST, close code 4004 on the
// gateway. An empty token accepts any.
func (s *Server) RequireToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// AddChannel makes GET /channels/{id} know a channel (a thread needs
// Type set to a thread type and ParentID).
func (s *Server) AddChannel(ch *discordgo.Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := *ch
	s.channels[ch.ID] = &c
}

// RateLimitSends makes the next n message sends (POST) answer 429 with
// retry_after.
func (s *Server) RateLimitSends(n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, failure{status: http.StatusTooManyRequests, retryAfter: retryAfter})
	}
}

// RejectSends makes the next n message sends (POST) answer status (401,
// 403, 500…) with Discord's error body.
func (s *Server) RejectSends(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, failure{status: status})
	}
}

// Rejected is how many sends were answered with a failure set up by
// RateLimitSends or RejectSends.
func (s *Server) Rejected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejected
}

// ReconnectDuringHandshake answers the next n IDENTIFYs with op 7
// RECONNECT instead of READY.
func (s *Server) ReconnectDuringHandshake(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.op7 += n
}

// RefuseConnections answers the next n websocket handshakes with 503, as
// an unreachable gateway would.
func (s *Server) RefuseConnections(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse += n
}

// Refused is how many websocket handshakes RefuseConnections turned away.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Drop closes the current gateway connection without a close frame, as a
// network failure would. On the next RESUME the server sends, after the
// events the client missed, the last replay events it had already
// delivered (Discord's delivery is at least once).
func (s *Server) Drop(replay int) {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.replay = replay
	s.notify()
	s.mu.Unlock()
	if c != nil {
		c.ws.Close()
	}
}

// Identifies is how many IDENTIFYs were answered with READY.
func (s *Server) Identifies() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.identifies
}

// LastIdentify is the d object of the last IDENTIFY answered with READY
// (token, intents, properties, shard…). An IDENTIFY whose shard is not
// [id, count] with 0 <= id < count is closed with 4010, as Discord does;
// the fake sends every event to the one connection whatever its shard.
func (s *Server) LastIdentify() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(json.RawMessage(nil), s.lastIdent...)
}

// Resumes is how many RESUMEs were answered with RESUMED.
func (s *Server) Resumes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resumes
}

// WaitReady waits until n handshakes (READY or RESUMED) have completed in
// all and a connection is up.
func (s *Server) WaitReady(ctx context.Context, n int) error {
	return s.wait(ctx, func() bool { return s.identifies+s.resumes >= n && s.conn != nil })
}

// WaitResumed waits until n RESUMEs have been answered and a connection
// is up.
func (s *Server) WaitResumed(ctx context.Context, n int) error {
	return s.wait(ctx, func() bool { return s.resumes >= n && s.conn != nil })
}

// Sent returns the messages the bot sent, in order.
func (s *Server) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// WaitSent waits until the bot has sent at least n messages and returns
// them all.
func (s *Server) WaitSent(ctx context.Context, n int) ([]Message, error) {
	err := s.wait(ctx, func() bool { return len(s.sent) >= n })
	return s.Sent(), err
}

// Edits returns the edits the bot made, in order.
func (s *Server) Edits() []Edit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Edit(nil), s.edits...)
}

// Deleted returns the ids of the messages the bot deleted, in order.
func (s *Server) Deleted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.deleted...)
}

func (s *Server) deleteMessage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	m := s.messages[r.PathValue("mid")]
	if m == nil || m.ChannelID != r.PathValue("id") {
		s.mu.Unlock()
		apiError(w, http.StatusNotFound, 10008, "Unknown Message")
		return
	}
	delete(s.messages, m.ID)
	s.deleted = append(s.deleted, m.ID)
	s.notify()
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// Typing is how many typing indicators the bot sent to a channel.
func (s *Server) Typing(channelID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.typing[channelID]
}

// WaitTyping waits until the bot has sent n typing indicators to a
// channel.
func (s *Server) WaitTyping(ctx context.Context, channelID string, n int) error {
	return s.wait(ctx, func() bool { return s.typing[channelID] >= n })
}

// DM builds a direct message from a user (its channel is "dm-<user id>").
func (s *Server) DM(from *discordgo.User, text string) *discordgo.Message {
	return &discordgo.Message{ChannelID: "dm-" + from.ID, Content: text, Author: from}
}

// GuildMessage builds a message in a guild channel that does not mention
// the bot.
func (s *Server) GuildMessage(guildID, channelID string, from *discordgo.User, text string) *discordgo.Message {
	return &discordgo.Message{GuildID: guildID, ChannelID: channelID, Content: text, Author: from}
}

// Mention builds a guild message that mentions the bot ("<@bot> text").
func (s *Server) Mention(guildID, channelID string, from *discordgo.User, text string) *discordgo.Message {
	m := s.GuildMessage(guildID, channelID, from, "<@"+BotID+"> "+text)
	m.Mentions = []*discordgo.User{s.Bot()}
	return m
}

// Inject dispatches a MESSAGE_CREATE for m (an ID and a timestamp are
// filled in when empty) and returns the message id. With no connection
// up it is sent once one is.
func (s *Server) Inject(m *discordgo.Message) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.ID == "" {
		m.ID = s.newID()
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = time.Now().UTC()
	}
	data, _ := json.Marshal(m)
	data = s.withExtras(data)
	s.lastSeq++
	ev := event{seq: s.lastSeq, typ: "MESSAGE_CREATE", data: data}
	s.events = append(s.events, ev)
	if s.conn != nil {
		s.deliver(s.conn, []event{ev})
	}
	return m.ID
}

func (s *Server) newID() string {
	s.nextID++
	return strconv.FormatInt(s.nextID, 10)
}

// deliver writes events on c; s.mu must be held.
func (s *Server) deliver(c *conn, evs []event) {
	for _, ev := range evs {
		if err := c.write(dispatch{Op: 0, Seq: ev.seq, Type: ev.typ, Data: ev.data}); err != nil {
			return
		}
		if ev.seq > s.deliveredTo {
			s.deliveredTo = ev.seq
		}
	}
}

// after returns the events with a seq above seq; s.mu must be held.
func (s *Server) after(seq int64) []event {
	var out []event
	for _, ev := range s.events {
		if ev.seq > seq {
			out = append(out, ev)
		}
	}
	return out
}

type dispatch struct {
	Op   int    `json:"op"`
	Seq  int64  `json:"s,omitempty"`
	Type string `json:"t,omitempty"`
	Data any    `json:"d"`
}

type frame struct {
	Op   int             `json:"op"`
	Data json.RawMessage `json:"d"`
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	if s.refuse > 0 {
		s.refuse--
		s.refused++
		s.notify()
		s.mu.Unlock()
		http.Error(w, "upstream connect error", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws}
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		if s.conn == c {
			s.conn = nil
		}
		s.notify()
		s.mu.Unlock()
		ws.Close()
	}()
	if c.write(dispatch{Op: 10, Data: map[string]int{"heartbeat_interval": 45000}}) != nil {
		return
	}
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var f frame
		if json.Unmarshal(data, &f) != nil {
			c.closeWith(4002, "Error while decoding payload.")
			return
		}
		switch f.Op {
		case 1:
			if c.write(dispatch{Op: 11}) != nil {
				return
			}
		case 2:
			if !s.identify(c, f.Data) {
				return
			}
		case 6:
			if !s.resume(c, f.Data) {
				return
			}
		}
	}
}

func (s *Server) tokenOK(tok string) bool {
	return s.token == "" || strings.TrimPrefix(tok, "Bot ") == s.token
}

// identify answers op 2; false ends the connection.
func (s *Server) identify(c *conn, raw json.RawMessage) bool {
	var d struct {
		Token string `json:"token"`
		Shard []int  `json:"shard"`
	}
	json.Unmarshal(raw, &d)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tokenOK(d.Token) {
		c.closeWith(4004, "Authentication failed.")
		return false
	}
	if d.Shard != nil && (len(d.Shard) != 2 || d.Shard[1] < 1 || d.Shard[0] < 0 || d.Shard[0] >= d.Shard[1]) {
		c.closeWith(4010, "Invalid shard.")
		return false
	}
	if s.op7 > 0 {
		s.op7--
		return c.write(dispatch{Op: 7}) == nil
	}
	s.lastIdent = append(json.RawMessage(nil), raw...)
	s.sessionN++
	s.sessionID = fmt.Sprintf("fake-session-%d", s.sessionN)
	ready := map[string]any{
		"v": 9, "session_id": s.sessionID, "user": s.Bot(),
		"application": map[string]any{"id": AppID, "flags": 0},
		"guilds":      []any{}, "private_channels": []any{},
		"resume_gateway_url": s.GatewayURL(),
	}
	if d.Shard != nil {
		// Discord echoes the shard in READY
		ready["shard"] = d.Shard
	}
	if c.write(dispatch{Op: 0, Seq: s.deliveredTo, Type: "READY", Data: ready}) != nil {
		return false
	}
	s.identifies++
	s.conn = c
	s.deliver(c, s.after(s.deliveredTo))
	s.notify()
	return true
}

// resume answers op 6; false ends the connection.
func (s *Server) resume(c *conn, raw json.RawMessage) bool {
	var d struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	json.Unmarshal(raw, &d)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tokenOK(d.Token) {
		c.closeWith(4004, "Authentication failed.")
		return false
	}
	if d.SessionID == "" || d.SessionID != s.sessionID {
		return c.write(dispatch{Op: 9, Data: false}) == nil
	}
	if c.write(dispatch{Op: 0, Seq: d.Seq, Type: "RESUMED", Data: map[string]any{}}) != nil {
		return false
	}
	s.resumes++
	s.conn = c
	evs := s.after(d.Seq)
	if s.replay > 0 {
		var again []event
		for i := len(s.events) - 1; i >= 0 && len(again) < s.replay; i-- {
			if s.events[i].seq <= d.Seq {
				again = append([]event{s.events[i]}, again...)
			}
		}
		evs = append(evs, again...)
		s.replay = 0
	}
	s.deliver(c, evs)
	s.notify()
	return true
}

// REST

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		ok := s.tokenOK(r.Header.Get("Authorization")) && (s.token == "" || strings.HasPrefix(r.Header.Get("Authorization"), "Bot "))
		s.mu.Unlock()
		if !ok {
			apiError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg})
}

func (s *Server) gateway(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"url": s.GatewayURL()})
}

func (s *Server) gatewayBot(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"url": s.GatewayURL(), "shards": 1,
		"session_start_limit": map[string]int{"total": 1000, "remaining": 999, "reset_after": 86400000, "max_concurrency": 1},
	})
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Bot())
}

func (s *Server) channel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ch := s.channels[r.PathValue("id")]
	s.mu.Unlock()
	if ch == nil {
		apiError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	writeJSON(w, http.StatusOK, ch)
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	var raw []byte
	var files []File
	var err error
	s.mu.Lock()
	limit := s.uploadLimit
	s.mu.Unlock()
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		raw, files, err = s.readUpload(r, limit)
		if errors.Is(err, errTooLarge) {
			apiError(w, http.StatusRequestEntityTooLarge, 40005, errTooLarge.Error())
			return
		}
		if err != nil {
			apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
			return
		}
	} else if raw, err = io.ReadAll(r.Body); err != nil {
		return
	}
	var body struct {
		Content   string `json:"content"`
		Reference *struct {
			MessageID string `json:"message_id"`
		} `json:"message_reference"`
		AllowedMentions json.RawMessage `json:"allowed_mentions"`
		Components      json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	if len(s.failures) > 0 {
		f := s.failures[0]
		s.failures = s.failures[1:]
		s.rejected++
		s.notify()
		s.mu.Unlock()
		fail(w, f)
		return
	}
	s.mu.Unlock()
	switch n := utf8.RuneCountInString(body.Content); {
	case n == 0 && len(files) == 0:
		apiError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
		return
	case n > MaxContent:
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"code": 50035, "message": "Invalid Form Body",
			"errors": map[string]any{"content": map[string]any{"_errors": []map[string]string{{
				"code": "BASE_TYPE_MAX_LENGTH", "message": fmt.Sprintf("Must be %d or fewer in length.", MaxContent)}}}},
		})
		return
	}
	if !validComponents(w, body.Components) {
		return
	}
	m := Message{ChannelID: r.PathValue("id"), Content: body.Content, AllowedMentions: body.AllowedMentions, Body: raw, Files: files, Components: components(body.Components)}
	m.Attachments = s.wireAttachments(m.ChannelID, files)
	if body.Reference != nil {
		m.ReplyTo = body.Reference.MessageID
	}
	s.mu.Lock()
	m.ID = s.newID()
	s.sent = append(s.sent, m)
	s.messages[m.ID] = &m
	s.notify()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.wireMessage(m))
}

func fail(w http.ResponseWriter, f failure) {
	switch f.status {
	case http.StatusTooManyRequests:
		secs := f.retryAfter.Seconds()
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(secs))))
		writeJSON(w, f.status, map[string]any{"message": "You are being rate limited.", "retry_after": secs, "global": false})
	case http.StatusUnauthorized:
		apiError(w, f.status, 0, "401: Unauthorized")
	case http.StatusForbidden:
		apiError(w, f.status, 50013, "Missing Permissions")
	default:
		apiError(w, f.status, 0, http.StatusText(f.status))
	}
}

func (s *Server) wireMessage(m Message) map[string]any {
	return map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "author": s.Bot(),
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "type": 0,
		"attachments": m.Attachments, "components": wireComponents(m.Components),
	}
}

func (s *Server) patchMessage(w http.ResponseWriter, r *http.Request) {
	body, ok := readEdit(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	m := s.messages[r.PathValue("mid")]
	if m == nil || m.ChannelID != r.PathValue("id") {
		s.mu.Unlock()
		apiError(w, http.StatusNotFound, 10008, "Unknown Message")
		return
	}
	out := s.applyEdit(m, body, false)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, s.wireMessage(out))
}

// editBody is a message edit as the channel and webhook endpoints take
// it: absent fields keep what the message has.
type editBody struct {
	Content    *string         `json:"content"`
	Components json.RawMessage `json:"components"`
}

// readEdit decodes and checks an edit; false when it answered an error.
func readEdit(w http.ResponseWriter, r *http.Request) (editBody, bool) {
	var body editBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return body, false
	}
	if body.Content != nil && utf8.RuneCountInString(*body.Content) > MaxContent {
		apiError(w, http.StatusBadRequest, 50035, "Invalid Form Body")
		return body, false
	}
	return body, validComponents(w, body.Components)
}

// applyEdit changes m and records the edit; s.mu must be held.
func (s *Server) applyEdit(m *Message, body editBody, webhook bool) Message {
	if body.Content != nil {
		m.Content = *body.Content
	}
	comps := components(body.Components)
	if comps != nil {
		m.Components = comps
	}
	s.edits = append(s.edits, Edit{ChannelID: m.ChannelID, MessageID: m.ID, Content: m.Content, Components: comps, Webhook: webhook})
	s.notify()
	return *m
}

func (s *Server) postTyping(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.typing[r.PathValue("id")]++
	s.notify()
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}
