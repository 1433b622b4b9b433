// Package matrixtest is a fake Matrix homeserver for tests: the
// client-server API endpoints herald's Matrix adapter uses, in their
// documented shapes (spec v1.x, /_matrix/client/v3): POST /login
// (m.login.password), GET /account/whoami, GET /sync (since tokens and a
// long-poll timeout), PUT /rooms/{id}/send/{type}/{txnId} (idempotent per
// transaction id), PUT /rooms/{id}/typing/{userId}, PUT
// /rooms/{id}/redact/{eventId}/{txnId}, POST /join/{id} and
// /rooms/{id}/join, GET /rooms/{id}/joined_members, GET
// /rooms/{id}/state/{type}/{key}, GET /profile/{userId}[/displayname].
// Every call is recorded; sends can be rate limited (429
// M_LIMIT_EXCEEDED with retry_after_ms) as Synapse does.
//
// The timeline is one ordered log: a since token is a position in it, so
// a client that resumes from a token gets exactly what came after it, and
// one that syncs with no token gets the whole backlog, as on a real
// server. The bot's own messages appear in the timeline too.
package matrixtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configure a Server.
type Options struct {
	// UserID is the bot's user id (default @herald:localhost).
	UserID string
	// Password is what /login accepts for it (default "bot-password").
	Password string
	// Token is its access token (default a fixed test token); /login
	// hands it out too.
	Token string
	// DisplayName is its profile name (default "Herald").
	DisplayName string
}

// Sent is one event the bot sent.
type Sent struct {
	Room    string
	Type    string
	TxnID   string
	EventID string
	MsgType string
	Body    string
	// Format and FormattedBody are the HTML form, when sent.
	Format        string
	FormattedBody string
	// ThreadRoot is the m.thread relation's root; ReplyTo the
	// m.in_reply_to event; Replaces the m.replace target, with NewBody
	// the m.new_content body.
	ThreadRoot string
	ReplyTo    string
	Replaces   string
	NewBody    string
	Raw        json.RawMessage
}

// Typing is one typing notification.
type Typing struct {
	Room    string
	User    string
	Typing  bool
	Timeout int64
}

type logEvent struct {
	room   string
	invite bool // an invite for the bot (the event is the m.room.member)
	event  map[string]any
}

type room struct {
	members   map[string]string // joined user → display name
	encrypted bool
}

// Server is the fake.
type Server struct {
	opts Options
	srv  *httptest.Server

	mu       sync.Mutex
	changed  chan struct{}
	log      []logEvent
	rooms    map[string]*room
	sent     []Sent
	txns     map[string]string // txn id → event id
	typing   []Typing
	redacted []string
	joins    []string
	logins   []map[string]any
	sinces   []string
	limitN   int
	limitFor time.Duration
	rejected int
	next     int
}

