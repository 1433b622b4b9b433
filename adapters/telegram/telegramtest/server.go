package telegramtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
)

// Options configure a Server. Zero values get the defaults shown.
type Options struct {
	Token       string // "123456:TEST-token"
	BotID       int64  // 1000
	BotUsername string // "herald_test_bot"
	// MaxPoll caps how long one getUpdates may hold (default 50 s, as
	// Telegram does).
	MaxPoll time.Duration
}

// Call is one successful request the bot made.
type Call struct {
	Method    string
	ChatID    string
	ThreadID  string
	MessageID string // the message sent (sendMessage) or edited (editMessageText)
	Text      string
	ParseMode string
	ReplyTo   string
	Action    string // sendChatAction
	// Reaction is the emoji setMessageReaction set ("" clears it).
	Reaction string
	// Keyboard is the inline keyboard a sendMessage or editMessageText
	// set (nil: none; an edit with none takes the old one away).
	Keyboard [][]InlineButton
	// CallbackQueryID is the query answerCallbackQuery answered.
	CallbackQueryID string
	// Uploads (sendPhoto, sendDocument, sendVoice, sendAudio, sendVideo).
	Caption   string
	FileField string // the multipart field the file came in ("photo", …)
	FileName  string // the file name the upload declared
	File      []byte
	Form      url.Values
}

// Failure is an error envelope a method answers with.
type Failure struct {
	Code        int
	Description string
	RetryAfter  int
	// MigrateToChatID is the supergroup a group became (parameters.
	// migrate_to_chat_id).
	MigrateToChatID int64
}

// Server is a fake Bot API server.
type Server struct {
	opts Options
	srv  *httptest.Server
	// answering is held (shared) by every handler but getUpdates while
	// it answers; CloseConnections takes it, so that a call a test saw
	// recorded always gets its answer.
	answering sync.RWMutex

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	updates   []update      // not yet confirmed
	nextID    int
	nextMsgID int
	confirmed int // highest offset seen
	calls     []Call
	attempts  map[string]int
	fails     map[string][]Failure
	drops     map[string]int
	texts     map[string]string // chat\x00message → current text
	webhook   url.Values
	files     map[string]File // by file_id
	nextFile  int
	// commands is the command menu per scope type ("default", …).
	commands map[string][]BotCommand
	// deadThreads are forum topics that no longer exist (chat\x00thread).
	deadThreads map[string]bool
	// migrated maps a group's old chat id to its supergroup's.
	migrated map[string]int64
	slow     map[string][]time.Duration
	// keyboards are the inline keyboards messages show (chat\x00message);
	// queries are the callback queries made, and whether answered.
	keyboards map[string][][]InlineButton
	queries   map[string]bool
	nextQuery int
	// allowed is the allowed_updates of the last getUpdates
	allowed string
}

type update struct {
	id  int
	raw json.RawMessage
}

// New starts a fake server on 127.0.0.1.
func New(opts Options) *Server {
	if opts.Token == "" {
		opts.Token = "123456:TEST-token"
	}
	if opts.BotID == 0 {
		opts.BotID = 1000
	}
	if opts.BotUsername == "" {
		opts.BotUsername = "herald_test_bot"
	}
	if opts.MaxPoll <= 0 {
		opts.MaxPoll = 50 * time.Second
	}
	s := &Server{
		opts: opts, changed: make(chan struct{}), nextID: 1, nextMsgID: 100,
		attempts: map[string]int{}, fails: map[string][]Failure{}, drops: map[string]int{}, texts: map[string]string{},
		files: map[string]File{}, commands: map[string][]BotCommand{}, deadThreads: map[string]bool{}, migrated: map[string]int64{},
		keyboards: map[string][][]InlineButton{}, queries: map[string]bool{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close shuts the server down, ending held polls.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.srv.URL }

// Endpoint is the API endpoint in the library's "…/bot%s/%s" form.
func (s *Server) Endpoint() string { return s.srv.URL + "/bot%s/%s" }

// Token is the token the server accepts.
func (s *Server) Token() string { return s.opts.Token }

// BotID and BotUsername describe the bot getMe returns.
func (s *Server) BotID() int64        { return s.opts.BotID }
func (s *Server) BotUsername() string { return s.opts.BotUsername }

// CloseConnections cuts every open client connection (held polls fail
// with a network error).
func (s *Server) CloseConnections() {
	s.answering.Lock()
	defer s.answering.Unlock()
	s.srv.CloseClientConnections()
}

// Fail makes the next n requests of method answer with f.
func (s *Server) Fail(method string, n int, f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails[method] = append(s.fails[method], f)
	}
}

// RateLimit makes the next n requests of method answer 429 with
// retry_after seconds.
func (s *Server) RateLimit(method string, n, retryAfter int) {
	s.Fail(method, n, Failure{Code: 429, Description: fmt.Sprintf("Too Many Requests: retry after %d", retryAfter), RetryAfter: retryAfter})
}

// Unauthorized makes the next n requests of method answer 401.
func (s *Server) Unauthorized(method string, n int) {
	s.Fail(method, n, Failure{Code: 401, Description: "Unauthorized"})
}

// Drop makes the next n requests of method lose their connection without
// an answer.
func (s *Server) Drop(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops[method] += n
}

// Attempts counts requests of method, failed ones included.
func (s *Server) Attempts(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts[method]
}

// Calls returns the recorded calls of method ("" for all), in order.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// WaitCalls waits until at least n calls of method ("" for all) are
// recorded, and returns them.
func (s *Server) WaitCalls(ctx context.Context, method string, n int) ([]Call, error) {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if c := s.Calls(method); len(c) >= n {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return s.Calls(method), fmt.Errorf("waiting for %d %q calls (have %d): %w", n, method, len(s.Calls(method)), ctx.Err())
		case <-ch:
		}
	}
}

