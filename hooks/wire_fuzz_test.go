package hooks

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldgw/herald"
)

// fuzzEvents are the points whose answers ParseAnswer reads differently.
var fuzzEvents = []string{PreToolCallHook, PreLLMCallHook, TransformToolResultHook, PreGatewayDispatchHook, "command:status", PostToolCallHook, PostLLMCallHook, SubagentStopHook, OnSessionStartHook}

// FuzzShellAnswer feeds a shell hook's stdout and exit status, in both
// dialects (Hermes and Claude Code), to the answer reader: it never
// panics, and what it returns is a decision the combiners can act on.
func FuzzShellAnswer(f *testing.F) {
	for _, s := range []string{
		`{"action":"block","message":"no"}`, `{"decision":"block","reason":"nope"}`, `{"decision":"deny"}`,
		`{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"d"}}`,
		`{"hookSpecificOutput":{"permissionDecision":"ask","updatedInput":{"file_path":"a"}}}`,
		`{"hookSpecificOutput":{"updatedInput":{"command":"ls"}}}`, `{"hookSpecificOutput":{"additionalContext":"c"}}`,
		`{"action":"modify","args":{"a":1}}`, `{"decision":"modify","tool_input":{"command":"ls"}}`,
		`{"action":"approve","message":"sure?"}`, `{"continue":false,"stopReason":"stop"}`, `{"context":"x"}`,
		`{"result":"r"}`, `{"action":"rewrite","text":"t","ingest":true}`, `{"decision":"handled","message":"m"}`,
		`{"systemMessage":"look","suppressOutput":true}`, `{"decision":"approve"}`,
		`{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls"}}}`,
		`not json`, ``, `[1,2]`, `null`, `{"action":"block","message":"   "}`, `{"action":5}`,
	} {
		for ev := range fuzzEvents {
			f.Add(uint8(ev), false, 0, []byte(s))
		}
		f.Add(uint8(0), true, 2, []byte(s))
	}
	f.Fuzz(func(t *testing.T, ev uint8, claude bool, exit int, stdout []byte) {
		s := ShellSpec{Event: fuzzEvents[int(ev)%len(fuzzEvents)], Timeout: 1}
		if claude {
			s.Dialect = "claude"
		}
		v, err := s.Answer(&ShellRun{Stdout: stdout, Stderr: stdout, Exit: exit % 4})
		if err != nil {
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error is not valid UTF-8: %q", err)
			}
			return
		}
		switch d := v.(type) {
		case nil, *Replace:
		case *LLMContext:
			if d.Feedback != nil && d.Feedback.Block && strings.TrimSpace(d.Feedback.Reason) == "" {
				t.Fatalf("a refused prompt without a reason: %+v", d.Feedback)
			}
		case *Feedback:
			if !claude {
				t.Fatalf("a Hermes-dialect hook answered %s", s.Event)
			}
			if d.Block && strings.TrimSpace(d.Reason) == "" && s.Event != PostToolCallHook {
				t.Fatalf("a block without a reason on %s: %+v", s.Event, d)
			}
		case *ToolDecision:
			switch d.Action {
			case "block":
				if strings.TrimSpace(d.Message) == "" {
					t.Fatalf("a block without a message: %+v", d)
				}
				if utf8.Valid(stdout) && !utf8.ValidString(d.Message) {
					t.Fatalf("block message split a character: %q", d.Message)
				}
			case "modify":
				if d.Args == nil {
					t.Fatalf("a modify without args: %+v", d)
				}
			case "approve", "allow":
			case "":
				if d.Feedback.Empty() {
					t.Fatalf("an empty tool decision: %+v", d)
				}
			default:
				t.Fatalf("tool decision with action %q", d.Action)
			}
			if s.Event != PreToolCallHook {
				t.Fatalf("a tool decision for %s", s.Event)
			}
		case *DispatchDecision:
			if d.Action == "" {
				t.Fatalf("a dispatch decision without an action: %+v", d)
			}
		case *CommandDecision:
			if d.Decision == "" {
				t.Fatalf("a command decision without a decision: %+v", d)
			}
		default:
			t.Fatalf("unexpected answer type %T", v)
		}
	})
}

// RedactJSON's shortcut (a text without escapes and nothing to redact is
// returned as it is) must answer as redacting each string would.
func FuzzRedactJSONShortcut(f *testing.F) {
	for _, s := range []string{
		`{"tool_input":{"command":"curl -H 'Authorization: Bearer abcdefghijklmnop0123' x"}}`,
		`{"a":"s3cret-value-42","b":["x","token=abcdefgh12"]}`,
		`{"k":"-----BEGIN RSA PRIVATE KEY-----\nabc"}`,
		`{"url":"https://u:pw12345@host/x","n":1.5e3,"z":null}`,
		`{"s3cret-value-42":true,"c":"ghp_abcdefghijklmnopqrstuvwxyz"}`,
		`["sk-abcdefghijklmnopqrstu", "plain"]`,
	} {
		f.Add([]byte(s))
	}
	red := herald.NewRedactor("s3cret-value-42")
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		got, want := RedactJSON(red, b), redactEachString(red, b)
		if !bytes.Equal(got, want) {
			t.Fatalf("RedactJSON(%q) = %q, each string redacted: %q", b, got, want)
		}
	})
}
