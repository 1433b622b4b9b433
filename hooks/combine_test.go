package hooks

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// hand builds a registry whose Go subscribers to event answer, in order,
// each of answers (an error value is returned as the handler's error).
func hand(t *testing.T, event string, answers ...any) *Registry {
	t.Helper()
	reg := NewRegistry(nil)
	t.Cleanup(func() { reg.Close(context.Background()) })
	for i, a := range answers {
		a := a
		reg.Subscribe(Subscription{Name: string(rune('a' + i)), Events: []string{event}, Handler: func(context.Context, Event) (any, error) {
			if err, ok := a.(error); ok {
				return nil, err
			}
			return a, nil
		}})
	}
	return reg
}

var errHook = errors.New("hook broke")

// Hermes checklist items 41–42.
func TestCombinePreToolCall(t *testing.T) {
	tests := []struct {
		name    string
		answers []any
		want    ToolDecision
	}{
		{name: "no hooks"},
		{name: "valid block", answers: []any{map[string]any{"action": "block", "message": "no"}}, want: ToolDecision{Action: "block", Message: "no"}},
		{name: "typed block", answers: []any{Block("typed")}, want: ToolDecision{Action: "block", Message: "typed"}},
		{name: "string is ignored", answers: []any{"block"}},
		{name: "number is ignored", answers: []any{123}},
		{name: "block without message is ignored", answers: []any{map[string]any{"action": "block"}}},
		{name: "block with non-string message is ignored", answers: []any{map[string]any{"action": "block", "message": 5}}},
		{name: "wrong action is ignored", answers: []any{map[string]any{"action": "allow", "message": "x"}}},
		{name: "no action is ignored", answers: []any{map[string]any{"message": "x"}}},
		{name: "first valid block wins after an allow",
			answers: []any{map[string]any{"action": "allow"}, map[string]any{"action": "block", "message": "first"}, map[string]any{"action": "block", "message": "second"}},
			want:    ToolDecision{Action: "block", Message: "first"}},
		{name: "errors fail open", answers: []any{errHook, nil}},
		{name: "modify answers merge shallowly, later wins per key",
			answers: []any{&ToolDecision{Action: "modify", Args: map[string]any{"a": 1, "b": 1}}, &ToolDecision{Action: "modify", Args: map[string]any{"b": 2}}},
			want:    ToolDecision{Action: "modify", Args: map[string]any{"a": 1, "b": 2}}},
		{name: "a block after a modify still blocks",
			answers: []any{&ToolDecision{Action: "modify", Args: map[string]any{"a": 1}}, Block("stop")},
			want:    ToolDecision{Action: "block", Message: "stop"}},
		{name: "approve after a modify asks about the modified call",
			answers: []any{&ToolDecision{Action: "modify", Args: map[string]any{"a": 1}}, &ToolDecision{Action: "approve", Message: "sure?"}},
			want:    ToolDecision{Action: "approve", Message: "sure?", Args: map[string]any{"a": 1}}},
		{name: "modify after an approve still asks, about the modified call",
			answers: []any{&ToolDecision{Action: "approve", Message: "sure?"}, &ToolDecision{Action: "modify", Args: map[string]any{"a": 1}}},
			want:    ToolDecision{Action: "approve", Message: "sure?", Args: map[string]any{"a": 1}}},
		{name: "approve asks a person", answers: []any{&ToolDecision{Action: "approve", Message: "sure?"}}, want: ToolDecision{Action: "approve", Message: "sure?"}},
		{name: "a wire block without message gets the default", answers: []any{&ToolDecision{Action: "block"}}, want: ToolDecision{Action: "block", Message: DefaultBlockMessage}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := hand(t, PreToolCallHook, tc.answers...).PreToolCall(context.Background(), &PreToolCall{ToolName: "terminal"})
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Hermes checklist item 43.
func TestCombinePreLLMCall(t *testing.T) {
	tests := []struct {
		name    string
		answers []any
		want    string
	}{
		{name: "none"},
		{name: "dict context", answers: []any{map[string]any{"context": "memo"}}, want: "memo"},
		{name: "typed context", answers: []any{&LLMContext{Context: "typed"}}, want: "typed"},
		{name: "plain string", answers: []any{"plain"}, want: "plain"},
		{name: "several joined with a blank line, in order", answers: []any{"one", &LLMContext{Context: "two"}, map[string]any{"context": "three"}}, want: "one\n\ntwo\n\nthree"},
		{name: "blank, empty and odd answers dropped", answers: []any{"  ", map[string]any{"context": ""}, &LLMContext{}, 42, nil, errHook, "kept"}, want: "kept"},
		{name: "non-string context is stringified", answers: []any{map[string]any{"context": 7}}, want: "7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := hand(t, PreLLMCallHook, tc.answers...).PreLLMCall(context.Background(), &PreLLMCall{})
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// Hermes checklist items 44–46.
func TestCombineTransforms(t *testing.T) {
	type fn func(*Registry) (string, bool)
	tool := func(r *Registry) (string, bool) {
		return r.TransformToolResult(context.Background(), &ToolResult{ToolName: "read_file", Result: "orig"})
	}
	term := func(r *Registry) (string, bool) {
		return r.TransformTerminalOutput(context.Background(), &TerminalOutput{Command: "ls", Output: "orig"})
	}
	llm := func(r *Registry) (string, bool) {
		return r.TransformLLMOutput(context.Background(), &LLMOutput{ResponseText: "orig"})
	}
	tests := []struct {
		name    string
		event   string
		call    fn
		answers []any
		want    string
		ok      bool
	}{
		{name: "tool: no hook", event: TransformToolResultHook, call: tool},
		{name: "tool: nil and non-strings leave it", event: TransformToolResultHook, call: tool, answers: []any{nil, 3, map[string]any{"x": 1}}},
		{name: "tool: first string wins", event: TransformToolResultHook, call: tool, answers: []any{nil, "first", "second"}, want: "first", ok: true},
		{name: "tool: an empty string qualifies", event: TransformToolResultHook, call: tool, answers: []any{"", "second"}, want: "", ok: true},
		{name: "tool: an error leaves the original", event: TransformToolResultHook, call: tool, answers: []any{errHook}},
		{name: "tool: wire form", event: TransformToolResultHook, call: tool, answers: []any{&Replace{Text: "wire"}}, want: "wire", ok: true},
		{name: "terminal: first string wins", event: TransformTerminalOutputHook, call: term, answers: []any{errHook, "short"}, want: "short", ok: true},
		{name: "llm: first non-empty wins", event: TransformLLMOutputHook, call: llm, answers: []any{"", nil, "pirate", "other"}, want: "pirate", ok: true},
		{name: "llm: empty leaves the response", event: TransformLLMOutputHook, call: llm, answers: []any{""}},
		{name: "llm: exception leaves the response", event: TransformLLMOutputHook, call: llm, answers: []any{errHook}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.call(hand(t, tc.event, tc.answers...))
			if got != tc.want || ok != tc.ok {
				t.Fatalf("got %q %v, want %q %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// Hermes checklist items 25–30 (the combiner's part).
func TestCombinePreGatewayDispatch(t *testing.T) {
	tests := []struct {
		name    string
		answers []any
		want    DispatchDecision
	}{
		{name: "none"},
		{name: "allow wins over a later skip", answers: []any{map[string]any{"action": "allow"}, map[string]any{"action": "skip"}}, want: DispatchDecision{Action: "allow"}},
		{name: "skip with reason", answers: []any{map[string]any{"action": "skip", "reason": "ambient"}}, want: DispatchDecision{Action: "skip", Reason: "ambient"}},
		{name: "rewrite", answers: []any{map[string]any{"action": "rewrite", "text": "new"}}, want: DispatchDecision{Action: "rewrite", Text: "new", TextSet: true}},
		{name: "rewrite with non-string text still stops scanning", answers: []any{map[string]any{"action": "rewrite", "text": 5}, map[string]any{"action": "skip"}}, want: DispatchDecision{Action: "rewrite"}},
		{name: "unknown actions and non-dicts are skipped", answers: []any{map[string]any{"action": "maybe"}, "skip", errHook, &DispatchDecision{Action: "skip"}}, want: DispatchDecision{Action: "skip"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := hand(t, PreGatewayDispatchHook, tc.answers...).PreGatewayDispatch(context.Background(), &Dispatch{})
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Hermes checklist items 18–23 (the combiner's part).
func TestCombineCommand(t *testing.T) {
	tests := []struct {
		name    string
		answers []any
		want    CommandOutcome
	}{
		{name: "none"},
		{name: "deny with message", answers: []any{map[string]any{"decision": "deny", "message": "nope"}}, want: CommandOutcome{Decision: "deny", Reply: "nope"}},
		{name: "deny without message uses the typed command", answers: []any{map[string]any{"decision": "DENY "}}, want: CommandOutcome{Decision: "deny", Reply: "Command `/reset` was blocked by a hook."}},
		{name: "handled with message", answers: []any{&CommandDecision{Decision: "handled", Message: "done"}}, want: CommandOutcome{Decision: "handled", Reply: "done"}},
		{name: "handled without message: no reply", answers: []any{map[string]any{"decision": "handled"}}, want: CommandOutcome{Decision: "handled"}},
		{name: "allow passes through to the next", answers: []any{map[string]any{"decision": "allow"}, map[string]any{"decision": "deny", "message": "2nd"}}, want: CommandOutcome{Decision: "deny", Reply: "2nd"}},
		{name: "non-dict and empty answers ignored", answers: []any{"deny", 1, map[string]any{}, nil, errHook}},
		{name: "rewrite strips the slash", answers: []any{map[string]any{"decision": "rewrite", "command_name": " /help "}}, want: CommandOutcome{Decision: "rewrite", Rewrite: "help"}},
		{name: "rewrite without a name is skipped", answers: []any{map[string]any{"decision": "rewrite"}, map[string]any{"decision": "handled", "message": "h"}}, want: CommandOutcome{Decision: "handled", Reply: "h"}},
		{name: "unknown decisions ignored", answers: []any{map[string]any{"decision": "perhaps"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := hand(t, "command:new", tc.answers...).Command(context.Background(), &Command{Command: "new", RawCommand: "reset"})
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// Directory hooks answer with the same wire parser as shell hooks.
func TestDecodeResult(t *testing.T) {
	tests := []struct {
		event, raw string
		want       any
	}{
		{"command:new", `{"decision":"deny","message":"m"}`, &CommandDecision{Decision: "deny", Message: "m", MessageSet: true}},
		{PreToolCallHook, `{"action":"block","message":"m"}`, Block("m")},
		{PreLLMCallHook, `"plain"`, "plain"},
		{PreLLMCallHook, `{"context":"c"}`, &LLMContext{Context: "c"}},
		{TransformLLMOutputHook, `"x"`, "x"},
		{PreLLMCallHook, `null`, nil},
		{PreLLMCallHook, `[1]`, nil},
		{PreLLMCallHook, ``, nil},
	}
	for _, tc := range tests {
		t.Run(tc.event+" "+tc.raw, func(t *testing.T) {
			got, err := decodeResult(tc.event, []byte(tc.raw))
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, %v; want %#v", got, err, tc.want)
			}
		})
	}
}
