// Package gatewaytest runs a real gateway.Runner behind the local
// platform's HTTP API on 127.0.0.1, with a fresh store and the offline
// echo model, for end-to-end tests of plugins and examples.
package gatewaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// Options shape the gateway.
type Options struct {
	Plugins []hooks.Plugin
	// Local is the local platform's access rule (default: trust all).
	Local *gateway.PlatformAuth
	// Model defaults to agent.Echo.
	Model agent.Model
}

// Gateway is a running gateway.
type Gateway struct {
	Store  *sessions.Store
	Hooks  *hooks.Registry
	Runner *gateway.Runner
	URL    string
	srv    *httptest.Server
}

// Start runs a gateway until the test ends.
func Start(t *testing.T, o Options) *Gateway {
	t.Helper()
	st, err := sessions.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg := hooks.NewRegistry(nil)
	for _, lp := range reg.LoadPlugins(o.Plugins...) {
		_ = lp
	}
	model := o.Model
	if model == nil {
		model = agent.Echo{}
	}
	auth := gateway.PlatformAuth{TrustAll: true}
	if o.Local != nil {
		auth = *o.Local
	}
	loc := local.New(local.Config{Listen: "127.0.0.1:0", Token: "test-token", Outbox: st})
	r := gateway.New(gateway.Config{
		Adapters: []adapters.Adapter{loc}, Store: st, Hooks: reg,
		Agent: &agent.Agent{Model: model, Tools: agent.NewTools(), Hooks: reg, ModelName: "echo"},
		Auth:  map[herald.Platform]gateway.PlatformAuth{herald.PlatformLocal: auth},
	})
	srv := httptest.NewServer(loc.Handler(r))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		reg.Close(cctx)
		ccancel()
		st.Close()
	})
	return &Gateway{Store: st, Hooks: reg, Runner: r, URL: srv.URL, srv: srv}
}

// Message is one inbound message for Post.
type Message struct {
	Chat, ChatType, User, UserName, Text string
	// Mentioned defaults to true for DMs and false in groups.
	Mentioned *bool
}

// Response is the local platform's answer.
type Response struct {
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
	Replies   []struct {
		Text string `json:"text"`
	} `json:"replies"`
}

// Text joins the replies with newlines.
func (r Response) Text() string {
	var s []string
	for _, x := range r.Replies {
		s = append(s, x.Text)
	}
	return strings.Join(s, "\n")
}

// Post sends m and waits for its handling to end.
func (g *Gateway) Post(t *testing.T, m Message) Response {
	t.Helper()
	if m.ChatType == "" {
		m.ChatType = "dm"
	}
	mentioned := m.ChatType == "dm"
	if m.Mentioned != nil {
		mentioned = *m.Mentioned
	}
	b, _ := json.Marshal(map[string]any{"chat_id": m.Chat, "chat_type": m.ChatType, "user_id": m.User, "user_name": m.UserName, "text": m.Text, "mentioned": mentioned})
	req, _ := http.NewRequest("POST", g.URL+"/v1/messages?wait=20", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer test-token")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out Response
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
		t.Fatalf("post %q: status %d, %v", m.Text, res.StatusCode, err)
	}
	return out
}

// Transcript returns the stored messages of the open session of a chat on
// the local platform ("role: content" each).
func (g *Gateway) Transcript(t *testing.T, chat, chatType, user string) []string {
	t.Helper()
	key := sessions.Key(herald.Source{Platform: herald.PlatformLocal, ChatID: chat, ChatType: herald.ChatType(chatType), UserID: user}, sessions.KeyOptions{GroupPerUser: false})
	s, err := g.Store.OpenSession(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if s == nil {
		return nil
	}
	ms, err := g.Store.Messages(context.Background(), s.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s: %s", m.Role, m.Content))
	}
	return out
}
