// Package teamstest is a fake of the Microsoft side of a Teams bot, for
// tests, on 127.0.0.1: the Bot Framework's OpenID metadata document and
// JWKS (its own RSA key), the token endpoint (client credentials,
// checking the app id and password), the Connector REST API (activities
// sent, updated and deleted, recorded), and an activity sender that
// POSTs activities to the bot signed with its key — or with a wrong key,
// expired, or for another audience.
//
// Waits are event driven: WaitSent returns as soon as the bot has sent
// that many messages.
package teamstest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer is the Bot Framework's token issuer.
const Issuer = "https://api.botframework.com"

// BotID is the bot's id in the conversations the fake makes ("28:" and
// the app id, as Teams writes it).
func (s *Server) BotID() string { return "28:" + s.opt.AppID }

// Options configure a Server.
type Options struct {
	// AppID and AppPassword are the bot's credentials (defaults below).
	AppID, AppPassword string
	// TokenTTL is the lifetime of the tokens the token endpoint issues
	// (default an hour).
	TokenTTL time.Duration
}

// Default credentials.
const (
	DefaultAppID       = "00000000-0000-0000-0000-0000000a99id"
	DefaultAppPassword = "teams-test-app-password-0123456789"
)

// Activity is one activity the bot sent to the Connector (or a change to
// one).
type Activity struct {
	// Method is POST (a new activity), PUT (an update) or DELETE.
	Method string
	// Conversation is the conversation id in the URL; ActivityID the id
	// of the activity updated or deleted (or the new activity's id).
	Conversation, ActivityID string
	Type, Text, TextFormat   string
	ReplyToID                string
	// Attachments are the activity's attachments, as sent.
	Attachments []Attachment
	// Edits and Deleted are set by Sent: how many times the message was
	// updated, and whether it was deleted.
	Edits   int
	Deleted bool
}

// Attachment is an activity attachment.
type Attachment struct {
	ContentType string          `json:"contentType"`
	Content     json.RawMessage `json:"content"`
}

// Card is an Adaptive Card's actions, as herald draws buttons.
type Card struct {
	Type    string `json:"type"`
	Actions []struct {
		Type  string            `json:"type"`
		Title string            `json:"title"`
		Style string            `json:"style"`
		Data  map[string]string `json:"data"`
	} `json:"actions"`
}

// Cards returns the Adaptive Cards among the activity's attachments.
func (a Activity) Cards() []Card {
	var out []Card
	for _, at := range a.Attachments {
		if at.ContentType != "application/vnd.microsoft.card.adaptive" {
			continue
		}
		var c Card
		if json.Unmarshal(at.Content, &c) == nil {
			out = append(out, c)
		}
	}
	return out
}

// Server is the fake.
type Server struct {
	opt  Options
	srv  *httptest.Server
	key  *rsa.PrivateKey
	kid  string
	bad  *rsa.PrivateKey
	tick chan struct{}

	mu            sync.Mutex
	activities    []Activity
	tokens        map[string]time.Time
	tokenRequests int
	keyFetches    int
	calls         int
	limitNext     int
	limitAfter    int
	nextID        int
}

var (
	keysOnce sync.Once
	good     *rsa.PrivateKey
	wrong    *rsa.PrivateKey
)