// Wait waits until cond holds; cond runs with no lock held, after every
// change to the server's state.
func (s *Server) Wait(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Pending is how many updates are queued and not yet confirmed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// Confirmed is the highest getUpdates offset the bot has sent.
func (s *Server) Confirmed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// Webhook returns the parameters of the last setWebhook (nil after
// deleteWebhook or before any).
func (s *Server) Webhook() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.webhook
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// User is a Telegram user in an injected message.
type User struct {
	ID       int64
	UserName string
	First    string
	IsBot    bool
}

func (u User) json() map[string]any {
	first := u.First
	if first == "" {
		first = u.UserName
	}
	m := map[string]any{"id": u.ID, "is_bot": u.IsBot, "first_name": first}
	if u.UserName != "" {
		m["username"] = u.UserName
	}
	return m
}

// Injected says what an injection produced.
type Injected struct {
	UpdateID  int
	MessageID int
}

// AddUpdate queues a raw update; its update_id is set by the server.
func (s *Server) AddUpdate(upd map[string]any) Injected {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextID
	s.nextID++
	upd["update_id"] = id
	msgID := 0
	for _, k := range []string{"message", "channel_post", "edited_message"} {
		if m, ok := upd[k].(map[string]any); ok {
			if _, ok := m["message_id"]; !ok {
				s.nextMsgID++
				m["message_id"] = s.nextMsgID
			}
			if _, ok := m["date"]; !ok {
				m["date"] = time.Now().Unix()
			}
			msgID, _ = m["message_id"].(int)
		}
	}
	if q, ok := upd["callback_query"].(map[string]any); ok {
		// a query queued as it is can be answered, once
		if qid, ok := q["id"].(string); ok {
			if _, made := s.queries[qid]; !made {
				s.queries[qid] = false
			}
		}
	}
	raw, _ := json.Marshal(upd)
	s.updates = append(s.updates, update{id: id, raw: raw})
	s.notifyLocked()
	return Injected{UpdateID: id, MessageID: msgID}
}

// Update builds (without queueing) the raw update a message makes, for
// posting to a webhook.
func (s *Server) Update(id int, msg map[string]any) []byte {
	s.mu.Lock()
	s.nextMsgID++
	mid := s.nextMsgID
	s.mu.Unlock()
	if _, ok := msg["message_id"]; !ok {
		msg["message_id"] = mid
	}
	if _, ok := msg["date"]; !ok {
		msg["date"] = time.Now().Unix()
	}
	b, _ := json.Marshal(map[string]any{"update_id": id, "message": msg})
	return b
}

// DMMessage is the message object of a private chat message.
func DMMessage(from User, text string) map[string]any {
	return map[string]any{
		"from": from.json(),
		"chat": map[string]any{"id": from.ID, "type": "private", "first_name": from.First, "username": from.UserName},
		"text": text,
	}
}

// DM queues a private message from a user.
func (s *Server) DM(userID int64, username, text string) Injected {
	return s.AddUpdate(map[string]any{"message": DMMessage(User{ID: userID, UserName: username}, text)})
}

// GroupMessage queues a plain group message (no mention).
func (s *Server) GroupMessage(chatID int64, from User, text string) Injected {
	return s.AddUpdate(map[string]any{"message": map[string]any{
		"from": from.json(), "text": text,
		"chat": map[string]any{"id": chatID, "type": "supergroup", "title": "test group"},
	}})
}

// Mention queues a group message that starts with @bot, with the mention
// entity Telegram adds.
func (s *Server) Mention(chatID int64, from User, text string) Injected {
	at := "@" + s.opts.BotUsername
	full := at + " " + text
	return s.AddUpdate(map[string]any{"message": map[string]any{
		"from": from.json(), "text": full,
		"chat":     map[string]any{"id": chatID, "type": "supergroup", "title": "test group"},
		"entities": []any{map[string]any{"type": "mention", "offset": 0, "length": utf16Len(at)}},
	}})
}

// Topic queues a message in a forum topic of a supergroup, with
// message_thread_id and is_topic_message set, mentioning the bot.
func (s *Server) Topic(chatID int64, threadID int, from User, text string) Injected {
	at := "@" + s.opts.BotUsername
	full := at + " " + text
	return s.AddUpdate(map[string]any{"message": map[string]any{
		"from": from.json(), "text": full,
		"message_thread_id": threadID, "is_topic_message": true,
		"chat":     map[string]any{"id": chatID, "type": "supergroup", "title": "forum", "is_forum": true},
		"entities": []any{map[string]any{"type": "mention", "offset": 0, "length": utf16Len(at)}},
		// Telegram makes every topic message a reply to the topic's
		// creation message.
		"reply_to_message": map[string]any{"message_id": threadID, "date": time.Now().Unix(),
			"chat": map[string]any{"id": chatID, "type": "supergroup"}, "forum_topic_created": map[string]any{"name": "topic"}},
	}})
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

var pathRE = regexp.MustCompile(`^/bot([^/]+)/([A-Za-z]+)$`)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/file/") {
		s.download(w, r)
		return
	}
	m := pathRE.FindStringSubmatch(r.URL.Path)
	if m == nil {
		writeErr(w, Failure{Code: 404, Description: "Not Found"})
		return
	}
	token, method := m[1], m[2]
	if method != "getUpdates" {
		s.answering.RLock()
		defer s.answering.RUnlock()
	}
	if err := parseForm(r); err != nil {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: " + err.Error()})
		return
	}
	if s.faulted(w, method) {
		return
	}
	if d := s.takeSlow(method); d > 0 {
		rec := httptest.NewRecorder()
		defer holdAnswer(w, r, rec, d)
		w = rec
	}
	if token != s.opts.Token {
		writeErr(w, Failure{Code: 401, Description: "Unauthorized"})
		return
	}
	if f, refused := s.refusedTarget(r.Form); refused {
		writeErr(w, f)
		return
	}
	switch method {
	case "getMe":
		writeOK(w, map[string]any{"id": s.opts.BotID, "is_bot": true, "first_name": "Herald Test", "username": s.opts.BotUsername,
			"can_join_groups": true, "can_read_all_group_messages": false, "supports_inline_queries": false})
	case "getUpdates":
		s.getUpdates(w, r)
	case "sendMessage":
		s.sendMessage(w, r)
	case "editMessageText":
		s.editMessage(w, r)
	case "deleteMessage":
		s.deleteMessage(w, r)
	case "sendChatAction":
		if r.Form.Get("chat_id") == "" || r.Form.Get("action") == "" {
			writeErr(w, Failure{Code: 400, Description: "Bad Request: chat_id and action are required"})
			return
		}
		s.record(Call{Method: method, ChatID: r.Form.Get("chat_id"), ThreadID: r.Form.Get("message_thread_id"), Action: r.Form.Get("action"), Form: r.Form})
		writeOK(w, true)
	case "getFile":
		s.getFile(w, r)
	case "sendPhoto", "sendDocument", "sendVoice", "sendAudio", "sendVideo":
		s.upload(w, r, method)
	case "setWebhook":
		s.mu.Lock()
		s.webhook = r.Form
		s.notifyLocked()
		s.mu.Unlock()
		writeOK(w, true)
	case "deleteWebhook":
		s.mu.Lock()
		s.webhook = nil
		s.notifyLocked()
		s.mu.Unlock()
		s.record(Call{Method: method, Form: r.Form})
		writeOK(w, true)
	case "setMyCommands":
		s.setMyCommands(w, r)
	case "setMessageReaction":
		s.setMessageReaction(w, r)
	case "answerCallbackQuery":
		s.answerCallbackQuery(w, r)
	default:
		writeErr(w, Failure{Code: 404, Description: "Not Found: method " + method + " is not faked"})
	}
}

