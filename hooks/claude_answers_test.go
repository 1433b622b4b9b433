package hooks

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
)

// TestParseClaudeAnswers checks Claude Code's outputs per event, as its
// hooks reference documents them.
func TestParseClaudeAnswers(t *testing.T) {
	for _, tc := range []struct {
		event, stdout, want string
	}{
		{PreToolCallHook, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`, `{"action":"allow"}`},
		{PreToolCallHook, `{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls -la"}}}`, `{"action":"allow","args":{"command":"ls -la"}}`},
		{PreToolCallHook, `{"decision":"approve","reason":"safe"}`, `{"action":"allow","message":"safe"}`},
		{PreToolCallHook, `{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"prod"}}`, `{"action":"approve","message":"prod"}`},
		{PreToolCallHook, `{"continue":false,"stopReason":"halt"}`, `{"action":"block","message":"halt","feedback":{"halt":true,"stop_reason":"halt"}}`},
		{PreToolCallHook, `{"systemMessage":"careful"}`, `{"feedback":{"system_message":"careful"}}`},
		{PreToolCallHook, `{"hookSpecificOutput":{"additionalContext":"cwd is /srv"}}`, `{"feedback":{"additional_context":"cwd is /srv"}}`},
		{PreLLMCallHook, `{"decision":"block","reason":"no"}`, `{"context":"","feedback":{"block":true,"reason":"no"}}`},
		{PreLLMCallHook, `{"decision":"block"}`, `{"context":"","feedback":{"block":true,"reason":"Blocked by shell hook."}}`},
		{PreLLMCallHook, `{"hookSpecificOutput":{"additionalContext":"ctx"},"systemMessage":"hi"}`, `{"context":"ctx","feedback":{"system_message":"hi"}}`},
		{PostToolCallHook, `{"decision":"block","reason":"lint failed"}`, `{"block":true,"reason":"lint failed"}`},
		{PostToolCallHook, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"note"}}`, `{"additional_context":"note"}`},
		{PostLLMCallHook, `{"decision":"block","reason":"go on"}`, `{"block":true,"reason":"go on"}`},
		{PostLLMCallHook, `{"decision":"block"}`, `{"block":true,"reason":"` + DefaultContinueReason + `"}`},
		{SubagentStopHook, `{"decision":"block","reason":"more"}`, `{"block":true,"reason":"more"}`},
		{OnSessionStartHook, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"branch main"}}`, `{"additional_context":"branch main"}`},
		{OnSessionStartHook, `{"decision":"block","reason":"x"}`, `null`},
		{PostLLMCallHook, `{"continue":false,"stopReason":"enough"}`, `{"halt":true,"stop_reason":"enough"}`},
		{PostLLMCallHook, `{}`, `null`},
	} {
		v, err := ParseAnswer(tc.event, []byte(tc.stdout))
		if err != nil {
			t.Fatalf("%s %s: %v", tc.event, tc.stdout, err)
		}
		if got := answerJSON(v); got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.event, tc.stdout, got, tc.want)
		}
	}
}

// answerJSON shows an answer with its Feedback (which has no JSON key on
// the wire types).
func answerJSON(v any) string {
	var b []byte
	switch x := v.(type) {
	case *ToolDecision:
		b, _ = json.Marshal(struct {
			*ToolDecision
			F *Feedback `json:"feedback,omitempty"`
		}{x, x.Feedback})
	case *LLMContext:
		b, _ = json.Marshal(struct {
			*LLMContext
			F *Feedback `json:"feedback,omitempty"`
		}{x, x.Feedback})
	default:
		b, _ = json.Marshal(v)
	}
	return string(b)
}

