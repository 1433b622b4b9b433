package hooks

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldgw/herald"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func ptr[T any](v T) *T { return &v }

// goldenPayloads is one example of every payload, under each event name
// that carries it. Its JSON form (the gateway-hook envelope, Hermes' keys)
// is what out-of-process hooks read, so it must never change by accident.
func goldenPayloads() map[string]any {
	start := AgentStart{Platform: "telegram", UserID: "42", ChatID: "-100123", SessionID: "20260417_120000_ab12cd34",
		Message: "what's the weather?", ThreadID: "7", ChatType: "group"}
	hist := []HistoryMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}
	appr := Approval{Command: "rm -rf build", Description: "recursive delete", PatternKey: "rm_rf",
		PatternKeys: []string{"rm_rf"}, SessionKey: "agent:main:telegram:dm:42", Surface: "gateway"}
	post := appr
	post.Choice = "once"
	return map[string]any{
		GatewayStartup: &Startup{Platforms: []string{"local", "telegram"}},
		SessionStartEv: &SessionStart{Platform: "telegram", UserID: "42", SessionID: "20260417_120000_ab12cd34", SessionKey: "agent:main:telegram:dm:42"},
		SessionEndEv:   &SessionBoundary{Platform: "telegram", UserID: "42", SessionKey: "agent:main:telegram:dm:42"},
		SessionResetEv: &SessionBoundary{Platform: "telegram", UserID: "42", SessionKey: "agent:main:telegram:dm:42"},
		AgentStartEv:   &start,
		AgentStartEv + "@media": &AgentStart{Platform: "telegram", UserID: "42", ChatID: "42", SessionID: "20260417_120000_ab12cd34", ChatType: "dm",
			Message: "[attachment: image photo.jpg (image/jpeg, 34 KB) saved at /home/u/.herald/media/20260417_120000_ab12cd34/photo.jpg]",
			Media:   []MediaInfo{{Type: "image", MIME: "image/jpeg", Name: "photo.jpg", Size: 34816, Path: "/home/u/.herald/media/20260417_120000_ab12cd34/photo.jpg"}}},
		AgentStepEv:          &AgentStep{Platform: "telegram", UserID: "42", SessionID: "s1", Iteration: 3, ToolNames: []string{"terminal"}, Tools: []any{map[string]any{"id": "call_1", "name": "terminal"}}},
		AgentEndEv:           &AgentEnd{AgentStart: start, Response: "Sunny.", Model: "gpt-4o-mini"},
		AgentEndEv + "@fail": &AgentEnd{AgentStart: start, Model: "gpt-4o-mini", Failed: true, Error: "model endpoint returned 500"},
		"command:new":        &Command{Platform: "telegram", UserID: "42", Command: "new", RawCommand: "reset", Args: "my title", RawArgs: "my title"},
		PreToolCallHook:      &PreToolCall{ToolName: "terminal", Args: map[string]any{"command": "ls -la"}, TaskID: "s1", SessionID: "s1", ToolCallID: "call_1"},
		PostToolCallHook:     &ToolResult{ToolName: "terminal", Args: map[string]any{"command": "ls"}, Result: `{"output":"a\nb","exit_code":0}`, TaskID: "s1", SessionID: "s1", ToolCallID: "call_1", DurationMS: 12},
		TransformToolResultHook: &ToolResult{ToolName: "read_file", Args: map[string]any{"path": "x.txt"}, Result: "contents", TaskID: "s1",
			SessionID: "s1", ToolCallID: "call_2", DurationMS: 1},
		TransformTerminalOutputHook: &TerminalOutput{Command: "ls", Output: "a\nb\n", ReturnCode: 0, ExitCode: 0, Cwd: "/home/u", TaskID: "s1", EnvType: "local"},
		PreLLMCallHook:              &PreLLMCall{SessionID: "s1", UserMessage: "hi again", ConversationHistory: hist, IsFirstTurn: false, Model: "gpt-4o-mini", Platform: "telegram", SenderID: "42"},
		PreLLMCallHook + "@media": &PreLLMCall{SessionID: "s1", UserMessage: "[voice note transcript] hello", ConversationHistory: hist, Model: "gpt-4o-mini", Platform: "telegram", SenderID: "42",
			Media: []MediaInfo{{Type: "voice", MIME: "audio/ogg", Name: "voice.ogg", Size: 5120, Path: "/home/u/.herald/media/s1/voice.ogg"}}},
		PostLLMCallHook:        &PostLLMCall{SessionID: "s1", UserMessage: "hi again", AssistantResponse: "hello again", ConversationHistory: hist, Model: "gpt-4o-mini", Platform: "telegram"},
		TransformLLMOutputHook: &LLMOutput{ResponseText: "hello again", SessionID: "s1", Model: "gpt-4o-mini", Platform: "telegram"},
		PreAPIRequestHook: &APIRequest{TaskID: "s1", SessionID: "s1", Platform: "telegram", Model: "gpt-4o-mini", Provider: "openai", BaseURL: "https://api.openai.com/v1",
			APIMode: "chat_completions", APICallCount: 1, MessageCount: 3, ToolCount: 2, ApproxInputTokens: 120, RequestCharCount: 480, MaxTokens: 0},
		PostAPIRequestHook: &APIResponse{TaskID: "s1", SessionID: "s1", Platform: "telegram", Model: "gpt-4o-mini", Provider: "openai", BaseURL: "https://api.openai.com/v1",
			APIMode: "chat_completions", APICallCount: 1, APIDuration: 0.25, FinishReason: "stop", MessageCount: 3, ResponseModel: "gpt-4o-mini-2024-07-18",
			Usage: map[string]int{"prompt_tokens": 120, "completion_tokens": 8, "total_tokens": 128}, AssistantContentChars: 11, AssistantToolCallCount: 0},
		OnSessionStartHook:           &SessionStarted{SessionID: "s1", Model: "gpt-4o-mini", Platform: "telegram"},
		OnSessionEndHook:             &SessionEnded{SessionID: "s1", Completed: true, Interrupted: false, Model: "gpt-4o-mini", Platform: "telegram"},
		OnSessionFinalizeHook:        &SessionFinalized{SessionID: ptr("s1"), Platform: "telegram"},
		OnSessionFinalizeHook + "@0": &SessionFinalized{Platform: "gateway"},
		OnSessionResetHook:           &SessionWasReset{SessionID: "s2", Platform: "telegram"},
		SubagentStopHook:             &SubagentStop{ParentSessionID: "s1", ChildRole: nil, ChildSummary: ptr("done"), ChildStatus: "completed", DurationMS: 1500},
		PreCompactHook: &PreCompact{Compaction: Compaction{SessionID: "s1", Trigger: "auto", Model: "gpt-4o-mini", Platform: "telegram", ContextWindow: 128000,
			TokensBefore: 131072, DroppedHistory: hist}, TurnsToDrop: 3, MessagesToDrop: 11, ToolOutputsToDrop: 4},
		PostCompactHook: &PostCompact{Compaction: Compaction{SessionID: "s1", Trigger: "auto", Model: "gpt-4o-mini", Platform: "telegram", ContextWindow: 128000,
			TokensBefore: 131072, DroppedHistory: hist}, TokensAfter: 96000, TurnsDropped: 3, MessagesDropped: 11, ToolOutputsDropped: 4},
		PreApprovalRequestHook:   &appr,
		PostApprovalResponseHook: &post,
		PreGatewayDispatchHook: &Dispatch{Message: herald.Message{ID: "m1", Text: "hello",
			Source: herald.Source{Platform: "telegram", ChatID: "42", ChatType: "dm", UserID: "42", UserName: "ann"}}},
	}
}