// New starts a fake homeserver on 127.0.0.1.
func New(opts Options) *Server {
	if opts.UserID == "" {
		opts.UserID = "@herald:localhost"
	}
	if opts.Password == "" {
		opts.Password = "bot-password"
	}
	if opts.Token == "" {
		opts.Token = "syt_aGVyYWxk_fakeToken0123456789"
	}
	if opts.DisplayName == "" {
		opts.DisplayName = "Herald"
	}
	s := &Server{opts: opts, changed: make(chan struct{}), rooms: map[string]*room{}, txns: map[string]string{}}
	mux := http.NewServeMux()
	const v3 = "/_matrix/client/v3"
	mux.HandleFunc("POST "+v3+"/login", s.login)
	mux.HandleFunc("GET "+v3+"/account/whoami", s.authed(s.whoami))
	mux.HandleFunc("GET "+v3+"/sync", s.authed(s.sync))
	mux.HandleFunc("PUT "+v3+"/rooms/{room}/send/{type}/{txn}", s.authed(s.send))
	mux.HandleFunc("PUT "+v3+"/rooms/{room}/typing/{user}", s.authed(s.typingHandler))
	mux.HandleFunc("PUT "+v3+"/rooms/{room}/redact/{event}/{txn}", s.authed(s.redact))
	mux.HandleFunc("POST "+v3+"/join/{room}", s.authed(s.join))
	mux.HandleFunc("POST "+v3+"/rooms/{room}/join", s.authed(s.join))
	mux.HandleFunc("GET "+v3+"/rooms/{room}/joined_members", s.authed(s.joinedMembers))
	mux.HandleFunc("GET "+v3+"/rooms/{room}/state/{type}", s.authed(s.state))
	mux.HandleFunc("GET "+v3+"/rooms/{room}/state/{type}/{key...}", s.authed(s.state))
	mux.HandleFunc("GET "+v3+"/profile/{user}", s.authed(s.profile))
	mux.HandleFunc("GET "+v3+"/profile/{user}/displayname", s.authed(s.profile))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		matrixError(w, http.StatusNotFound, "M_UNRECOGNIZED", "unrecognized request "+r.Method+" "+r.URL.Path)
	})
	s.srv = httptest.NewServer(mux)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// URL is the homeserver's base URL.
func (s *Server) URL() string { return s.srv.URL }

// UserID is the bot's user id.
func (s *Server) UserID() string { return s.opts.UserID }

// Token is the bot's access token.
func (s *Server) Token() string { return s.opts.Token }

// Password is the bot's password.
func (s *Server) Password() string { return s.opts.Password }

// DisplayName is the bot's profile name.
func (s *Server) DisplayName() string { return s.opts.DisplayName }

func matrixError(w http.ResponseWriter, status int, code, msg string, extra ...any) {
	body := map[string]any{"errcode": code, "error": msg}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// bump wakes waiters; the caller holds mu.
func (s *Server) bump() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if tok == "" {
			tok = r.URL.Query().Get("access_token")
		}
		if tok == "" {
			matrixError(w, http.StatusUnauthorized, "M_MISSING_TOKEN", "Missing access token")
			return
		}
		if tok != s.opts.Token {
			matrixError(w, http.StatusUnauthorized, "M_UNKNOWN_TOKEN", "Unknown access token", "soft_logout", false)
			return
		}
		h(w, r)
	}
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if json.NewDecoder(r.Body).Decode(&req) != nil {
		matrixError(w, http.StatusBadRequest, "M_NOT_JSON", "Content not JSON.")
		return
	}
	var body struct {
		Type       string `json:"type"`
		Identifier struct {
			Type string `json:"type"`
			User string `json:"user"`
		} `json:"identifier"`
		User     string `json:"user"`
		Password string `json:"password"`
		DeviceID string `json:"device_id"`
	}
	raw, _ := json.Marshal(req)
	json.Unmarshal(raw, &body)
	req["password"] = "(redacted)"
	s.mu.Lock()
	s.logins = append(s.logins, req)
	s.mu.Unlock()
	user := body.Identifier.User
	if user == "" {
		user = body.User
	}
	localpart := strings.TrimPrefix(strings.SplitN(s.opts.UserID, ":", 2)[0], "@")
	if body.Type != "m.login.password" {
		matrixError(w, http.StatusBadRequest, "M_UNKNOWN", "Unknown login type "+body.Type)
		return
	}
	if user != s.opts.UserID && user != localpart || body.Password != s.opts.Password {
		matrixError(w, http.StatusForbidden, "M_FORBIDDEN", "Invalid username or password")
		return
	}
	dev := body.DeviceID
	if dev == "" {
		s.mu.Lock()
		s.next++
		dev = fmt.Sprintf("DEV%04d", s.next)
		s.mu.Unlock()
	}
	writeJSON(w, http.StatusOK, map[string]any{"user_id": s.opts.UserID, "access_token": s.opts.Token, "device_id": dev})
}

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"user_id": s.opts.UserID, "device_id": "FAKEDEVICE"})
}

