package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/heraldgw/herald"
)

// ParseAnswer reads what an out-of-process hook printed on stdout for
// event and returns the typed result the combiners understand (nil when
// the hook offered none). It accepts Hermes' shapes and Claude Code's:
//
//	pre_tool_call         {"action":"block","message"} · {"decision":"block","reason"}
//	                      {"hookSpecificOutput":{"permissionDecision":"deny"|"ask"|"allow",
//	                        "permissionDecisionReason","updatedInput","additionalContext"}}
//	                      {"action":"modify","args"} · {"decision":"modify","tool_input"}
//	                      {"action":"approve","message"} (ask a person)
//	                      {"decision":"approve"} (Claude's old spelling of allow)
//	pre_llm_call          {"context"} · {"hookSpecificOutput":{"additionalContext"}}
//	                      {"decision":"block","reason"} (the prompt is refused)
//	post_tool_call,       {"decision":"block","reason"} · {"hookSpecificOutput":{"additionalContext"}}
//	post_llm_call,        (Claude Code's PostToolUse, Stop, SubagentStop and
//	subagent_stop,         SessionStart answers, as a *Feedback)
//	on_session_start
//	transform_*           {"result": "…"} (herald's extension)
//	pre_gateway_dispatch  {"action":"skip"|"rewrite"|"allow","text","reason","ingest"}
//	command:*             {"decision":"allow"|"deny"|"handled"|"rewrite","message","command_name"}
//
// Claude Code's universal fields go with every answer of the first five
// points: "systemMessage" (shown to the person), "continue": false with
// "stopReason" (the turn ends), "suppressOutput".
//
// Empty output is an observer's silence (nil, nil). Output that is not
// JSON returns an error (the caller warns, or fails closed). A JSON value
// that is not an object, or an object with nothing this event consumes,
// is nil. A block with no message still blocks, with DefaultBlockMessage.
func ParseAnswer(event string, stdout []byte) (any, error) {
	s := bytes.TrimSpace(stdout)
	if len(s) == 0 {
		return nil, nil
	}
	var raw any
	if err := json.Unmarshal(s, &raw); err != nil {
		snippet := string(s)
		if len(snippet) > 200 {
			snippet = snippet[:200] + "…"
		}
		return nil, fmt.Errorf("stdout is not valid JSON (%v): %q", err, snippet)
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, nil
	}
	hso, _ := obj["hookSpecificOutput"].(map[string]any)
	fb := universal(obj)
	if c := str(hso, "additionalContext"); strings.TrimSpace(c) != "" {
		fb.Context = ClipContext(c)
	}

	switch {
	case event == PreToolCallHook:
		d := toolAnswer(obj, hso)
		if fb.Halt {
			// continue: false stops the turn, overriding any decision
			d = Block(defaultMsg(firstStr(fb.StopReason, str(obj, "reason"))))
		}
		if !fb.Empty() {
			if d == nil {
				d = &ToolDecision{}
			}
			d.Feedback = fb
		}
		if d == nil {
			return nil, nil
		}
		return d, nil

	case event == PreLLMCallHook:
		c := &LLMContext{}
		if x, ok := obj["context"].(string); ok && strings.TrimSpace(x) != "" {
			c.Context = x
		} else if fb.Context != "" {
			c.Context = fb.Context
		}
		fb.Context = ""
		if strings.EqualFold(str(obj, "decision"), "block") {
			fb.Block, fb.Reason = true, defaultMsg(str(obj, "reason"))
		}
		if !fb.Empty() {
			c.Feedback = fb
		}
		if c.Context == "" && c.Feedback == nil {
			return nil, nil
		}
		return c, nil

	case event == PostToolCallHook || event == PostLLMCallHook || event == SubagentStopHook || event == OnSessionStartHook:
		if strings.EqualFold(str(obj, "decision"), "block") && event != OnSessionStartHook {
			fb.Block, fb.Reason = true, str(obj, "reason")
			if fb.Reason == "" && event != PostToolCallHook {
				// Claude requires a reason: it is the agent's next instruction
				fb.Reason = DefaultContinueReason
			}
		}
		if fb.Empty() && !fb.Suppress {
			return nil, nil
		}
		return fb, nil

	case event == PostCompactHook:
		// Hermes' and OpenHarness' {"context": …} or Claude Code's
		// additionalContext: notes kept across compaction
		if x, ok := obj["context"].(string); ok && strings.TrimSpace(x) != "" {
			fb.Context = ClipContext(x)
		}
		if fb.Empty() {
			return nil, nil
		}
		return fb, nil

	case event == TransformToolResultHook || event == TransformTerminalOutputHook || event == TransformLLMOutputHook:
		if r, ok := obj["result"].(string); ok {
			return &Replace{Text: r}, nil
		}
		return nil, nil

	case event == PreGatewayDispatchHook:
		d := &DispatchDecision{Action: strings.ToLower(str(obj, "action")), Reason: str(obj, "reason")}
		if t, ok := obj["text"].(string); ok {
			d.Text, d.TextSet = t, true
		}
		d.Ingest, _ = obj["ingest"].(bool)
		if d.Action == "" {
			return nil, nil
		}
		return d, nil

	case strings.HasPrefix(event, CommandPrefix):
		d := &CommandDecision{Decision: strings.ToLower(strings.TrimSpace(str(obj, "decision"))), CommandName: str(obj, "command_name")}
		if m, ok := obj["message"].(string); ok {
			d.Message, d.MessageSet = m, true
		}
		if d.Decision == "" {
			return nil, nil
		}
		return d, nil
	}
	return nil, nil
}