// keys are made once per test binary: RSA key generation is slow.
func keys() (*rsa.PrivateKey, *rsa.PrivateKey) {
	keysOnce.Do(func() {
		var err error
		if good, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if wrong, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return good, wrong
}

// New starts a fake; Close it when done.
func New(o Options) *Server {
	if o.AppID == "" {
		o.AppID = DefaultAppID
	}
	if o.AppPassword == "" {
		o.AppPassword = DefaultAppPassword
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = time.Hour
	}
	k, b := keys()
	s := &Server{opt: o, key: k, bad: b, kid: "teamstest-key-1", tokens: map[string]time.Time{}, tick: make(chan struct{}, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openid", s.metadata)
	mux.HandleFunc("GET /keys", s.jwks)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("/v3/conversations/", s.connector)
	s.srv = httptest.NewServer(mux)
	return s
}

// Close stops the fake.
func (s *Server) Close() { s.srv.Close() }

// AppID and AppPassword are the bot's credentials.
func (s *Server) AppID() string       { return s.opt.AppID }
func (s *Server) AppPassword() string { return s.opt.AppPassword }

// OpenIDMetadataURL is the metadata document's URL.
func (s *Server) OpenIDMetadataURL() string { return s.srv.URL + "/openid" }

// TokenURL is the token endpoint.
func (s *Server) TokenURL() string { return s.srv.URL + "/token" }

// ServiceURL is the Connector's base URL, as activities name it.
func (s *Server) ServiceURL() string { return s.srv.URL + "/" }

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{
		"issuer": Issuer, "jwks_uri": s.srv.URL + "/keys",
		"id_token_signing_alg_values_supported": []string{"RS256"},
	})
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.keyFetches++
	s.mu.Unlock()
	pub := s.key.PublicKey
	writeJSON(w, map[string]any{"keys": []map[string]any{{
		"kty": "RSA", "use": "sig", "kid": s.kid,
		"n":            base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		"e":            base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
		"endorsements": []string{"msteams"},
	}}})
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	s.mu.Lock()
	s.tokenRequests++
	s.mu.Unlock()
	if r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "https://api.botframework.com/.default" {
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]string{"error": "invalid_request"})
		return
	}
	if r.PostForm.Get("client_id") != s.opt.AppID || r.PostForm.Get("client_secret") != s.opt.AppPassword {
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]string{"error": "invalid_client"})
		return
	}
	buf := make([]byte, 16)
	rand.Read(buf)
	tok := "teamstest-bot-token-" + base64.RawURLEncoding.EncodeToString(buf)
	s.mu.Lock()
	s.tokens[tok] = time.Now().Add(s.opt.TokenTTL)
	s.mu.Unlock()
	writeJSON(w, map[string]any{"token_type": "Bearer", "expires_in": int(s.opt.TokenTTL / time.Second), "access_token": tok})
}

// connector serves /v3/conversations/{id}/activities[/{activityId}].
func (s *Server) connector(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/v3/conversations/")
	conv, tail, ok := strings.Cut(rest, "/activities")
	if !ok || conv == "" {
		http.NotFound(w, r)
		return
	}
	activityID := strings.TrimPrefix(tail, "/")
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	exp, known := s.tokens[tok]
	s.mu.Unlock()
	if !known || time.Now().After(exp) {
		w.WriteHeader(http.StatusUnauthorized)
		writeJSON(w, map[string]any{"error": map[string]string{"code": "Unauthorized", "message": "bad token"}})
		return
	}
	var body struct {
		Type        string       `json:"type"`
		Text        string       `json:"text"`
		TextFormat  string       `json:"textFormat"`
		ReplyToID   string       `json:"replyToId"`
		Attachments []Attachment `json:"attachments"`
	}
	if r.Method != http.MethodDelete {
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]any{"error": map[string]string{"code": "BadArgument", "message": err.Error()}})
			return
		}
	}
	// rate limits and the call count apply to new messages (typing
	// indicators and updates come and go with timing)
	limited, after := false, 0
	if r.Method == http.MethodPost && body.Type == "message" {
		s.mu.Lock()
		s.calls++
		if s.limitNext > 0 {
			s.limitNext--
			limited, after = true, s.limitAfter
		}
		s.mu.Unlock()
	}
	if limited {
		w.Header().Set("Retry-After", strconv.Itoa(after))
		w.WriteHeader(http.StatusTooManyRequests)
		writeJSON(w, map[string]any{"error": map[string]string{"code": "TooManyRequests", "message": "slow down"}})
		return
	}
	s.mu.Lock()
	if r.Method == http.MethodPost && activityID == "" {
		s.nextID++
		activityID = fmt.Sprintf("1700000000%03d", s.nextID)
	}
	s.activities = append(s.activities, Activity{
		Method: r.Method, Conversation: conv, ActivityID: activityID, Type: body.Type, Text: body.Text,
		TextFormat: body.TextFormat, ReplyToID: body.ReplyToID, Attachments: body.Attachments,
	})
	s.mu.Unlock()
	select {
	case s.tick <- struct{}{}:
	default:
	}
	writeJSON(w, map[string]string{"id": activityID})
}

// RateLimitNext answers the next n new messages the bot posts 429 with
// Retry-After seconds.
func (s *Server) RateLimitNext(n, retryAfter int) {
	s.mu.Lock()
	s.limitNext, s.limitAfter = n, retryAfter
	s.mu.Unlock()
}