// faulted counts a request of method and answers it with an injected
// fault, if one is queued; it reports whether it did.
func (s *Server) faulted(w http.ResponseWriter, method string) bool {
	s.mu.Lock()
	s.attempts[method]++
	if s.drops[method] > 0 {
		s.drops[method]--
		s.notifyLocked()
		s.mu.Unlock()
		drop(w)
		return true
	}
	if q := s.fails[method]; len(q) > 0 {
		f := q[0]
		s.fails[method] = q[1:]
		s.notifyLocked()
		s.mu.Unlock()
		writeErr(w, f)
		return true
	}
	s.notifyLocked()
	s.mu.Unlock()
	return false
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	s.notifyLocked()
}

func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request) {
	offset, _ := strconv.Atoi(r.Form.Get("offset"))
	limit, _ := strconv.Atoi(r.Form.Get("limit"))
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout, _ := strconv.Atoi(r.Form.Get("timeout"))
	kinds := allowedKinds(r.Form.Get("allowed_updates"))
	s.mu.Lock()
	s.allowed = r.Form.Get("allowed_updates")
	s.mu.Unlock()
	hold := min(time.Duration(timeout)*time.Second, s.opts.MaxPoll)
	timer := time.NewTimer(hold)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if s.webhook != nil {
			s.mu.Unlock()
			writeErr(w, Failure{Code: 409, Description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"})
			return
		}
		if offset > 0 {
			if offset > s.confirmed {
				s.confirmed = offset
			}
			kept := s.updates[:0]
			for _, u := range s.updates {
				if u.id >= offset {
					kept = append(kept, u)
				}
			}
			s.updates = kept
		}
		var out []json.RawMessage
		for _, u := range s.updates {
			if len(out) == limit {
				break
			}
			if kinds != nil && !kinds[kindOf(u.raw)] {
				continue // not asked for: Telegram does not send it
			}
			out = append(out, u.raw)
		}
		ch := s.changed
		s.mu.Unlock()
		if len(out) > 0 || hold <= 0 {
			if out == nil {
				out = []json.RawMessage{}
			}
			writeOK(w, out)
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-timer.C:
			writeOK(w, []json.RawMessage{})
			return
		case <-ch:
		}
	}
}

func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request) {
	f := r.Form
	chat, text, mode := f.Get("chat_id"), f.Get("text"), f.Get("parse_mode")
	if chat == "" {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: chat_id is empty"})
		return
	}
	if fail, ok := checkText(text, mode); !ok {
		writeErr(w, fail)
		return
	}
	kb, fail, ok := parseKeyboard(f.Get("reply_markup"))
	if !ok {
		writeErr(w, fail)
		return
	}
	s.mu.Lock()
	s.nextMsgID++
	id := strconv.Itoa(s.nextMsgID)
	s.texts[chat+"\x00"+id] = text
	s.keyboards[chat+"\x00"+id] = kb
	s.mu.Unlock()
	s.record(Call{Method: "sendMessage", ChatID: chat, ThreadID: f.Get("message_thread_id"), MessageID: id, Text: text, ParseMode: mode, ReplyTo: f.Get("reply_to_message_id"), Keyboard: kb, Form: f})
	writeOK(w, messageJSON(chat, id, text, f.Get("message_thread_id")))
}

