package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// recorder is a Go subscriber on "*" that keeps event names in order.
type recorder struct {
	mu     sync.Mutex
	events []hooks.Event
	grew   chan struct{}
}

func newRecorder(reg *hooks.Registry) *recorder {
	return subscribeRecorder(reg, hooks.Subscription{Name: "recorder", Attach: hooks.AttachInternal, Events: []string{"*"}, QueueSize: 1 << 16})
}

// subscribeRecorder subscribes s with a handler recording what it gets.
func subscribeRecorder(reg *hooks.Registry, s hooks.Subscription) *recorder {
	rc := &recorder{grew: make(chan struct{}, 1)}
	s.Handler = func(ctx context.Context, ev hooks.Event) (any, error) {
		rc.mu.Lock()
		rc.events = append(rc.events, ev)
		rc.mu.Unlock()
		select {
		case rc.grew <- struct{}{}:
		default:
		}
		return nil, nil
	}
	reg.Subscribe(s)
	return rc
}

// names returns the recorded names that are in keep (all when empty).
func (rc *recorder) names(keep ...string) []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, e := range rc.events {
		if len(keep) == 0 || slices.Contains(keep, e.Name) {
			out = append(out, e.Name)
		}
	}
	return out
}

// waitFor waits until the filtered names equal want.
func (rc *recorder) waitFor(t *testing.T, want []string, keep ...string) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		got := rc.names(keep...)
		if slices.Equal(got, want) {
			return
		}
		if len(got) > len(want) {
			t.Fatalf("events:\n got  %v\n want %v", got, want)
		}
		select {
		case <-rc.grew:
		case <-deadline.C:
			t.Fatalf("events after 10s:\n got  %v\n want %v", got, want)
		}
	}
}

func (rc *recorder) payloads(name string) []any {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []any
	for _, e := range rc.events {
		if e.Name == name {
			out = append(out, e.Payload)
		}
	}
	return out
}

// gate is a model that blocks every call until released (or its context
// ends), then echoes; it records the prompts it saw.
type gate struct {
	mu      sync.Mutex
	started chan string // the last user message of each call
	release chan struct{}
	named   map[string]chan struct{}
	seen    [][]openai.ChatCompletionMessage
}

// releaseOnly lets the call whose last message is text go on.
func (g *gate) releaseOnly(text string) {
	g.chanFor(text) <- struct{}{}
}

func (g *gate) chanFor(text string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.named == nil {
		g.named = map[string]chan struct{}{}
	}
	ch := g.named[text]
	if ch == nil {
		ch = make(chan struct{}, 8)
		g.named[text] = ch
	}
	return ch
}

func newGate() *gate {
	return &gate{started: make(chan string, 64), release: make(chan struct{}, 64)}
}

func (g *gate) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	g.mu.Lock()
	g.seen = append(g.seen, slices.Clone(req.Messages))
	g.mu.Unlock()
	last := req.Messages[len(req.Messages)-1].Content
	g.started <- last
	select {
	case <-g.release:
	case <-g.chanFor(last):
	case <-ctx.Done():
		return openai.ChatCompletionResponse{}, ctx.Err()
	}
	return agent.Echo{}.Complete(ctx, req)
}

func (g *gate) wait(t *testing.T) string {
	t.Helper()
	select {
	case s := <-g.started:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("the model was not called")
		return ""
	}
}

type harness struct {
	t      *testing.T
	store  *sessions.Store
	reg    *hooks.Registry
	rec    *recorder
	runner *Runner
	loc    *local.Adapter
	srv    *httptest.Server
	cancel context.CancelFunc
	done   chan error
	closed sync.Once
}

type harnessOpt func(*Config)

func newHarness(t *testing.T, model agent.Model, opts ...harnessOpt) *harness {
	t.Helper()
	return newHarnessAt(t, filepath.Join(t.TempDir(), "state.db"), model, opts...)
}

// newHarnessAt is newHarness on the state database at path.
func newHarnessAt(t *testing.T, path string, model agent.Model, opts ...harnessOpt) *harness {
	t.Helper()
	st, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	reg := hooks.NewRegistry(nil)
	h := &harness{t: t, store: st, reg: reg, rec: newRecorder(reg)}
	if model == nil {
		model = agent.Echo{}
	}
	tools := agent.NewTools(dangerTool{})
	ag := &agent.Agent{Model: model, Tools: tools, Hooks: reg, ModelName: "echo-test"}
	h.loc = local.New(local.Config{Listen: "127.0.0.1:0", Token: "tok", Health: h.health, Delivery: h.delivery})
	cfg := Config{
		Adapters: []adapters.Adapter{h.loc}, Store: st, Hooks: reg, Agent: ag,
		Auth: map[herald.Platform]PlatformAuth{herald.PlatformLocal: {TrustAll: true}},
	}
	for _, o := range opts {
		o(&cfg)
	}
	if l, ok := cfg.Adapters[0].(*local.Adapter); ok {
		h.loc = l
	}
	h.runner = New(cfg)
	h.srv = httptest.NewServer(h.loc.Handler(h.runner))
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan error, 1)
	go func() { h.done <- h.runner.Run(ctx) }()
	t.Cleanup(h.close)
	return h
}

