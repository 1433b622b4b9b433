package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/hooks"
)

// typedRecorder keeps the payloads a subscriber was given, as Go values;
// claude makes it a claude-dialect subscriber (an Accept filter: it also
// gets the events herald emits for Claude Code only).
type typedRecorder struct {
	mu  sync.Mutex
	evs []hooks.Event
}

func (r *typedRecorder) subscribe(reg *hooks.Registry, claude bool, events ...string) {
	s := hooks.Subscription{Name: "typed", Attach: hooks.AttachGo, Events: events, Handler: func(ctx context.Context, ev hooks.Event) (any, error) {
		r.mu.Lock()
		r.evs = append(r.evs, ev)
		r.mu.Unlock()
		return nil, nil
	}}
	if claude {
		s.Accept = func(any) bool { return true }
	}
	reg.Subscribe(s)
}

func (r *typedRecorder) of(name string) []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []any
	for _, e := range r.evs {
		if e.Name == name {
			out = append(out, e.Payload)
		}
	}
	return out
}

func readTranscript(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// Each session's transcript: Claude Code's JSON lines, written as the
// turn goes, the answer before Stop (post_llm_call) fires, secrets
// redacted, chained by parentUuid also across a restart.
func TestTranscript(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "transcripts")
	reg := hooks.NewRegistry(nil)
	var seenAtStop []map[string]any
	reg.Subscribe(hooks.Subscription{Name: "stop", Attach: hooks.AttachGo, Events: []string{hooks.PostLLMCallHook}, Handler: func(ctx context.Context, ev hooks.Event) (any, error) {
		seenAtStop = readTranscript(t, ev.Payload.(*hooks.PostLLMCall).Claude.TranscriptPath)
		return nil, nil
	}})
	tool := &stubTool{name: "lookup", out: `{"value":42}`}
	a := newAgent(toolThenText("lookup", map[string]any{"key": "alpha"}), reg, tool)
	a.TranscriptDir, a.Workdir = dir, "/srv/project"
	a.Redactor.Add("hunter2-secret-value")
	turn := Turn{SessionID: "sess-1"}
	if _, err := a.Run(context.Background(), "my password is hunter2-secret-value", Options{Turn: turn}); err != nil {
		t.Fatal(err)
	}
	drain(t, reg)
	path := filepath.Join(dir, "sess-1.jsonl")
	lines := readTranscript(t, path)
	if len(seenAtStop) != 4 || len(lines) != 4 {
		t.Fatalf("lines at Stop %d, after %d, want 4", len(seenAtStop), len(lines))
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), "hunter2-secret-value") {
		t.Error("a secret reached the transcript")
	}
	for i, wantType := range []string{"user", "assistant", "user", "assistant"} {
		l := lines[i]
		if l["type"] != wantType || l["sessionId"] != "sess-1" || l["cwd"] != "/srv/project" || l["uuid"] == "" {
			t.Errorf("line %d: %v", i, l)
		}
		if _, err := time.Parse(time.RFC3339, l["timestamp"].(string)); err != nil {
			t.Errorf("line %d timestamp: %v", i, err)
		}
		if i == 0 && l["parentUuid"] != nil || i > 0 && l["parentUuid"] != lines[i-1]["uuid"] {
			t.Errorf("line %d parentUuid %v", i, l["parentUuid"])
		}
		msg := l["message"].(map[string]any)
		if msg["role"] != wantType {
			t.Errorf("line %d role %v", i, msg["role"])
		}
	}
	use := lines[1]["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
	if use["type"] != "tool_use" || use["id"] != "call_1" || use["name"] != "lookup" || use["input"].(map[string]any)["key"] != "alpha" {
		t.Errorf("tool_use block %v", use)
	}
	res := lines[2]["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
	if res["type"] != "tool_result" || res["tool_use_id"] != "call_1" || res["content"] != `{"value":42}` || res["is_error"] != false {
		t.Errorf("tool_result block %v", res)
	}
	if r, _ := lines[2]["toolUseResult"].(map[string]any); r["value"] != 42.0 {
		t.Errorf("toolUseResult %v", lines[2]["toolUseResult"])
	}
	text := lines[3]["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
	if text["type"] != "text" || text["text"] != `tool said: {"value":42}` {
		t.Errorf("answer block %v", text)
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v", p, st.Mode().Perm(), want)
		}
	}
	// a restarted herald goes on from the file's last line
	b := newAgent(&funcModel{fn: func(int, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return textResp("again"), nil
	}}, nil)
	b.TranscriptDir = dir
	if _, err := b.Run(context.Background(), "more", Options{Turn: turn, History: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	after := readTranscript(t, path)
	if len(after) != 6 || after[4]["parentUuid"] != lines[3]["uuid"] {
		t.Errorf("after a restart: %d lines, parent %v, want %v", len(after), after[4]["parentUuid"], lines[3]["uuid"])
	}
	if a.TranscriptPath("../x") != "" || a.TranscriptPath("") != "" {
		t.Error("a session id that cannot name a file got a transcript")
	}
}

// What Claude-dialect hooks read beyond Hermes' keys: the transcript, the
// approval mode, the working directory, and a tool call's outcome.
func TestClaudeFields(t *testing.T) {
	dir := t.TempDir()
	reg := hooks.NewRegistry(nil)
	rec := &typedRecorder{}
	rec.subscribe(reg, true, hooks.PreLLMCallHook, hooks.PreToolCallHook, hooks.PostToolCallHook, hooks.PostLLMCallHook, hooks.OnSessionStartHook)
	failing := &errTool{name: "broken"}
	script := []openai.ChatCompletionResponse{
		callResp("c1", "terminal", map[string]any{"command": "echo out; exit 3"}),
		callResp("c2", "broken", map[string]any{}),
		callResp("c3", "nosuch", map[string]any{}),
		callResp("c4", "terminal", map[string]any{"command": "echo fine"}),
		callResp("c5", "terminal", map[string]any{"command": "sudo rm -rf /tmp/x"}),
		textResp("done"),
	}
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return script[n-1], nil
	}}
	a := newAgent(m, reg, &Terminal{}, failing)
	a.TranscriptDir, a.Workdir, a.ApprovalMode = dir, "/srv/project", ModeOff
	if _, err := a.Run(context.Background(), "go", Options{Turn: Turn{SessionID: "s1"}}); err != nil {
		t.Fatal(err)
	}
	drain(t, reg)
	want := hooks.Claude{TranscriptPath: filepath.Join(dir, "s1.jsonl"), PermissionMode: "dontAsk", Cwd: "/srv/project"}
	for _, name := range []string{hooks.PreLLMCallHook, hooks.PreToolCallHook, hooks.PostToolCallHook, hooks.PostLLMCallHook, hooks.OnSessionStartHook} {
		for _, p := range rec.of(name) {
			var got hooks.Claude
			switch p := p.(type) {
			case *hooks.PreLLMCall:
				got = p.Claude
			case *hooks.PreToolCall:
				got = p.Claude
			case *hooks.ToolResult:
				got = p.Claude
			case *hooks.PostLLMCall:
				got = p.Claude
			case *hooks.SessionStarted:
				got = p.Claude
			}
			if got != want {
				t.Errorf("%s Claude = %+v, want %+v", name, got, want)
			}
		}
	}
	results := rec.of(hooks.PostToolCallHook)
	if len(results) != 5 {
		t.Fatalf("%d post_tool_call", len(results))
	}
	for i, w := range []struct {
		failure string
		denied  bool
	}{{"Exit code 3\nout", false}, {"broken: it broke", false}, {"unknown tool: nosuch", false}, {"", false}, {"command denied: ", true}} {
		p := results[i].(*hooks.ToolResult)
		if !strings.HasPrefix(p.Failure, w.failure) || (w.failure == "" && p.Failure != "") || p.Denied != w.denied || p.Interrupted {
			t.Errorf("call %d: failure %q denied %v, want %q %v", i+1, p.Failure, p.Denied, w.failure, w.denied)
		}
	}
	lines := readTranscript(t, want.TranscriptPath)
	for _, l := range lines {
		if blocks, ok := l["message"].(map[string]any)["content"].([]any); ok && l["type"] == "user" {
			b := blocks[0].(map[string]any)
			if id := b["tool_use_id"]; (id != "c4") != (b["is_error"] == true) {
				t.Errorf("%v is_error %v", id, b["is_error"])
			}
		}
	}
}

type errTool struct{ name string }

func (e *errTool) Name() string            { return e.name }
func (e *errTool) Description() string     { return "fails" }
func (e *errTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (e *errTool) Run(ctx context.Context, c *Call) (string, error) {
	return "", errors.New("broken: it broke")
}

// SessionStart's sources the agent decides: resume (a stored session's
// first turn here: Hermes has no event) and compact (turns dropped to fit
// the window, once a run).
func TestSessionStartSources(t *testing.T) {
	hist := []openai.ChatCompletionMessage{{Role: "user", Content: strings.Repeat("old words ", 200)}, {Role: "assistant", Content: "ok"}}
	for _, tc := range []struct {
		name, source string
		window       int
		history      []openai.ChatCompletionMessage
		claude       []string // sources a claude-dialect subscriber gets
		hermes       int      // on_session_start a Hermes subscriber gets
	}{
		{"new", "", 0, nil, []string{""}, 1},
		{"clear", "clear", 0, nil, []string{"clear"}, 1},
		{"resume", "resume", 0, hist[1:], []string{"resume"}, 0},
		{"later turn", "", 0, hist[1:], nil, 0},
		{"compact", "", 300, hist, []string{"compact"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := hooks.NewRegistry(nil)
			claude, hermes := &typedRecorder{}, &typedRecorder{}
			claude.subscribe(reg, true, hooks.OnSessionStartHook)
			hermes.subscribe(reg, false, hooks.OnSessionStartHook)
			m := toolThenText("lookup", map[string]any{})
			a := newAgent(m, reg, &stubTool{name: "lookup"})
			a.ContextWindow = tc.window
			if _, err := a.Run(context.Background(), "now", Options{Turn: Turn{SessionID: "s"}, History: tc.history, SessionSource: tc.source}); err != nil {
				t.Fatal(err)
			}
			drain(t, reg)
			var got []string
			for _, p := range claude.of(hooks.OnSessionStartHook) {
				got = append(got, p.(*hooks.SessionStarted).Source)
			}
			if strings.Join(got, ",") != strings.Join(tc.claude, ",") || len(hermes.of(hooks.OnSessionStartHook)) != tc.hermes {
				t.Errorf("claude sources %q, hermes %d; want %q, %d", got, len(hermes.of(hooks.OnSessionStartHook)), tc.claude, tc.hermes)
			}
		})
	}
}

// A sub-agent: its payloads name it (agent_id, the parent's session and
// transcript), it has its own transcript, and SubagentStop carries both.
func TestSubagentClaudeFields(t *testing.T) {
	dir := t.TempDir()
	reg := hooks.NewRegistry(nil)
	rec := &typedRecorder{}
	rec.subscribe(reg, true, hooks.PostLLMCallHook, hooks.SubagentStopHook)
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		if strings.HasPrefix(req.Messages[0].Content, "find it") {
			return textResp("found"), nil
		}
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return textResp("all done"), nil
		}
		return callResp("d1", "delegate_task", map[string]any{"goal": "find it", "role": "researcher"}), nil
	}}
	a := newAgent(m, reg)
	a.Tools.Add(&Delegate{Agent: a})
	a.TranscriptDir = dir
	if _, err := a.Run(context.Background(), "delegate", Options{Turn: Turn{SessionID: "p1"}}); err != nil {
		t.Fatal(err)
	}
	drain(t, reg)
	stops := rec.of(hooks.SubagentStopHook)
	if len(stops) != 1 {
		t.Fatalf("%d subagent_stop", len(stops))
	}
	st := stops[0].(*hooks.SubagentStop)
	if !strings.HasPrefix(st.AgentID, "p1-sub1-") || st.AgentTranscriptPath != filepath.Join(dir, st.AgentID+".jsonl") || st.Claude.TranscriptPath != filepath.Join(dir, "p1.jsonl") {
		t.Errorf("subagent_stop %+v", st)
	}
	var child, parent *hooks.PostLLMCall
	for _, p := range rec.of(hooks.PostLLMCallHook) {
		if p := p.(*hooks.PostLLMCall); p.SessionID == st.AgentID {
			child = p
		} else {
			parent = p
		}
	}
	if child == nil || parent == nil {
		t.Fatal("post_llm_call of the child or the parent missing")
	}
	if c := child.Claude; c.AgentID != st.AgentID || c.SessionID != "p1" || c.AgentType != "researcher" || c.TranscriptPath != filepath.Join(dir, "p1.jsonl") {
		t.Errorf("child Claude %+v", c)
	}
	if parent.Claude.AgentID != "" {
		t.Errorf("parent Claude %+v", parent.Claude)
	}
	lines := readTranscript(t, st.AgentTranscriptPath)
	if len(lines) != 2 || lines[0]["isSidechain"] != true || lines[0]["sessionId"] != "p1" || lines[0]["agentId"] != st.AgentID {
		t.Errorf("child transcript %v", lines)
	}
}
