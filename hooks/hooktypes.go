package hooks

// hooktypes.go: the second axis of an attachment, its type (OpenHarness'
// and Claude Code's): command runs a local program (shellhooks_run.go,
// dir_worker.go), http POSTs the payload to a service, prompt and agent
// ask the model through a Judge. One decision contract: an http service
// answers in a shell hook's shapes (ParseAnswer); prompt and agent answer
// {"ok": true} or {"ok": false, "reason": "…"} (parseVerdict), read as a
// block where the event can block. The fields are read here for both
// config.yaml entries and HOOK.yaml files (readTypeFields).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"go.yaml.in/yaml/v3"
)

// TypeSpec is what an attachment of type http, prompt or agent needs,
// beside what every attachment has (event, matcher, priority, timeout,
// block_on_failure).
type TypeSpec struct {
	// Type is TypeCommand (also ""), TypeHTTP, TypePrompt or TypeAgent.
	Type string
	// URL is where an http hook POSTs; Headers are sent with it, each
	// value's ${VAR} filled from the gateway's environment at each call.
	URL     string
	Headers map[string]string
	// Secret, if set (${VAR} filled in too), signs the body:
	// X-Herald-Signature-256: sha256=<hex HMAC-SHA256>.
	Secret string
	// AllowPrivate lets an http hook reach loopback, link-local and
	// private addresses (never the cloud metadata addresses).
	AllowPrivate bool
	// Prompt is a prompt or agent hook's instruction; $ARGUMENTS in it is
	// replaced by the payload JSON (appended when absent).
	Prompt string
	// Model is the model to ask ("": the gateway's).
	Model string
	// MaxIterations bounds an agent hook's model calls (default 5).
	MaxIterations int
}

// Kind returns the type, "" read as command.
func (t TypeSpec) Kind() string {
	if t.Type == "" {
		return TypeCommand
	}
	return t.Type
}

// Default timeouts and block_on_failure per type (OpenHarness' defaults,
// except command, which keeps Hermes' 60 s).
const (
	DefaultHTTPTimeout   = 30 * time.Second
	DefaultPromptTimeout = 30 * time.Second
	DefaultAgentTimeout  = 60 * time.Second
	// DefaultMaxIterations bounds an agent hook that does not say.
	DefaultMaxIterations = 5
)

// DefaultTimeout is the timeout of an attachment of type t that sets none.
func DefaultTimeout(t string) time.Duration {
	switch t {
	case TypeHTTP:
		return DefaultHTTPTimeout
	case TypePrompt:
		return DefaultPromptTimeout
	case TypeAgent:
		return DefaultAgentTimeout
	}
	return DefaultShellTimeout
}

// DefaultBlockOnFailure is block_on_failure when an entry does not set it:
// false for command and http, true for prompt and agent (a model judge
// that cannot answer should not wave a call through).
func DefaultBlockOnFailure(t string) bool { return t == TypePrompt || t == TypeAgent }

// CanBlockOnFailure reports whether a failure may block at this event
// (block_on_failure): a tool call, or a prompt before it reaches the
// model. Elsewhere a failure is logged.
func CanBlockOnFailure(event string) bool { return event == PreToolCallHook || event == PreLLMCallHook }

// blocking reports whether an answer at this event can stop what happens
// next: it ends the priority chain (Registry.callAll) and is where a
// prompt hook's ok: false becomes a block.
func blocking(event string) bool {
	return CanBlockOnFailure(event) || event == PreGatewayDispatchHook || strings.HasPrefix(event, CommandPrefix)
}

// textAnswerEvents take a prompt or agent hook's answer as free text for
// the model (context), not as a verdict: OpenHarness' compaction notes.
var textAnswerEvents = map[string]bool{"post_compact": true}

// fieldProblem is something wrong with one field of an entry, at line.
type fieldProblem struct {
	Line int
	Msg  string
}

// entryFields indexes a YAML mapping's fields by key.
func entryFields(n *yaml.Node) map[string]*yaml.Node {
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		fields[n.Content[i].Value] = n.Content[i+1]
	}
	return fields
}

// typeOnlyFields says which type each type-specific field belongs to.
var typeOnlyFields = []struct{ key, owner string }{
	{"url", TypeHTTP}, {"headers", TypeHTTP}, {"secret", TypeHTTP}, {"allow_private", TypeHTTP},
	{"prompt", "prompt or agent"}, {"model", "prompt or agent"}, {"max_iterations", TypeAgent},
}