func (s *Server) profile(w http.ResponseWriter, r *http.Request) {
	user := r.PathValue("user")
	name := ""
	if user == s.opts.UserID {
		name = s.opts.DisplayName
	} else {
		s.mu.Lock()
		for _, rm := range s.rooms {
			if n, ok := rm.members[user]; ok {
				name = n
			}
		}
		s.mu.Unlock()
	}
	if name == "" {
		matrixError(w, http.StatusNotFound, "M_NOT_FOUND", "Profile was not found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"displayname": name})
}

// Logins are the /login requests received (passwords replaced).
func (s *Server) Logins() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.logins...)
}

// Sinces are the since tokens of the /sync requests received, in order
// ("" for a sync without one).
func (s *Server) Sinces() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sinces...)
}

func (s *Server) sync(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	since := q.Get("since")
	timeout, _ := strconv.Atoi(q.Get("timeout"))
	from := 0
	if since != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(since, "s"))
		if err != nil || !strings.HasPrefix(since, "s") || n < 0 {
			matrixError(w, http.StatusBadRequest, "M_INVALID_PARAM", "Invalid since token "+since)
			return
		}
		from = n
	}
	s.mu.Lock()
	s.sinces = append(s.sinces, since)
	s.bump()
	deadline := time.NewTimer(time.Duration(timeout) * time.Millisecond)
	defer deadline.Stop()
	for since != "" && len(s.log) <= from && timeout > 0 {
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			timeout = 0
		case <-r.Context().Done():
			return
		}
		s.mu.Lock()
	}
	from = min(from, len(s.log))
	resp := s.syncResponse(since == "", s.log[from:])
	resp["next_batch"] = "s" + strconv.Itoa(len(s.log))
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, resp)
}

// syncResponse builds a sync body of events; an initial sync carries
// each joined room's members as state. The caller holds mu.
func (s *Server) syncResponse(initial bool, events []logEvent) map[string]any {
	join := map[string]any{}
	invite := map[string]any{}
	roomOf := func(id string) map[string]any {
		if r, ok := join[id].(map[string]any); ok {
			return r
		}
		r := map[string]any{"timeline": map[string]any{"events": []any{}, "limited": false}, "state": map[string]any{"events": []any{}}}
		join[id] = r
		return r
	}
	if initial {
		for id, rm := range s.rooms {
			if _, ok := rm.members[s.opts.UserID]; !ok {
				continue
			}
			r := roomOf(id)
			var state []any
			for u, n := range rm.members {
				state = append(state, memberEvent(u, n, "join"))
			}
			r["state"] = map[string]any{"events": state}
		}
	}
	for _, e := range events {
		if e.invite {
			invite[e.room] = map[string]any{"invite_state": map[string]any{"events": e.event["invite_state"]}}
			continue
		}
		r := roomOf(e.room)
		tl := r["timeline"].(map[string]any)
		ev := map[string]any{}
		for k, v := range e.event {
			ev[k] = v
		}
		tl["events"] = append(tl["events"].([]any), ev)
	}
	rooms := map[string]any{}
	if len(join) > 0 {
		rooms["join"] = join
	}
	if len(invite) > 0 {
		rooms["invite"] = invite
	}
	return map[string]any{"rooms": rooms}
}

func memberEvent(user, name, membership string) map[string]any {
	return map[string]any{
		"type": "m.room.member", "state_key": user, "sender": user, "event_id": "$member-" + user,
		"origin_server_ts": time.Now().UnixMilli(),
		"content":          map[string]any{"membership": membership, "displayname": name},
	}
}

// RateLimit answers the next n sends 429 M_LIMIT_EXCEEDED with
// retry_after_ms of after.
func (s *Server) RateLimit(n int, after time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limitN, s.limitFor = n, after
}

