package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// claudeDocumented is every field of Claude Code's hook input, per event
// (its hooks reference: the common fields, then each event's own). A
// payload herald sends must carry exactly these: nothing missing, nothing
// Claude does not send (agent_id and agent_type only inside a sub-agent).
var claudeDocumented = map[string][]string{
	"PreToolUse":         {"tool_name", "tool_input", "tool_use_id"},
	"PostToolUse":        {"tool_name", "tool_input", "tool_response", "tool_use_id"},
	"PostToolUseFailure": {"tool_name", "tool_input", "tool_use_id", "error", "is_interrupt"},
	"UserPromptSubmit":   {"prompt"},
	"Stop":               {"stop_hook_active", "last_assistant_message"},
	"SubagentStop":       {"stop_hook_active", "agent_id", "agent_type", "agent_transcript_path", "last_assistant_message"},
	"SessionStart":       {"source", "model"},
	"SessionEnd":         {"reason"},
	"PreCompact":         {"trigger", "custom_instructions"},
	"PostCompact":        {"trigger"},
}

var claudeCommon = []string{"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"}

func claudeGoldenCases() []struct {
	name, event string
	payload     any
} {
	cx := Claude{TranscriptPath: "/home/u/.herald/transcripts/s1.jsonl", PermissionMode: "default", Cwd: "/srv/project"}
	sub := Claude{TranscriptPath: cx.TranscriptPath, PermissionMode: "default", Cwd: "/srv/project", SessionID: "s1", AgentID: "s1-sub1-42", AgentType: "general-purpose"}
	hist := []HistoryMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}
	return []struct {
		name, event string
		payload     any
	}{
		{"PreToolUse", PreToolCallHook, &PreToolCall{ToolName: "write_file", Args: map[string]any{"path": "src/a.go", "content": "package a\n"}, TaskID: "s1", SessionID: "s1", ToolCallID: "call_1", Claude: cx}},
		{"PreToolUse-subagent", PreToolCallHook, &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": "ls"}, TaskID: "s1-sub1-42", SessionID: "s1-sub1-42", ToolCallID: "call_9", Claude: sub}},
		{"PostToolUse-Bash", PostToolCallHook, &ToolResult{ToolName: "terminal", Args: map[string]any{"command": "echo hi"}, Result: `{"output":"hi\n","exit_code":0,"error":null}`, TaskID: "s1", SessionID: "s1", ToolCallID: "call_2", DurationMS: 5, Claude: cx}},
		{"PostToolUse-Write", PostToolCallHook, &ToolResult{ToolName: "write_file", Args: map[string]any{"path": "a.txt", "content": "x"}, Result: `{"bytes_written":1,"path":"/srv/project/a.txt"}`, TaskID: "s1", SessionID: "s1", ToolCallID: "call_3", Claude: cx}},
		{"PostToolUse-Edit", PostToolCallHook, &ToolResult{ToolName: "patch", Args: map[string]any{"path": "a.txt", "old_string": "x", "new_string": "y"}, Result: `{"path":"/srv/project/a.txt","replacements":1}`, TaskID: "s1", SessionID: "s1", ToolCallID: "call_4", Claude: cx}},
		{"PostToolUse-Read", PostToolCallHook, &ToolResult{ToolName: "read_file", Args: map[string]any{"path": "a.txt"}, Result: `{"content":"y\nz\n","from_line":1,"path":"/srv/project/a.txt","to_line":2,"total_lines":2}`, TaskID: "s1", SessionID: "s1", ToolCallID: "call_5", Claude: cx}},
		{"PostToolUse-other", PostToolCallHook, &ToolResult{ToolName: "send_message", Args: map[string]any{"text": "hi"}, Result: "sent", TaskID: "s1", SessionID: "s1", ToolCallID: "call_6", Claude: cx}},
		{"PostToolUseFailure", PostToolCallHook, &ToolResult{ToolName: "terminal", Args: map[string]any{"command": "false"}, Result: `{"output":"","exit_code":1,"error":null}`, TaskID: "s1", SessionID: "s1", ToolCallID: "call_7", Failure: "Exit code 1", Claude: cx}},
		{"UserPromptSubmit", PreLLMCallHook, &PreLLMCall{SessionID: "s1", UserMessage: "hi again", ConversationHistory: hist, Model: "gpt-4o-mini", Platform: "telegram", SenderID: "42", Claude: cx}},
		{"Stop", PostLLMCallHook, &PostLLMCall{SessionID: "s1", UserMessage: "hi again", AssistantResponse: "hello again", ConversationHistory: hist, Model: "gpt-4o-mini", Platform: "telegram", Claude: cx}},
		{"SubagentStop", SubagentStopHook, &SubagentStop{ParentSessionID: "s1", ChildRole: ptr("researcher"), ChildSummary: ptr("found it"), ChildStatus: "completed", DurationMS: 1500,
			AgentID: "s1-sub1-42", AgentTranscriptPath: "/home/u/.herald/transcripts/s1-sub1-42.jsonl", Claude: cx}},
		{"SessionStart", OnSessionStartHook, &SessionStarted{SessionID: "s1", Model: "gpt-4o-mini", Platform: "telegram", Claude: cx}},
		{"SessionStart-resume", OnSessionStartHook, &SessionStarted{SessionID: "s1", Model: "gpt-4o-mini", Platform: "telegram", Source: "resume", ClaudeOnly: true, Claude: cx}},
		{"SessionEnd", OnSessionFinalizeHook, &SessionFinalized{SessionID: ptr("s1"), Platform: "telegram", Reason: "clear", Claude: cx}},
		{"PreCompact", PreCompactHook, &PreCompact{Compaction: Compaction{SessionID: "s1", Trigger: "auto", Model: "gpt-4o-mini", Platform: "telegram", ContextWindow: 128000,
			TokensBefore: 131072, DroppedHistory: hist, Claude: cx}, TurnsToDrop: 3, MessagesToDrop: 11, ToolOutputsToDrop: 4}},
		{"PostCompact", PostCompactHook, &PostCompact{Compaction: Compaction{SessionID: "s1", Trigger: "auto", Model: "gpt-4o-mini", Platform: "telegram", ContextWindow: 128000,
			TokensBefore: 131072, DroppedHistory: hist, Claude: cx}, TokensAfter: 96000, TurnsDropped: 3, MessagesDropped: 11, ToolOutputsDropped: 4}},
	}
}