func TestClaudeExitCodesByEvent(t *testing.T) {
	for _, tc := range []struct {
		event  string
		exit   int
		stdout string
		want   string
	}{
		{PostToolCallHook, 2, "", `{"block":true,"reason":"why"}`},
		{PostLLMCallHook, 2, "", `{"block":true,"reason":"why"}`},
		{SubagentStopHook, 2, "", `{"block":true,"reason":"why"}`},
		{OnSessionStartHook, 2, "", `{"system_message":"why"}`},
		{PreLLMCallHook, 2, `{"hookSpecificOutput":{"additionalContext":"ignored on exit 2"}}`, `{"context":"","feedback":{"block":true,"reason":"why"}}`},
		{OnSessionStartHook, 0, "plain text context", `{"additional_context":"plain text context"}`},
		{PreLLMCallHook, 0, "plain text context", `{"context":"plain text context"}`},
		{PostLLMCallHook, 1, `{"decision":"block","reason":"only on exit 0"}`, `err`},
	} {
		s := ShellSpec{Event: tc.event, Dialect: "claude", Timeout: 1}
		v, err := s.Answer(&ShellRun{Exit: tc.exit, Stdout: []byte(tc.stdout), Stderr: []byte("why\n")})
		got := answerJSON(v)
		if err != nil {
			got = "err"
		}
		if got != tc.want {
			t.Errorf("%s exit %d: got %s, want %s", tc.event, tc.exit, got, tc.want)
		}
		// the Hermes dialect reads none of these
		s.Dialect = ""
		if p, _ := Lookup(tc.event); p.Kind == Observer {
			if v, err := s.Answer(&ShellRun{Exit: tc.exit, Stdout: []byte(tc.stdout), Stderr: []byte("why")}); v != nil || err != nil {
				t.Errorf("hermes %s exit %d answered %v, %v", tc.event, tc.exit, v, err)
			}
		}
	}
}

func TestNotifyCallsInlineSubscribersAndQueuesTheRest(t *testing.T) {
	reg := NewRegistry(nil)
	defer reg.Close(context.Background())
	var queued, inline atomic.Int32
	done := make(chan struct{}, 4)
	reg.Subscribe(Subscription{Name: "observer", Attach: AttachGo, Events: []string{PostToolCallHook}, Handler: func(ctx context.Context, ev Event) (any, error) {
		queued.Add(1)
		done <- struct{}{}
		return &Feedback{Context: "ignored: not in line"}, nil
	}})
	reg.Subscribe(Subscription{Name: "inline", Attach: AttachShell, Concurrent: true, Inline: true, Events: []string{PostToolCallHook},
		Matcher: func(tool string) bool { return tool == "terminal" },
		Handler: func(ctx context.Context, ev Event) (any, error) {
			inline.Add(1)
			return &Feedback{Context: "from inline", Notice: "n"}, nil
		}})

	fb := reg.Feedback(context.Background(), PostToolCallHook, &ToolResult{ToolName: "terminal"})
	if inline.Load() != 1 || fb.Context != "from inline" || fb.Notice != "n" {
		t.Fatalf("inline calls = %d, feedback = %+v", inline.Load(), fb)
	}
	<-done
	// Emit reaches the observer only; the matcher keeps the inline one out
	reg.Emit(PostToolCallHook, &ToolResult{ToolName: "terminal"})
	<-done
	fb = reg.Feedback(context.Background(), PostToolCallHook, &ToolResult{ToolName: "read_file"})
	<-done
	if inline.Load() != 1 || queued.Load() != 3 || !fb.Empty() {
		t.Fatalf("inline = %d, queued = %d, feedback = %+v", inline.Load(), queued.Load(), fb)
	}
	// CallInline leaves the observers out
	fb = reg.InlineFeedback(context.Background(), PostToolCallHook, &ToolResult{ToolName: "terminal"})
	if inline.Load() != 2 || fb.Context != "from inline" || !reg.HasInline(PostToolCallHook) || reg.HasInline(PostLLMCallHook) {
		t.Fatalf("inline = %d, feedback = %+v", inline.Load(), fb)
	}
	if err := reg.Close(context.Background()); err != nil || queued.Load() != 3 {
		t.Fatalf("queued = %d after close (%v)", queued.Load(), err)
	}
}

func TestPreToolCallPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []any
		want    string
	}{
		{"allow alone", []any{&ToolDecision{Action: "allow"}}, "allow"},
		{"deny beats allow", []any{&ToolDecision{Action: "allow"}, Block("no")}, "block"},
		{"ask beats allow", []any{&ToolDecision{Action: "allow"}, &ToolDecision{Action: "approve"}}, "approve"},
		{"allow with modify", []any{&ToolDecision{Action: "modify", Args: map[string]any{"a": 1}}, &ToolDecision{Action: "allow"}}, "allow"},
	} {
		d := hand(t, PreToolCallHook, tc.answers...).PreToolCall(context.Background(), &PreToolCall{})
		if d.Action != tc.want {
			t.Errorf("%s: action %q, want %q", tc.name, d.Action, tc.want)
		}
	}
}