func (s *Server) editMessage(w http.ResponseWriter, r *http.Request) {
	f := r.Form
	chat, id, text, mode := f.Get("chat_id"), f.Get("message_id"), f.Get("text"), f.Get("parse_mode")
	if fail, ok := checkText(text, mode); !ok {
		writeErr(w, fail)
		return
	}
	kb, fail, ok := parseKeyboard(f.Get("reply_markup"))
	if !ok {
		writeErr(w, fail)
		return
	}
	key := chat + "\x00" + id
	s.mu.Lock()
	old, ok := s.texts[key]
	same := old == text && sameKeyboard(s.keyboards[key], kb)
	if ok && !same {
		s.texts[key], s.keyboards[key] = text, kb
	}
	s.mu.Unlock()
	switch {
	case !ok:
		writeErr(w, Failure{Code: 400, Description: "Bad Request: message to edit not found"})
		return
	case same:
		writeErr(w, Failure{Code: 400, Description: "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"})
		return
	}
	s.record(Call{Method: "editMessageText", ChatID: chat, MessageID: id, Text: text, ParseMode: mode, Keyboard: kb, Form: f})
	writeOK(w, messageJSON(chat, id, text, ""))
}

func messageJSON(chat, id, text, thread string) map[string]any {
	cid, _ := strconv.ParseInt(chat, 10, 64)
	mid, _ := strconv.Atoi(id)
	typ := "private"
	if cid < 0 {
		typ = "supergroup"
	}
	m := map[string]any{"message_id": mid, "date": time.Now().Unix(), "chat": map[string]any{"id": cid, "type": typ}, "text": text}
	if t, err := strconv.Atoi(thread); err == nil && t != 0 {
		m["message_thread_id"] = t
		m["is_topic_message"] = true
	}
	return m
}