// The stdin of every Claude event herald emits, exactly (golden files
// under testdata/claude), with exactly the fields Claude Code documents.
func TestClaudePayloadGolden(t *testing.T) {
	for _, tc := range claudeGoldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ClaudePayload(tc.event, tc.payload)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			event, _ := got["hook_event_name"].(string)
			want := append(slices.Clone(claudeCommon), claudeDocumented[event]...)
			if _, ok := got["agent_id"]; ok && event != "SubagentStop" {
				want = append(want, "agent_id", "agent_type")
			}
			var keys []string
			for k := range got {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Errorf("%s fields\n got %v\nwant %v", event, keys, want)
			}
			var buf bytes.Buffer
			json.Indent(&buf, b, "", "  ")
			buf.WriteByte('\n')
			path := filepath.Join("testdata", "claude", tc.name+".json")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				os.WriteFile(path, buf.Bytes(), 0o644)
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./hooks -run ClaudePayloadGolden -update writes it)", err)
			}
			if !bytes.Equal(buf.Bytes(), golden) {
				t.Errorf("%s changed:\n--- got\n%s--- want\n%s", path, buf.Bytes(), golden)
			}
		})
	}
}

// Types and values Claude scripts rely on, beyond the golden bytes.
func TestClaudePayloadValues(t *testing.T) {
	get := func(event string, p any) map[string]any {
		t.Helper()
		b, err := ClaudePayload(event, p)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		json.Unmarshal(b, &m)
		return m
	}
	cx := Claude{Cwd: "/srv/project"}
	for _, tool := range []string{"read_file", "write_file", "patch"} {
		m := get(PreToolCallHook, &PreToolCall{ToolName: tool, Args: map[string]any{"path": "dir/f.txt"}, Claude: cx})
		if fp := m["tool_input"].(map[string]any)["file_path"]; fp != "/srv/project/dir/f.txt" {
			t.Errorf("%s file_path = %v, want it absolute", tool, fp)
		}
	}
	m := get(PostToolCallHook, &ToolResult{ToolName: "terminal", Result: `{"output":"x","exit_code":0,"error":null}`, Claude: cx})
	if r, ok := m["tool_response"].(map[string]any); !ok || r["stdout"] != "x" || r["exit_code"] != 0.0 || r["interrupted"] != false {
		t.Errorf("Bash tool_response = %#v, want an object", m["tool_response"])
	}
	m = get(PostToolCallHook, &ToolResult{ToolName: "terminal", Result: `{"output":"","exit_code":124,"error":"timed out"}`, Claude: cx})
	if r := m["tool_response"].(map[string]any); r["interrupted"] != true {
		t.Errorf("a timed-out command is interrupted: %#v", r)
	}
	m = get(PostToolCallHook, &ToolResult{ToolName: "custom", Result: `{"a":1}`, Claude: cx})
	if r, ok := m["tool_response"].(map[string]any); !ok || r["a"] != 1.0 {
		t.Errorf("JSON result = %#v, want the parsed object", m["tool_response"])
	}
	m = get(PostToolCallHook, &ToolResult{ToolName: "custom", Result: `["a"]`, Claude: cx})
	if r, ok := m["tool_response"].(map[string]any); !ok || r["output"] != `["a"]` {
		t.Errorf("non-object result = %#v, want {output}", m["tool_response"])
	}
	m = get(PostToolCallHook, &ToolResult{ToolName: "terminal", Failure: "interrupted", Interrupted: true, Claude: cx})
	if m["hook_event_name"] != "PostToolUseFailure" || m["error"] != "interrupted" || m["is_interrupt"] != true {
		t.Errorf("failure = %v", m)
	}
	// the Hermes payload keeps result as the string it is
	b, _ := ShellPayload(PostToolCallHook, &ToolResult{ToolName: "terminal", Result: `{"output":"x"}`, Failure: "f", Claude: cx})
	if !strings.Contains(string(b), `"result":"{\"output\":\"x\"}"`) || strings.Contains(string(b), "Failure") {
		t.Errorf("hermes payload changed: %s", b)
	}
	// herald hooks test --payload-file gives a map
	m = get(OnSessionFinalizeHook, map[string]any{"session_id": "s9"})
	if m["hook_event_name"] != "SessionEnd" || m["reason"] != "other" || m["session_id"] != "s9" {
		t.Errorf("map payload = %v", m)
	}
}