// goldenResults is one example of every result type, in its wire form.
func goldenResults() map[string]any {
	return map[string]any{
		"ToolDecision-block":   Block("Forbidden: rm -rf"),
		"ToolDecision-modify":  &ToolDecision{Action: "modify", Args: map[string]any{"command": "ls"}},
		"LLMContext":           &LLMContext{Context: "Today is Friday"},
		"Replace":              &Replace{Text: "replacement"},
		"DispatchDecision":     &DispatchDecision{Action: "rewrite", Text: "new text"},
		"DispatchDecision-skp": &DispatchDecision{Action: "skip", Reason: "ambient-buffered"},
		"CommandDecision":      &CommandDecision{Decision: "deny", Message: "not here"},
		"CommandDecision-rw":   &CommandDecision{Decision: "rewrite", CommandName: "help"},
	}
}

var snakeKey = regexp.MustCompile(`"([A-Za-z0-9_]+)":`)

func checkGolden(t *testing.T, file string, got []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	for _, m := range snakeKey.FindAllSubmatch(buf.Bytes(), -1) {
		if k := string(m[1]); k != strings.ToLower(k) {
			t.Errorf("key %q is not snake_case", k)
		}
	}
	path := filepath.Join("testdata", "golden", file)
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./hooks -run Golden -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s changed:\n--- got\n%s\n--- want\n%s", path, buf.Bytes(), want)
	}
}

func goldenName(s string) string {
	return strings.NewReplacer(":", "_", "@", "-", "*", "any").Replace(s) + ".json"
}

func TestGoldenPayloads(t *testing.T) {
	payloads := goldenPayloads()
	// every catalogue point has a golden payload
	for _, p := range Catalogue() {
		name := p.Name
		if name == CommandPrefix+"*" {
			name = "command:new"
		}
		if _, ok := payloads[name]; !ok {
			t.Errorf("no golden payload for %s", p.Name)
		}
	}
	for name, p := range payloads {
		t.Run(name, func(t *testing.T) {
			event, _, _ := strings.Cut(name, "@")
			b, err := GatewayEnvelope(event, p)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, goldenName(name), b)
		})
	}
}

func TestGoldenResults(t *testing.T) {
	for name, r := range goldenResults() {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "result_"+goldenName(name), b)
		})
	}
}

// A result's wire form, printed by an out-of-process hook, parses back
// into the same result.
func TestGoldenResultsRoundTrip(t *testing.T) {
	tests := []struct {
		event string
		key   string
	}{
		{PreToolCallHook, "ToolDecision-block"},
		{PreToolCallHook, "ToolDecision-modify"},
		{PreLLMCallHook, "LLMContext"},
		{TransformToolResultHook, "Replace"},
		{PreGatewayDispatchHook, "DispatchDecision"},
		{PreGatewayDispatchHook, "DispatchDecision-skp"},
		{"command:status", "CommandDecision"},
		{"command:status", "CommandDecision-rw"},
	}
	res := goldenResults()
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			b, _ := json.Marshal(res[tc.key])
			got, err := ParseAnswer(tc.event, b)
			if err != nil {
				t.Fatal(err)
			}
			gb, _ := json.Marshal(got)
			if !bytes.Equal(gb, b) {
				t.Fatalf("round trip: %s → %s", b, gb)
			}
		})
	}
}

// An empty context is {} (Hermes: context=None → {}).
func TestEnvelopeNilContext(t *testing.T) {
	b, err := GatewayEnvelope("gateway:startup", nil)
	if err != nil || string(b) != `{"event_type":"gateway:startup","context":{}}` {
		t.Fatalf("%s %v", b, err)
	}
}