// Activities returns every call the bot made to the Connector that was
// answered 2xx, in order.
func (s *Server) Activities() []Activity {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Activity{}, s.activities...)
}

// Sent returns the messages the bot posted, in order, as a user sees
// them now: with the text and attachments of their last update, and
// without those it deleted. Edits counts each one's updates.
func (s *Server) Sent() []Activity {
	var out []Activity
	at := map[string]int{}
	for _, a := range s.Activities() {
		switch i, ok := at[a.ActivityID]; {
		case a.Method == http.MethodPost && a.Type == "message":
			at[a.ActivityID] = len(out)
			out = append(out, a)
		case a.Method == http.MethodPut && ok:
			out[i].Text, out[i].TextFormat, out[i].Attachments = a.Text, a.TextFormat, a.Attachments
			out[i].Edits++
		case a.Method == http.MethodDelete && ok:
			out[i].Deleted = true
		}
	}
	kept := out[:0]
	for _, a := range out {
		if !a.Deleted {
			kept = append(kept, a)
		}
	}
	return kept
}

// WaitFor waits until done holds for the messages Sent returns, and
// returns them.
func (s *Server) WaitFor(ctx context.Context, done func(sent []Activity) bool) ([]Activity, error) {
	return s.wait(ctx, func() ([]Activity, bool) { got := s.Sent(); return got, done(got) })
}

// WaitText waits until a message the bot sent reads substr and returns
// it.
func (s *Server) WaitText(ctx context.Context, substr string) (Activity, error) {
	var found Activity
	_, err := s.WaitFor(ctx, func(sent []Activity) bool {
		for _, a := range sent {
			if strings.Contains(a.Text, substr) {
				found = a
				return true
			}
		}
		return false
	})
	return found, err
}

// Updates returns the activity updates (PUT), in order.
func (s *Server) Updates() []Activity {
	var out []Activity
	for _, a := range s.Activities() {
		if a.Method == http.MethodPut {
			out = append(out, a)
		}
	}
	return out
}

// Calls is how many new messages the bot tried to post (429s included).
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// KeyFetches is how many times the JWKS was read.
func (s *Server) KeyFetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keyFetches
}

// TokenRequests is how many times the token endpoint was asked.
func (s *Server) TokenRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenRequests
}

// WaitSent waits until the bot posted at least n messages and returns
// them.
func (s *Server) WaitSent(ctx context.Context, n int) ([]Activity, error) {
	return s.wait(ctx, func() ([]Activity, bool) { got := s.Sent(); return got, len(got) >= n })
}

// WaitUpdates waits until the bot made at least n updates.
func (s *Server) WaitUpdates(ctx context.Context, n int) ([]Activity, error) {
	return s.wait(ctx, func() ([]Activity, bool) { got := s.Updates(); return got, len(got) >= n })
}