func TestClaudeAccept(t *testing.T) {
	ok := &ToolResult{ToolName: "terminal"}
	failed := &ToolResult{ToolName: "terminal", Failure: "Exit code 1"}
	sub := Claude{AgentID: "s1-sub1-1", SessionID: "s1"}
	for _, tc := range []struct {
		name, event, claudeEvent string
		payload                  any
		want                     bool
	}{
		{"PostToolUse takes a success", PostToolCallHook, "PostToolUse", ok, true},
		{"PostToolUse skips a failure", PostToolCallHook, "PostToolUse", failed, false},
		{"post_tool_call in the claude dialect is PostToolUse", PostToolCallHook, "", failed, false},
		{"PostToolUseFailure takes a failure", PostToolCallHook, "PostToolUseFailure", failed, true},
		{"PostToolUseFailure skips a success", PostToolCallHook, "PostToolUseFailure", ok, false},
		{"PostToolUse skips a denied call", PostToolCallHook, "PostToolUse", &ToolResult{Denied: true}, false},
		{"PostToolUseFailure skips a denied call", PostToolCallHook, "PostToolUseFailure", &ToolResult{Denied: true, Failure: "command denied: x"}, false},
		{"PreToolUse inside a sub-agent", PreToolCallHook, "PreToolUse", &PreToolCall{Claude: sub}, true},
		{"Stop of the main session", PostLLMCallHook, "Stop", &PostLLMCall{}, true},
		{"no Stop for a sub-agent", PostLLMCallHook, "Stop", &PostLLMCall{Claude: sub}, false},
		{"no SessionStart for a sub-agent", OnSessionStartHook, "SessionStart", &SessionStarted{Claude: sub}, false},
		{"no UserPromptSubmit for a sub-agent", PreLLMCallHook, "UserPromptSubmit", &PreLLMCall{Claude: sub}, false},
		{"SessionStart resume", OnSessionStartHook, "SessionStart", &SessionStarted{Source: "resume", ClaudeOnly: true}, true},
		{"SessionEnd", OnSessionFinalizeHook, "SessionEnd", &SessionFinalized{SessionID: ptr("s1")}, true},
		{"no SessionEnd without a session", OnSessionFinalizeHook, "SessionEnd", &SessionFinalized{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClaudeAccept(tc.event, tc.claudeEvent, nil)(tc.payload); got != tc.want {
				t.Fatalf("accept = %v, want %v", got, tc.want)
			}
		})
	}
}