func (h *harness) close() { h.closed.Do(h.stop) }

func (h *harness) stop() {
	h.srv.Close()
	h.cancel()
	<-h.done
	reg := h.reg
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	reg.Close(ctx)
	cancel()
	h.store.Close()
}

// health is the runner's Health for /healthz, as cmd wires it.
func (h *harness) health() map[string]string { return h.runner.Health() }

// delivery is the runner's Delivery for /healthz, as cmd wires it.
func (h *harness) delivery() local.Delivery {
	d := h.runner.Delivery()
	return local.Delivery{MaybeSent: d.MaybeSent, Queued: d.Queued}
}

// allowOnly sets the local platform's allowlist.
func allowOnly(users ...string) harnessOpt {
	return func(c *Config) {
		c.Auth[herald.PlatformLocal] = PlatformAuth{TrustAll: true, AllowedUsers: users}
	}
}

type msg struct {
	Chat, User, Text, Type, ID string
	Mentioned                  *bool
}

type resp struct {
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
	Replies   []struct {
		Text string `json:"text"`
	} `json:"replies"`
	MessageID string `json:"message_id"`
}

func (r resp) texts() []string {
	var out []string
	for _, x := range r.Replies {
		out = append(out, x.Text)
	}
	return out
}

func (r resp) text() string { return strings.Join(r.texts(), "\n---\n") }

// post sends one message through the local platform's HTTP API.
func (h *harness) post(m msg) resp {
	h.t.Helper()
	r, err := h.postErr(m)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

func (h *harness) postErr(m msg) (resp, error) {
	if m.Chat == "" {
		m.Chat = "c1"
	}
	body := map[string]any{"chat_id": m.Chat, "user_id": m.User, "text": m.Text}
	if m.Type != "" {
		body["chat_type"] = m.Type
	}
	if m.ID != "" {
		body["message_id"] = m.ID
	}
	if m.Mentioned != nil {
		body["mentioned"] = *m.Mentioned
	}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/messages?wait=20", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer tok")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return resp{}, err
	}
	defer res.Body.Close()
	var out resp
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return resp{}, err
	}
	if res.StatusCode != 200 {
		return out, fmt.Errorf("status %d: %+v", res.StatusCode, out)
	}
	return out, nil
}

// async posts in the background; the result arrives on the channel.
func (h *harness) async(m msg) <-chan resp {
	ch := make(chan resp, 1)
	go func() {
		r, err := h.postErr(m)
		if err != nil {
			r.Status = "error: " + err.Error()
		}
		ch <- r
	}()
	return ch
}

func recv(t *testing.T, ch <-chan resp) resp {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("no response")
		return resp{}
	}
}

// transcript returns the stored messages of the chat's open session.
func (h *harness) transcript(src herald.Source) []sessions.Message {
	h.t.Helper()
	if src.Platform == "" {
		src.Platform = herald.PlatformLocal
	}
	if src.ChatType == "" {
		src.ChatType = herald.ChatDM
	}
	s, err := h.store.OpenSession(context.Background(), sessions.Key(src, sessions.KeyOptions{}))
	if err != nil || s == nil {
		return nil
	}
	ms, err := h.store.Messages(context.Background(), s.ID, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	return ms
}

// dangerTool asks for approval before "running".
type dangerTool struct{}

func (dangerTool) Name() string        { return "terminal" }
func (dangerTool) Description() string { return "test terminal" }
func (dangerTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)
}
func (dangerTool) Run(ctx context.Context, c *agent.Call) (string, error) {
	cmd := c.String("command")
	if err := c.Approve(ctx, cmd, "test: dangerous", []string{"danger"}); err != nil {
		if errors.Is(err, agent.ErrDenied) {
			return `{"error":"denied"}`, nil
		}
		return "", err
	}
	return "ran " + cmd, nil
}

func ptr[T any](v T) *T { return &v }

// register subscribes a Go interceptor/observer for tests.
func register(reg *hooks.Registry, name string, h hooks.Handler) {
	reg.LoadPlugins(hooks.Plugin{Name: "test-" + name, Register: func(pc *hooks.PluginContext) error {
		pc.RegisterHook(name, h)
		return nil
	}})
}

func sourceC1() herald.Source {
	return herald.Source{Platform: herald.PlatformLocal, ChatID: "c1", ChatType: herald.ChatDM, UserID: "u1"}
}

// localMax gives the local platform a message length limit.
func localMax(n int) harnessOpt {
	return func(c *Config) {
		c.Adapters[0] = local.New(local.Config{Listen: "127.0.0.1:0", Token: "tok", MaxMessageLength: n})
	}
}