// allowedTags are the HTML tags Telegram's parse_mode=HTML accepts.
var allowedTags = map[string]bool{"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true, "s": true,
	"strike": true, "del": true, "a": true, "code": true, "pre": true, "span": true, "tg-spoiler": true, "blockquote": true}

var tagRE = regexp.MustCompile(`<(/?)([a-zA-Z-]+)[^>]*>`)

// checkText applies Telegram's checks to a message text.
func checkText(text, mode string) (Failure, bool) {
	return checkEntities(text, mode, 4096, "message is too long", false)
}

// checkCaption applies Telegram's checks to a file's caption (1024
// units, may be empty).
func checkCaption(text, mode string) (Failure, bool) {
	return checkEntities(text, mode, 1024, "message caption is too long", true)
}

// checkEntities parses text in mode and checks its visible length
// against limit (tooLong names the refusal).
func checkEntities(text, mode string, limit int, tooLong string, emptyOK bool) (Failure, bool) {
	visible := text
	switch strings.ToLower(mode) {
	case "html":
		var stack []string
		for _, m := range tagRE.FindAllStringSubmatch(text, -1) {
			name := strings.ToLower(m[2])
			if !allowedTags[name] {
				return Failure{Code: 400, Description: "Bad Request: can't parse entities: Unsupported start tag \"" + name + "\""}, false
			}
			if m[1] == "" {
				stack = append(stack, name)
				continue
			}
			if len(stack) == 0 || stack[len(stack)-1] != name {
				return Failure{Code: 400, Description: "Bad Request: can't parse entities: Unmatched end tag \"" + name + "\""}, false
			}
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			return Failure{Code: 400, Description: "Bad Request: can't parse entities: Can't find end tag corresponding to start tag \"" + stack[len(stack)-1] + "\""}, false
		}
		stripped := tagRE.ReplaceAllString(text, "")
		if strings.Contains(stripped, "<") {
			return Failure{Code: 400, Description: "Bad Request: can't parse entities: Unexpected end of name token"}, false
		}
		visible = html.UnescapeString(stripped)
	case "markdown", "markdownv2":
		// not parsed: counted as sent
	case "":
	default:
		return Failure{Code: 400, Description: "Bad Request: unsupported parse_mode"}, false
	}
	if !emptyOK && strings.TrimSpace(visible) == "" {
		return Failure{Code: 400, Description: "Bad Request: message text is empty"}, false
	}
	if utf16Len(visible) > limit {
		return Failure{Code: 400, Description: "Bad Request: " + tooLong}, false
	}
	return Failure{}, true
}

func writeOK(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
	// flushed, so that CloseConnections, which waits for this handler,
	// cannot cut the answer off
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeErr(w http.ResponseWriter, f Failure) {
	body := map[string]any{"ok": false, "error_code": f.Code, "description": f.Description}
	params := map[string]any{}
	if f.RetryAfter > 0 {
		params["retry_after"] = f.RetryAfter
	}
	if f.MigrateToChatID != 0 {
		params["migrate_to_chat_id"] = f.MigrateToChatID
	}
	if len(params) > 0 {
		body["parameters"] = params
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.Code)
	json.NewEncoder(w).Encode(body)
}

// drop closes the connection without writing a response.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "connection dropped", http.StatusBadGateway)
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// PostWebhook posts a raw update to a bot's webhook URL with the secret
// header (none when secret is ""), as Telegram does, and returns the HTTP
// status.
func PostWebhook(ctx context.Context, webhookURL, secret string, update []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, webhookURL, bytes.NewReader(update))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