// Rejected is how many sends were answered 429.
func (s *Server) Rejected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejected
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	roomID, typ, txn := r.PathValue("room"), r.PathValue("type"), r.PathValue("txn")
	var content map[string]any
	raw := json.RawMessage{}
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil || json.Unmarshal(raw, &content) != nil {
		matrixError(w, http.StatusBadRequest, "M_NOT_JSON", "Content not JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rm, ok := s.rooms[roomID]
	if !ok || !hasMember(rm, s.opts.UserID) {
		matrixError(w, http.StatusForbidden, "M_FORBIDDEN", "User "+s.opts.UserID+" not in room "+roomID)
		return
	}
	if id, ok := s.txns[txn]; ok {
		// the spec: a retried transaction answers the same event id
		writeJSON(w, http.StatusOK, map[string]any{"event_id": id})
		return
	}
	if s.limitN > 0 {
		s.limitN--
		s.rejected++
		s.bump()
		matrixError(w, http.StatusTooManyRequests, "M_LIMIT_EXCEEDED", "Too many requests", "retry_after_ms", s.limitFor.Milliseconds())
		return
	}
	s.next++
	eventID := fmt.Sprintf("$bot%d", s.next)
	s.txns[txn] = eventID
	sent := Sent{Room: roomID, Type: typ, TxnID: txn, EventID: eventID, Raw: raw}
	sent.MsgType, _ = content["msgtype"].(string)
	sent.Body, _ = content["body"].(string)
	sent.Format, _ = content["format"].(string)
	sent.FormattedBody, _ = content["formatted_body"].(string)
	if rel, ok := content["m.relates_to"].(map[string]any); ok {
		switch rel["rel_type"] {
		case "m.thread":
			sent.ThreadRoot, _ = rel["event_id"].(string)
		case "m.replace":
			sent.Replaces, _ = rel["event_id"].(string)
		}
		if irt, ok := rel["m.in_reply_to"].(map[string]any); ok {
			sent.ReplyTo, _ = irt["event_id"].(string)
		}
	}
	if nc, ok := content["m.new_content"].(map[string]any); ok {
		sent.NewBody, _ = nc["body"].(string)
	}
	s.sent = append(s.sent, sent)
	s.log = append(s.log, logEvent{room: roomID, event: map[string]any{
		"type": typ, "sender": s.opts.UserID, "event_id": eventID, "origin_server_ts": time.Now().UnixMilli(),
		"content": content, "unsigned": map[string]any{"transaction_id": txn},
	}})
	s.bump()
	writeJSON(w, http.StatusOK, map[string]any{"event_id": eventID})
}

func hasMember(rm *room, user string) bool {
	_, ok := rm.members[user]
	return ok
}

// Sent returns the events the bot sent, in order.
func (s *Server) Sent() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// WaitSent waits until the bot has sent at least n events.
func (s *Server) WaitSent(ctx context.Context, n int) ([]Sent, error) {
	var out []Sent
	err := s.wait(ctx, func() bool {
		out = append([]Sent(nil), s.sent...)
		return len(s.sent) >= n
	})
	if err != nil {
		return out, fmt.Errorf("matrixtest: %d events sent, want %d: %w", len(out), n, err)
	}
	return out, nil
}

// WaitFor waits until cond holds of the events the bot sent.
func (s *Server) WaitFor(ctx context.Context, cond func([]Sent) bool) ([]Sent, error) {
	var out []Sent
	err := s.wait(ctx, func() bool {
		out = append([]Sent(nil), s.sent...)
		return cond(out)
	})
	return out, err
}

// Shown is a message as a reader sees it: its latest edit applied.
type Shown struct {
	EventID    string
	Room       string
	MsgType    string
	Text       string
	ThreadRoot string
	ReplyTo    string
	// Edits is how many m.replace edits it had.
	Edits int
}

// Visible returns the messages in sent as a reader of room sees them, in
// order: each edit (m.replace) applied to the message it replaces.
func Visible(sent []Sent, room string) []Shown {
	var out []Shown
	at := map[string]int{}
	for _, s := range sent {
		if s.Room != room {
			continue
		}
		if s.Replaces != "" {
			if i, ok := at[s.Replaces]; ok {
				out[i].Text = s.NewBody
				out[i].Edits++
			}
			continue
		}
		at[s.EventID] = len(out)
		out = append(out, Shown{EventID: s.EventID, Room: s.Room, MsgType: s.MsgType, Text: s.Body, ThreadRoot: s.ThreadRoot, ReplyTo: s.ReplyTo})
	}
	return out
}

// Wait waits until cond (called with the server's lock held) holds.
func (s *Server) wait(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ok := cond()
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitSyncs waits until n /sync requests arrived.
func (s *Server) WaitSyncs(ctx context.Context, n int) error {
	return s.wait(ctx, func() bool { return len(s.sinces) >= n })
}

func (s *Server) typingHandler(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Typing  bool  `json:"typing"`
		Timeout int64 `json:"timeout"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil {
		matrixError(w, http.StatusBadRequest, "M_NOT_JSON", "Content not JSON.")
		return
	}
	if r.PathValue("user") != s.opts.UserID {
		matrixError(w, http.StatusForbidden, "M_FORBIDDEN", "Cannot set another user's typing state")
		return
	}
	s.mu.Lock()
	s.typing = append(s.typing, Typing{Room: r.PathValue("room"), User: r.PathValue("user"), Typing: body.Typing, Timeout: body.Timeout})
	s.bump()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{})
}

func (s *Server) redact(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.rooms[r.PathValue("room")]; !ok {
		matrixError(w, http.StatusForbidden, "M_FORBIDDEN", "User not in room")
		return
	}
	s.next++
	s.redacted = append(s.redacted, r.PathValue("event"))
	s.bump()
	writeJSON(w, http.StatusOK, map[string]any{"event_id": fmt.Sprintf("$redaction%d", s.next)})
}

// Redacted are the events the bot redacted, in order.
func (s *Server) Redacted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.redacted...)
}

// Typings are the typing notifications received.
func (s *Server) Typings() []Typing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Typing(nil), s.typing...)
}

func (s *Server) join(w http.ResponseWriter, r *http.Request) {
	roomID := r.PathValue("room")
	s.mu.Lock()
	defer s.mu.Unlock()
	rm, ok := s.rooms[roomID]
	if !ok {
		matrixError(w, http.StatusNotFound, "M_NOT_FOUND", "No known servers")
		return
	}
	rm.members[s.opts.UserID] = s.opts.DisplayName
	s.joins = append(s.joins, roomID)
	s.bump()
	writeJSON(w, http.StatusOK, map[string]any{"room_id": roomID})
}

// Joins are the rooms the bot joined through the API, in order.
func (s *Server) Joins() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.joins...)
}

// WaitJoined waits until the bot joined room.
func (s *Server) WaitJoined(ctx context.Context, room string) error {
	return s.wait(ctx, func() bool {
		for _, j := range s.joins {
			if j == room {
				return true
			}
		}
		return false
	})
}

func (s *Server) joinedMembers(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rm, ok := s.rooms[r.PathValue("room")]
	if !ok || !hasMember(rm, s.opts.UserID) {
		matrixError(w, http.StatusForbidden, "M_FORBIDDEN", "You aren't a member of the room")
		return
	}
	joined := map[string]any{}
	for u, n := range rm.members {
		joined[u] = map[string]any{"display_name": n}
	}
	writeJSON(w, http.StatusOK, map[string]any{"joined": joined})
}

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rm, ok := s.rooms[r.PathValue("room")]
	if !ok || !hasMember(rm, s.opts.UserID) {
		matrixError(w, http.StatusForbidden, "M_FORBIDDEN", "You aren't a member of the room")
		return
	}
	if r.PathValue("type") == "m.room.encryption" && rm.encrypted {
		writeJSON(w, http.StatusOK, map[string]any{"algorithm": "m.megolm.v1.aes-sha2"})
		return
	}
	matrixError(w, http.StatusNotFound, "M_NOT_FOUND", "Event not found.")
}

// Room creates a room the bot is in with the given other members (user
// id → display name); two members in all make it a DM.
func (s *Server) Room(id string, members map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rm := &room{members: map[string]string{s.opts.UserID: s.opts.DisplayName}}
	for u, n := range members {
		rm.members[u] = n
	}
	s.rooms[id] = rm
}

// Encrypt marks room as end-to-end encrypted (m.room.encryption state)
// and puts that state event in the timeline.
func (s *Server) Encrypt(roomID, by string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rooms[roomID].encrypted = true
	s.next++
	s.log = append(s.log, logEvent{room: roomID, event: map[string]any{
		"type": "m.room.encryption", "state_key": "", "sender": by, "event_id": fmt.Sprintf("$enc%d", s.next),
		"origin_server_ts": time.Now().UnixMilli(), "content": map[string]any{"algorithm": "m.megolm.v1.aes-sha2"},
	}})
	s.bump()
}

// Invite invites the bot to a new room by inviter (its other members:
// inviter alone); encrypted puts m.room.encryption in the invite state.
func (s *Server) Invite(roomID, inviter, inviterName string, encrypted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rooms[roomID] = &room{members: map[string]string{inviter: inviterName}, encrypted: encrypted}
	state := []any{
		map[string]any{"type": "m.room.member", "state_key": inviter, "sender": inviter, "content": map[string]any{"membership": "join", "displayname": inviterName}},
		map[string]any{"type": "m.room.member", "state_key": s.opts.UserID, "sender": inviter, "content": map[string]any{"membership": "invite", "is_direct": true}},
	}
	if encrypted {
		state = append(state, map[string]any{"type": "m.room.encryption", "state_key": "", "sender": inviter, "content": map[string]any{"algorithm": "m.megolm.v1.aes-sha2"}})
	}
	s.log = append(s.log, logEvent{room: roomID, invite: true, event: map[string]any{"invite_state": state}})
	s.bump()
}

// Say posts an m.room.message from sender in room with content (a body
// string becomes an m.text message); it returns the event id.
func (s *Server) Say(roomID, sender string, content map[string]any) string {
	return s.Post(roomID, sender, "m.room.message", content)
}

// Post puts an event of any type from sender in room's timeline.
func (s *Server) Post(roomID, sender, typ string, content map[string]any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	id := fmt.Sprintf("$ev%d", s.next)
	s.log = append(s.log, logEvent{room: roomID, event: map[string]any{
		"type": typ, "sender": sender, "event_id": id, "origin_server_ts": time.Now().UnixMilli(), "content": content,
	}})
	s.bump()
	return id
}

// Text is a plain m.text content.
func Text(body string) map[string]any {
	return map[string]any{"msgtype": "m.text", "body": body}
}

// Mention is an m.text content that mentions users (m.mentions).
func Mention(body string, users ...string) map[string]any {
	c := Text(body)
	c["m.mentions"] = map[string]any{"user_ids": users}
	return c
}

// InThread is an m.text content in root's thread.
func InThread(body, root string) map[string]any {
	c := Text(body)
	c["m.relates_to"] = map[string]any{"rel_type": "m.thread", "event_id": root, "is_falling_back": true,
		"m.in_reply_to": map[string]any{"event_id": root}}
	return c
}

// ReplyTo is an m.text content replying to event.
func ReplyTo(body, event string) map[string]any {
	c := Text(body)
	c["m.relates_to"] = map[string]any{"m.in_reply_to": map[string]any{"event_id": event}}
	return c
}

// Encrypted is an m.room.encrypted content (megolm ciphertext herald
// cannot read).
func Encrypted() map[string]any {
	return map[string]any{"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEnACgAkL", "device_id": "PHONE", "sender_key": "k", "session_id": "s"}
}