// SessionEnd is a session's end (on_session_finalize), not a run's.
func TestClaudeSessionEndAlias(t *testing.T) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("SessionEnd:\n  - command: /bin/true\n    dialect: claude\nPostToolUseFailure:\n  - command: /bin/true\n    dialect: claude\n"), &n); err != nil {
		t.Fatal(err)
	}
	specs, warns, _ := ParseShellHooks(n.Content[0])
	if len(warns) != 0 || len(specs) != 2 {
		t.Fatalf("specs %+v warns %v", specs, warns)
	}
	if specs[0].Event != OnSessionFinalizeHook || specs[1].Event != PostToolCallHook {
		t.Fatalf("events %s %s", specs[0].Event, specs[1].Event)
	}
}

// A SessionStart herald emits for Claude Code only (a resumed session)
// reaches subscribers with an Accept filter; Go plugins, directory hooks,
// Hermes shell hooks and /v1/events never see it.
func TestClaudeOnlyEvents(t *testing.T) {
	reg := NewRegistry(nil)
	var mu sync.Mutex
	got := map[string][]string{}
	var wg sync.WaitGroup
	handler := func(name string) Handler {
		return func(ctx context.Context, ev Event) (any, error) {
			defer wg.Done()
			p := ev.Payload.(*SessionStarted)
			mu.Lock()
			got[name] = append(got[name], p.SessionID)
			mu.Unlock()
			return nil, nil
		}
	}
	reg.Subscribe(Subscription{Name: "plugin", Attach: AttachGo, Events: []string{OnSessionStartHook}, Handler: handler("plugin")})
	reg.Subscribe(Subscription{Name: "events", Attach: AttachInternal, Events: []string{"*"}, Handler: handler("events")})
	reg.Subscribe(Subscription{Name: "claude", Attach: AttachShell, Events: []string{OnSessionStartHook}, Handler: handler("claude"),
		Accept: ClaudeAccept(OnSessionStartHook, "SessionStart", nil)})
	wg.Add(4)
	reg.Emit(OnSessionStartHook, &SessionStarted{SessionID: "new"})
	reg.Emit(OnSessionStartHook, &SessionStarted{SessionID: "resumed", Source: "resume", ClaudeOnly: true})
	wg.Wait()
	reg.Close(context.Background())
	want := map[string][]string{"plugin": {"new"}, "events": {"new"}, "claude": {"new", "resumed"}}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("%s got %v, want %v", k, got[k], v)
		}
	}
}

func TestClaudePermissionMode(t *testing.T) {
	for _, tc := range []struct {
		mode   string
		canAsk bool
		want   string
	}{
		{"ask", true, "default"}, {"", true, "default"}, {"ask", false, "dontAsk"}, {"off", true, "dontAsk"}, {"yolo", true, "bypassPermissions"}, {"YOLO", false, "bypassPermissions"},
	} {
		if got := ClaudePermissionMode(tc.mode, tc.canAsk); got != tc.want {
			t.Errorf("%s/%v = %s, want %s", tc.mode, tc.canAsk, got, tc.want)
		}
	}
}

