package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/hooks"
)

var update = flag.Bool("update", false, "rewrite golden files")

// funcModel is an in-process Model: fn answers each request.
type funcModel struct {
	mu   sync.Mutex
	n    int
	reqs []openai.ChatCompletionRequest
	fn   func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

func (m *funcModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	m.mu.Lock()
	m.n++
	n := m.n
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return openai.ChatCompletionResponse{}, err
	}
	return m.fn(n, req)
}

func (m *funcModel) requests() []openai.ChatCompletionRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]openai.ChatCompletionRequest(nil), m.reqs...)
}

func textResp(s string) openai.ChatCompletionResponse {
	return openai.ChatCompletionResponse{Model: "m", Choices: []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonStop,
		Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: s}}}}
}

func callResp(id, name string, args any) openai.ChatCompletionResponse {
	b, _ := json.Marshal(args)
	return openai.ChatCompletionResponse{Model: "m", Choices: []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonToolCalls,
		Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
			ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: string(b)}}}}}}}
}

// toolThenText asks for one tool call first, then answers with the last
// message's content.
func toolThenText(name string, args any) *funcModel {
	return &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == openai.ChatMessageRoleTool {
			return textResp("tool said: " + last.Content), nil
		}
		return callResp("call_1", name, args), nil
	}}
}

// recorder captures the payloads a registry delivered, as JSON.
type recorder struct {
	mu  sync.Mutex
	evs []recorded
}

type recorded struct {
	Name    string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
}

func (r *recorder) handler(ctx context.Context, ev hooks.Event) (any, error) {
	b, err := json.Marshal(ev.Payload)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.evs = append(r.evs, recorded{ev.Name, normalize(b)})
	r.mu.Unlock()
	return nil, nil
}

func (r *recorder) events() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.evs...)
}

func (r *recorder) names() []string {
	var out []string
	for _, e := range r.events() {
		out = append(out, e.Name)
	}
	return out
}

func (r *recorder) of(name string) []recorded {
	var out []recorded
	for _, e := range r.events() {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// normalize zeroes what changes from run to run (durations).
func normalize(b []byte) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return b
	}
	for _, k := range []string{"duration_ms", "api_duration"} {
		if _, ok := m[k]; ok {
			m[k] = 0
		}
	}
	out, _ := json.Marshal(m)
	return out
}

// agentLevel are the catalogue names the agent package emits.
var agentLevel = []string{
	hooks.OnSessionStartHook, hooks.PreLLMCallHook, hooks.PreAPIRequestHook, hooks.PostAPIRequestHook,
	hooks.PreToolCallHook, hooks.PostToolCallHook, hooks.TransformToolResultHook, hooks.TransformTerminalOutputHook,
	hooks.AgentStepEv, hooks.TransformLLMOutputHook, hooks.PostLLMCallHook, hooks.OnSessionEndHook,
	hooks.SubagentStopHook, hooks.PreApprovalRequestHook, hooks.PostApprovalResponseHook,
}

// observe subscribes a recorder to every agent-level observer point.
func observe(reg *hooks.Registry) *recorder {
	rec := &recorder{}
	var obs []string
	for _, n := range agentLevel {
		if p, ok := hooks.Lookup(n); ok && p.Kind == hooks.Observer {
			obs = append(obs, n)
		}
	}
	reg.Subscribe(hooks.Subscription{Name: "recorder", Attach: hooks.AttachGo, Events: obs, Handler: rec.handler})
	return rec
}

// drain delivers every queued observer event.
func drain(t testing.TB, reg *hooks.Registry) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := reg.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func golden(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	p := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(b)) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", p, b, want)
	}
}

// logBuffer is a slog logger writing text to a buffer, safe for
// concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// stubTool is a test fixture tool that records its calls.
type stubTool struct {
	name string
	mu   sync.Mutex
	args []map[string]any
	out  string
}

func (s *stubTool) Name() string        { return s.name }
func (s *stubTool) Description() string { return "test tool " + s.name }
func (s *stubTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}
func (s *stubTool) Run(ctx context.Context, c *Call) (string, error) {
	s.mu.Lock()
	s.args = append(s.args, c.Args)
	s.mu.Unlock()
	if s.out != "" {
		return s.out, nil
	}
	b, _ := json.Marshal(map[string]any{"ok": true, "args": c.Args})
	return string(b), nil
}

func (s *stubTool) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.args)
}

func newAgent(m Model, reg *hooks.Registry, tools ...Tool) *Agent {
	return &Agent{Model: m, Tools: NewTools(tools...), Hooks: reg, Redactor: herald.NewRedactor(), ModelName: "test-model", Provider: "test", BaseURL: "http://fake"}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func mustContain(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}