// readTypeFields reads type: and the fields of its type from an entry
// (where names it in messages). fatal is set when the entry cannot load;
// warns are fields ignored.
func readTypeFields(fields map[string]*yaml.Node, where string) (t TypeSpec, warns []fieldProblem, fatal *fieldProblem) {
	if n := fields["type"]; n != nil {
		if n.Kind != yaml.ScalarNode {
			return t, nil, &fieldProblem{n.Line, where + ".type must be one of command, http, prompt, agent"}
		}
		switch v := strings.ToLower(strings.TrimSpace(n.Value)); v {
		case "", TypeCommand:
			t.Type = TypeCommand
		case TypeHTTP, TypePrompt, TypeAgent:
			t.Type = v
		default:
			return t, nil, &fieldProblem{n.Line, fmt.Sprintf("%s.type %q is not one of command, http, prompt, agent", where, n.Value)}
		}
	}
	kind := t.Kind()
	for _, f := range typeOnlyFields {
		n := fields[f.key]
		if n == nil || kind != TypeCommand && strings.Contains(f.owner, kind) {
			continue
		}
		warns = append(warns, fieldProblem{n.Line, fmt.Sprintf("%s.%s applies to %s hooks only; ignored", where, f.key, f.owner)})
	}
	scalar := func(key string) (string, *fieldProblem) {
		n := fields[key]
		if n == nil {
			return "", nil
		}
		if n.Kind != yaml.ScalarNode {
			return "", &fieldProblem{n.Line, fmt.Sprintf("%s.%s must be a string", where, key)}
		}
		return strings.TrimSpace(n.Value), nil
	}
	switch kind {
	case TypeHTTP:
		var p *fieldProblem
		if t.URL, p = scalar("url"); p != nil {
			return t, warns, p
		}
		line := 0
		if n := fields["url"]; n != nil {
			line = n.Line
		}
		if err := CheckHookURL(t.URL); err != nil {
			return t, warns, &fieldProblem{line, fmt.Sprintf("%s.url: %v", where, err)}
		}
		if n := fields["headers"]; n != nil {
			if n.Kind != yaml.MappingNode {
				return t, warns, &fieldProblem{n.Line, where + ".headers must be a mapping of header names to values"}
			}
			t.Headers = map[string]string{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if v.Kind != yaml.ScalarNode || strings.TrimSpace(k.Value) == "" {
					return t, warns, &fieldProblem{k.Line, fmt.Sprintf("%s.headers.%s must be a string", where, k.Value)}
				}
				t.Headers[strings.TrimSpace(k.Value)] = v.Value
			}
		}
		if t.Secret, p = scalar("secret"); p != nil {
			return t, warns, p
		}
		if n := fields["allow_private"]; n != nil {
			t.AllowPrivate = Truthy(n.Tag, n.Value)
		}
	case TypePrompt, TypeAgent:
		n := fields["prompt"]
		if n == nil || n.Kind != yaml.ScalarNode || strings.TrimSpace(n.Value) == "" {
			line := 0
			if n != nil {
				line = n.Line
			}
			return t, warns, &fieldProblem{line, fmt.Sprintf("%s is a %s hook without a non-empty 'prompt' field", where, kind)}
		}
		t.Prompt = n.Value
		var p *fieldProblem
		if t.Model, p = scalar("model"); p != nil {
			return t, warns, p
		}
		if n := fields["max_iterations"]; n != nil && kind == TypeAgent {
			v, err := strconv.Atoi(strings.TrimSpace(n.Value))
			if err != nil || v < 1 || n.Kind != yaml.ScalarNode {
				return t, warns, &fieldProblem{n.Line, fmt.Sprintf("%s.max_iterations %q is not a positive whole number", where, n.Value)}
			}
			t.MaxIterations = v
		}
		if kind == TypeAgent && t.MaxIterations == 0 {
			t.MaxIterations = DefaultMaxIterations
		}
	}
	return t, warns, nil
}

// readPriority reads priority: (a whole number, default 0).
func readPriority(fields map[string]*yaml.Node, where string) (int, *fieldProblem) {
	n := fields["priority"]
	if n == nil {
		return 0, nil
	}
	v, err := strconv.Atoi(strings.TrimSpace(n.Value))
	if err != nil || n.Kind != yaml.ScalarNode {
		return 0, &fieldProblem{n.Line, fmt.Sprintf("%s.priority %q is not a whole number", where, n.Value)}
	}
	return v, nil
}