// Registered claude-dialect shell hooks run only for their Claude event:
// a PostToolUseFailure entry for failed calls, a PostToolUse one for
// successes, and a Hermes-dialect post_tool_call entry for both, with
// Hermes' payload.
func TestClaudeShellHooksFilterByOutcome(t *testing.T) {
	dir := t.TempDir()
	reg := NewRegistry(nil)
	sh := &ShellHooks{Registry: reg, Runner: &ShellRunner{Environ: os.Environ()}, Consent: &Consent{List: Allowlist{Path: filepath.Join(dir, AllowlistFile)}, Accept: true}}
	script := func(name string) string {
		return writeScript(t, dir, name+".sh", "cat >> "+filepath.Join(dir, name+".out")+"\necho >> "+filepath.Join(dir, name+".out")+"\n")
	}
	// post_tool_call shell hooks run in line: Notify, not Emit, reaches them
	notify := func(p *ToolResult) { reg.Notify(context.Background(), PostToolCallHook, p, func(*Answer) {}) }
	sh.Register([]ShellSpec{
		{Event: PostToolCallHook, Command: script("failure"), Timeout: time.Minute, Dialect: "claude", ClaudeEvent: "PostToolUseFailure"},
		{Event: PostToolCallHook, Command: script("success"), Timeout: time.Minute, Dialect: "claude", ClaudeEvent: "PostToolUse"},
		{Event: PostToolCallHook, Command: script("hermes"), Timeout: time.Minute},
	})
	notify(&ToolResult{ToolName: "terminal", Args: map[string]any{"command": "true"}, Result: `{"output":"","exit_code":0,"error":null}`, ToolCallID: "ok"})
	notify(&ToolResult{ToolName: "terminal", Args: map[string]any{"command": "false"}, Result: `{"output":"","exit_code":1,"error":null}`, ToolCallID: "bad", Failure: "Exit code 1"})
	notify(&ToolResult{ToolName: "terminal", Result: `{"error":"command denied: x"}`, ToolCallID: "denied", Failure: "command denied: x", Denied: true})
	if err := reg.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := func(name string) []map[string]any {
		b, _ := os.ReadFile(filepath.Join(dir, name+".out"))
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			m := map[string]any{}
			if json.Unmarshal([]byte(l), &m) == nil {
				out = append(out, m)
			}
		}
		return out
	}
	if f := lines("failure"); len(f) != 1 || f[0]["hook_event_name"] != "PostToolUseFailure" || f[0]["tool_use_id"] != "bad" || f[0]["error"] != "Exit code 1" {
		t.Errorf("PostToolUseFailure hook got %v", f)
	}
	if s := lines("success"); len(s) != 1 || s[0]["hook_event_name"] != "PostToolUse" || s[0]["tool_use_id"] != "ok" {
		t.Errorf("PostToolUse hook got %v", s)
	}
	if h := lines("hermes"); len(h) != 3 || h[1]["hook_event_name"] != PostToolCallHook {
		t.Errorf("Hermes hook got %v", h)
	}
}

// Claude Code's matchers on SessionStart, SessionEnd and SubagentStop
// filter on the source, the reason and the agent type.
func TestClaudeValueMatchers(t *testing.T) {
	role := "reviewer"
	for _, tc := range []struct {
		event, matcher string
		payload        any
		want           bool
	}{
		{OnSessionStartHook, "compact", &SessionStarted{Source: "compact"}, true},
		{OnSessionStartHook, "compact", &SessionStarted{Source: "startup"}, false},
		{OnSessionStartHook, "startup|resume", &SessionStarted{}, true},
		{OnSessionFinalizeHook, "clear", &SessionFinalized{SessionID: new(string), Reason: "clear"}, true},
		{OnSessionFinalizeHook, "clear", &SessionFinalized{SessionID: new(string)}, false},
		{SubagentStopHook, "reviewer", &SubagentStop{ChildRole: &role}, true},
		{SubagentStopHook, "general-purpose", &SubagentStop{}, true},
		{SubagentStopHook, "reviewer", &SubagentStop{}, false},
		{PreCompactHook, "auto", &PreCompact{Compaction: Compaction{Trigger: "auto"}}, true},
		{PreCompactHook, "manual", &PreCompact{Compaction: Compaction{Trigger: "auto"}}, false},
		{PostCompactHook, "auto", &PostCompact{Compaction: Compaction{Trigger: "auto"}}, true},
	} {
		s := ShellSpec{Event: tc.event, Dialect: "claude"}
		s.setClaudeMatcher(tc.matcher)
		if got := ClaudeAccept(tc.event, "", s.claudeMatches)(tc.payload); got != tc.want {
			t.Errorf("%s matcher %q on %+v: %v, want %v", tc.event, tc.matcher, tc.payload, got, tc.want)
		}
	}
}