// DefaultContinueReason is the next instruction of a Stop or SubagentStop
// hook that blocked without saying why.
const DefaultContinueReason = "A Stop hook asked you to continue."

// MaxContextChars bounds what one hook adds to the model's context or
// shows the person (Claude Code's cap).
const MaxContextChars = 10000

// ClipContext keeps the first MaxContextChars characters of s.
func ClipContext(s string) string {
	n := 0
	for i := range s {
		if n == MaxContextChars {
			return s[:i]
		}
		n++
	}
	return s
}

func str(m map[string]any, k string) string {
	v, _ := m[k].(string)
	return v
}

// universal reads Claude Code's fields that any answer may carry.
func universal(obj map[string]any) *Feedback {
	fb := &Feedback{Notice: ClipContext(strings.TrimSpace(str(obj, "systemMessage")))}
	if obj["continue"] == false {
		fb.Halt, fb.StopReason = true, str(obj, "stopReason")
	}
	fb.Suppress, _ = obj["suppressOutput"].(bool)
	return fb
}

// toolAnswer reads a pre_tool_call decision in Hermes' or Claude Code's
// shape (nil: none).
func toolAnswer(obj, hso map[string]any) *ToolDecision {
	action := strings.ToLower(str(obj, "action"))
	decision := strings.ToLower(str(obj, "decision"))
	switch {
	case action == "block":
		return Block(defaultMsg(firstStr(str(obj, "message"), str(obj, "reason"))))
	case decision == "block" || decision == "deny":
		return Block(defaultMsg(firstStr(str(obj, "reason"), str(obj, "message"))))
	}
	if hso != nil {
		in, _ := hso["updatedInput"].(map[string]any)
		switch strings.ToLower(str(hso, "permissionDecision")) {
		case "deny":
			return Block(defaultMsg(firstStr(str(hso, "permissionDecisionReason"), str(obj, "reason"))))
		case "ask":
			return &ToolDecision{Action: "approve", Message: str(hso, "permissionDecisionReason"), Args: in}
		case "allow":
			return &ToolDecision{Action: "allow", Message: str(hso, "permissionDecisionReason"), Args: in}
		}
		if in != nil {
			return &ToolDecision{Action: "modify", Args: in}
		}
	}
	switch {
	case action == "modify":
		if args, ok := obj["args"].(map[string]any); ok {
			return &ToolDecision{Action: "modify", Args: args}
		}
	case decision == "modify":
		if args, ok := obj["tool_input"].(map[string]any); ok {
			return &ToolDecision{Action: "modify", Args: args}
		}
	case action == "approve":
		return &ToolDecision{Action: "approve", Message: str(obj, "message")}
	case decision == "approve":
		return &ToolDecision{Action: "allow", Message: str(obj, "reason")}
	}
	return nil
}

func firstStr(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

func defaultMsg(s string) string {
	if strings.TrimSpace(s) == "" {
		return DefaultBlockMessage
	}
	return s
}

// GatewayEnvelope is the directory-hook and /v1/events form of an event:
// {"event_type": name, "context": {…}}.
func GatewayEnvelope(name string, payload any) ([]byte, error) {
	ctx, err := Context(payload)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		EventType string          `json:"event_type"`
		Context   json.RawMessage `json:"context"`
	}{name, ctx})
}

// RedactJSON masks secrets in every string of a JSON document (keys
// stay), for payloads that leave the process: a secret that a user or the
// model wrote into a message does not reach a hook's stdin or the event
// stream. The document is returned as it was when nothing was masked, or
// when it is not JSON.
func RedactJSON(red *herald.Redactor, b []byte) []byte {
	// Without a backslash every string in the document is its own bytes
	// between quotes, so what redaction would find in one of them it finds
	// in the whole text too (a quote is no word character, and the one
	// pattern anchored at the end runs on to it): a text with nothing to
	// redact skips decoding and walking the document.
	if !bytes.ContainsRune(b, '\\') {
		if s := string(b); red.Redact(s) == s {
			return b
		}
	}
	return redactEachString(red, b)
}

// redactEachString redacts every string of the JSON document b, keys
// included, and re-encodes it if any changed.
func redactEachString(red *herald.Redactor, b []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return b
	}
	changed := false
	v = redactValue(red, v, &changed)
	if !changed {
		return b
	}
	return encodeRaw(v, b)
}

// encodeRaw encodes v as JSON without Go's HTML escapes (\u003c, \u003e,
// \u0026), or returns fallback when it cannot.
func encodeRaw(v any, fallback []byte) []byte {
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return fallback
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

func redactValue(red *herald.Redactor, v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		if r := red.Redact(x); r != x {
			*changed = true
			return r
		}
	case []any:
		for i := range x {
			x[i] = redactValue(red, x[i], changed)
		}
	case map[string]any:
		for k := range x {
			x[k] = redactValue(red, x[k], changed)
		}
	}
	return v
}