// readBlockOnFailure reads block_on_failure and its aliases fail_closed
// and failClosed; set is false when none is written.
func readBlockOnFailure(fields map[string]*yaml.Node) (on, set bool, line int) {
	for _, k := range []string{"block_on_failure", "fail_closed", "failClosed"} {
		if n := fields[k]; n != nil {
			return strings.EqualFold(n.Value, "true") || n.Value == "1" || strings.EqualFold(n.Value, "yes") || strings.EqualFold(n.Value, "on"), true, n.Line
		}
	}
	return false, false, 0
}

// CheckHookURL checks an http hook's URL: http or https, with a host.
func CheckHookURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("an http hook needs a url")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: only http and https URLs are allowed", raw)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%q has no host", raw)
	}
	if u.User != nil {
		return fmt.Errorf("%q carries credentials in the URL; send them in headers: with ${VAR}", redactURL(raw))
	}
	return nil
}

// redactURL drops a URL's user info and query, for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// envRef is ${VAR}: the one form header values and secrets expand.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv fills ${VAR} from lookup (unset: empty), nothing else.
func expandEnv(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return envRef.ReplaceAllStringFunc(s, func(m string) string {
		if lookup == nil {
			return ""
		}
		v, _ := lookup(m[2 : len(m)-1])
		return v
	})
}

// ConsentKey is what the allowlist records for an attachment of this
// type: the command itself, "http:" + the URL, or "prompt:sha256:<hex>" /
// "agent:sha256:<hex>" of the prompt (so an edited prompt needs a new
// approval).
func (t TypeSpec) ConsentKey(command string) string {
	switch t.Kind() {
	case TypeHTTP:
		return TypeHTTP + ":" + t.URL
	case TypePrompt, TypeAgent:
		sum := sha256.Sum256([]byte(t.Prompt))
		return t.Kind() + ":sha256:" + hex.EncodeToString(sum[:])
	}
	return command
}

// typedKey reports whether an allowlist command is the key of an http,
// prompt or agent attachment (hashed as it is, never read as a script).
func typedKey(command string) bool {
	for _, p := range []string{TypeHTTP + ":", TypePrompt + ":sha256:", TypeAgent + ":sha256:"} {
		if strings.HasPrefix(command, p) {
			return true
		}
	}
	return false
}

// Label names the attachment in logs and listings.
func (t TypeSpec) Label(command string) string {
	switch t.Kind() {
	case TypeHTTP:
		return "http " + redactURL(t.URL)
	case TypePrompt, TypeAgent:
		p := strings.Join(strings.Fields(t.Prompt), " ")
		if r := []rune(p); len(r) > 48 {
			p = string(r[:48]) + "…"
		}
		return fmt.Sprintf("%s %q", t.Kind(), p)
	}
	return command
}

// typedHook runs one http, prompt or agent attachment.
type typedHook struct {
	spec  TypeSpec
	label string
	// timeout bounds one answer.
	timeout time.Duration
	// encode builds the payload as the attachment kind sends it (a shell
	// hook's stdin, or the directory-hook envelope).
	encode func(event string, payload any) ([]byte, error)
	// parse reads an http hook's answer (nil: ParseAnswer, the shell
	// hook's shapes)
	parse  func(event string, body []byte) (any, error)
	red    *herald.Redactor
	judge  Judge
	lookup func(string) (string, bool)
	log    *slog.Logger
}

// handle is the registry handler: answer, with failures and refusals at
// events that cannot act on them logged rather than returned.
func (h *typedHook) handle(ctx context.Context, ev Event) (any, error) {
	v, err := h.answer(ctx, ev)
	if p, ok := Lookup(ev.Name); (ok && p.Kind == Observer) || textAnswerEvents[ev.Name] {
		if err != nil {
			h.log.Warn("hook failed", "hook", h.label, "event", ev.Name, "err", err)
			return nil, nil
		}
	}
	return v, err
}

// answer runs the hook once and returns its answer in the combiners'
// types, or the failure.
func (h *typedHook) answer(ctx context.Context, ev Event) (any, error) {
	in, err := h.encode(ev.Name, ev.Payload)
	if err != nil {
		return nil, fmt.Errorf("encode payload: %w", err)
	}
	in = RedactJSON(h.red, in)
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	switch h.spec.Kind() {
	case TypeHTTP:
		body, err := h.post(ctx, ev.Name, in)
		if err != nil {
			return nil, err
		}
		if h.parse != nil {
			return h.parse(ev.Name, body)
		}
		return ParseAnswer(ev.Name, body)
	case TypePrompt, TypeAgent:
		return h.ask(ctx, ev, in)
	}
	return nil, fmt.Errorf("hook type %q cannot run here", h.spec.Type)
}