func (s *Server) wait(ctx context.Context, done func() ([]Activity, bool)) ([]Activity, error) {
	for {
		got, ok := done()
		if ok {
			return got, nil
		}
		select {
		case <-s.tick:
		case <-ctx.Done():
			return got, fmt.Errorf("teamstest: waited for activities, have %d: %w", len(got), ctx.Err())
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// Signing says how the sender signs an activity's token; the zero value
// signs a valid one.
type Signing struct {
	// WrongKey signs with a key that is not in the JWKS.
	WrongKey bool
	// Expired makes a token that expired an hour ago.
	Expired bool
	// Audience replaces the app id as the audience; Issuer replaces the
	// Bot Framework's.
	Audience, Issuer string
	// ServiceURL replaces the activity's serviceUrl as the token's
	// serviceurl claim.
	ServiceURL string
	// Unsigned sends no Authorization header.
	Unsigned bool
	// KeyID replaces the key id in the token's header.
	KeyID string
}

// Token makes a Bearer token for an activity with serviceURL.
func (s *Server) Token(serviceURL string, sg Signing) string {
	now := time.Now()
	c := jwt.MapClaims{
		"iss": Issuer, "aud": s.opt.AppID, "serviceurl": serviceURL,
		"nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	if sg.Expired {
		c["nbf"], c["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-time.Hour).Unix()
	}
	if sg.Audience != "" {
		c["aud"] = sg.Audience
	}
	if sg.Issuer != "" {
		c["iss"] = sg.Issuer
	}
	if sg.ServiceURL != "" {
		c["serviceurl"] = sg.ServiceURL
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	t.Header["kid"] = s.kid
	if sg.KeyID != "" {
		t.Header["kid"] = sg.KeyID
	}
	key := s.key
	if sg.WrongKey {
		key = s.bad
	}
	out, err := t.SignedString(key)
	if err != nil {
		panic(err)
	}
	return out
}

// Post sends an activity to the bot's endpoint url and returns the HTTP
// status and body.
func (s *Server) Post(ctx context.Context, url string, act map[string]any, sg Signing) (int, []byte, error) {
	body, err := json.Marshal(act)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if !sg.Unsigned {
		su, _ := act["serviceUrl"].(string)
		req.Header.Set("Authorization", "Bearer "+s.Token(su, sg))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, nil
}

// User is a Teams user.
type User struct {
	// ID is the user's id in the bot's chats ("29:…"); AAD their object
	// id (herald's user id when set).
	ID, AAD, Name string
}

// activity is the common part of an activity from user in conversation.
func (s *Server) activity(id string, u User, conv map[string]any) map[string]any {
	return map[string]any{
		"type": "message", "id": id, "timestamp": time.Now().UTC().Format(time.RFC3339),
		"serviceUrl": s.ServiceURL(), "channelId": "msteams",
		"from":         map[string]any{"id": u.ID, "name": u.Name, "aadObjectId": u.AAD},
		"conversation": conv,
		"recipient":    map[string]any{"id": s.BotID(), "name": "herald"},
	}
}

// DM is a message from u in their personal chat with the bot; the
// conversation id is "a:" and the user's id.
func (s *Server) DM(id string, u User, text string) map[string]any {
	a := s.activity(id, u, map[string]any{"id": "a:" + u.ID, "conversationType": "personal", "tenantId": "tenant-1"})
	a["text"], a["textFormat"] = text, "plain"
	return a
}

// GroupMessage is a message from u in a group chat; mention adds a
// mention of the bot before the text.
func (s *Server) GroupMessage(id, chat string, u User, text string, mention bool) map[string]any {
	a := s.activity(id, u, map[string]any{"id": chat, "conversationType": "groupChat", "isGroup": true, "tenantId": "tenant-1"})
	s.addText(a, text, mention)
	return a
}

// ChannelMessage is a message from u in a channel, in the thread under
// root (the conversation id gets ";messageid=" root); mention adds a
// mention of the bot before the text.
func (s *Server) ChannelMessage(id, channel, root string, u User, text string, mention bool) map[string]any {
	a := s.activity(id, u, map[string]any{"id": channel + ";messageid=" + root, "conversationType": "channel", "isGroup": true, "tenantId": "tenant-1"})
	a["channelData"] = map[string]any{"channel": map[string]any{"id": channel}, "team": map[string]any{"id": "team-1"}}
	s.addText(a, text, mention)
	return a
}

func (s *Server) addText(a map[string]any, text string, mention bool) {
	if !mention {
		a["text"] = text
		return
	}
	at := "<at>herald</at>"
	a["text"] = at + " " + text
	a["entities"] = []any{map[string]any{
		"type": "mention", "text": at,
		"mentioned": map[string]any{"id": s.BotID(), "name": "herald"},
	}}
}

// Submit is u pressing an Action.Submit button on the card activity
// cardID in conversation conv: a message whose value is the action's
// data.
func (s *Server) Submit(id, conv string, u User, cardID string, data map[string]string) map[string]any {
	a := s.activity(id, u, map[string]any{"id": conv, "conversationType": "personal"})
	a["replyToId"] = cardID
	a["value"] = data
	return a
}

// ConversationUpdate is the activity Teams sends when the bot is added
// to a conversation.
func (s *Server) ConversationUpdate(id, conv string) map[string]any {
	return map[string]any{
		"type": "conversationUpdate", "id": id, "serviceUrl": s.ServiceURL(), "channelId": "msteams",
		"conversation": map[string]any{"id": conv, "conversationType": "personal"},
		"recipient":    map[string]any{"id": s.BotID()},
		"membersAdded": []any{map[string]any{"id": s.BotID()}},
	}
}