// Verdict instructions for prompt and agent hooks.
const (
	verdictSystem = `You are a policy check that a chat gateway runs at its %q hook point. The user message holds the rule to apply and the event's payload as JSON. ` +
		`Decide whether the event may proceed. Answer with one JSON object and nothing else: {"ok": true} to let it proceed, or {"ok": false, "reason": "<one sentence saying why>"} to refuse it.`
	textSystem = `You are a helper that a chat gateway runs at its %q hook point. The user message holds the request and the event's payload as JSON. Answer with plain text only: it is kept, as you write it, for the assistant to read.`
)

// RenderPrompt is a prompt hook's user message: prompt with $ARGUMENTS
// replaced by the payload JSON as it is (no quoting: it is not a shell),
// or the payload appended when the prompt does not say $ARGUMENTS.
func RenderPrompt(prompt string, payload []byte) string {
	if strings.Contains(prompt, "$ARGUMENTS") {
		return strings.ReplaceAll(prompt, "$ARGUMENTS", string(payload))
	}
	return strings.TrimRight(prompt, "\n") + "\n\n" + string(payload)
}

// unescapeHTML re-encodes a JSON document without Go's \u003c, \u003e and
// \u0026 escapes, so the model reads "a > b" as written.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return b
	}
	return encodeRaw(v, b)
}

// ask runs a prompt or agent hook through the Judge.
func (h *typedHook) ask(ctx context.Context, ev Event, payload []byte) (any, error) {
	if h.judge == nil {
		return nil, fmt.Errorf("no model to ask: %s hooks need a judge", h.spec.Kind())
	}
	text := textAnswerEvents[ev.Name]
	req := JudgeRequest{Kind: h.spec.Kind(), Prompt: RenderPrompt(h.spec.Prompt, unescapeHTML(payload)), Model: h.spec.Model, Event: ev.Name}
	if text {
		req.System = fmt.Sprintf(textSystem, ev.Name)
	} else {
		req.System = fmt.Sprintf(verdictSystem, ev.Name)
	}
	if req.Kind == TypeAgent {
		req.MaxIterations = h.spec.MaxIterations
	}
	if m, err := payloadMap(ev.Payload); err == nil {
		req.SessionID, _ = m["session_id"].(string)
	}
	out, err := h.callJudge(ctx, req)
	if err != nil {
		return nil, err
	}
	if text {
		if strings.TrimSpace(out) == "" {
			return nil, nil
		}
		return &Feedback{Context: ClipContext(strings.TrimSpace(out))}, nil
	}
	ok, reason, err := ParseVerdict(out)
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, nil
	}
	if strings.TrimSpace(reason) == "" {
		reason = fmt.Sprintf("refused by %s hook", h.spec.Kind())
	}
	if v := refusal(ev.Name, reason); v != nil {
		return v, nil
	}
	h.log.Info("hook refused, at an event that cannot block; logged only", "hook", h.label, "event", ev.Name, "reason", reason)
	return nil, nil
}

// callJudge calls the judge under ctx: an answer after the deadline (a
// judge that ignores its context) is a timeout too.
func (h *typedHook) callJudge(ctx context.Context, req JudgeRequest) (string, error) {
	type result struct {
		s   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("judge panicked: %v", p)}
			}
		}()
		s, err := h.judge.Judge(ctx, req)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			if ctx.Err() != nil {
				return "", fmt.Errorf("no answer within %s: %w", h.timeout, r.err)
			}
			return "", fmt.Errorf("model: %w", r.err)
		}
		return r.s, nil
	case <-ctx.Done():
		return "", fmt.Errorf("no answer within %s", h.timeout)
	}
}

// refusal is ok: false at a point that can block, in that point's
// result type (nil where the event cannot block).
func refusal(event, reason string) any {
	switch {
	case event == PreToolCallHook:
		return Block(reason)
	case event == PreLLMCallHook:
		return &LLMContext{Feedback: &Feedback{Block: true, Reason: reason}}
	case event == PreGatewayDispatchHook:
		return &DispatchDecision{Action: "skip", Reason: reason}
	case strings.HasPrefix(event, CommandPrefix):
		return &CommandDecision{Decision: "deny", Message: reason, MessageSet: true}
	}
	return nil
}
