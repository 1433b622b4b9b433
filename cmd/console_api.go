package cmd

// console_api.go: the endpoints of the web console that are not the
// local platform's own, served on its listener behind its token: the
// session list, a session's transcript and ending it (GET /v1/sessions,
// GET /v1/sessions/{id}, POST /v1/sessions/{id}/end), what is attached
// to each hook point and a test firing of it (GET /v1/hooks, POST
// /v1/hooks/test), and the hook_result event on /v1/events.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

func init() {
	gatewayHooks = append(gatewayHooks, startConsoleAPI)
}

// Session list bounds (GET /v1/sessions?limit=).
const (
	defaultSessionList = 50
	maxSessionList     = 500
	// lastMessageChars cuts a listed session's last message.
	lastMessageChars = 200
)

func startConsoleAPI(ctx context.Context, a *app, g *gatewayParts) (func(), error) {
	if g.local == nil {
		return nil, nil
	}
	c := &consoleAPI{a: a, runner: g.runner}
	g.local.Handle("GET /v1/sessions", c.listSessions)
	g.local.Handle("GET /v1/sessions/{id}", c.getSession)
	g.local.Handle("POST /v1/sessions/{id}/end", c.endSession)
	g.local.Handle("GET /v1/hooks", c.listHooks)
	g.local.Handle("POST /v1/hooks/test", c.testHooks)
	return nil, nil
}

type consoleAPI struct {
	a      *app
	runner *gateway.Runner
}

// sessionView is one session of GET /v1/sessions.
type sessionView struct {
	ID            string     `json:"id"`
	Platform      string     `json:"platform"`
	ChatID        string     `json:"chat_id"`
	ChatType      string     `json:"chat_type"`
	ThreadID      string     `json:"thread_id"`
	UserID        string     `json:"user_id"`
	UserName      string     `json:"user_name"`
	StartedAt     time.Time  `json:"started_at"`
	EndedAt       *time.Time `json:"ended_at"`
	LastMessageAt time.Time  `json:"last_message_at"`
	MessageCount  int        `json:"message_count"`
	LastMessage   string     `json:"last_message"`
}

func (c *consoleAPI) sessionView(s sessions.Summary) sessionView {
	v := sessionView{ID: s.ID, Platform: s.Platform, ChatID: s.ChatID, ChatType: s.ChatType, ThreadID: s.ThreadID,
		UserID: s.UserID, UserName: s.UserName, StartedAt: s.CreatedAt.UTC(), LastMessageAt: s.LastMessageAt.UTC(),
		MessageCount: s.MessageCount, LastMessage: cutText(c.a.redactor.Redact(s.LastMessage), lastMessageChars)}
	if s.EndedAt != nil {
		at := s.EndedAt.UTC()
		v.EndedAt = &at
	}
	return v
}

// cutText cuts s to n characters.
func cutText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func (c *consoleAPI) listSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := defaultSessionList
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			writeJSONError(w, http.StatusBadRequest, fmt.Sprintf("limit=%q is not a positive whole number", s))
			return
		}
		limit = min(n, maxSessionList)
	}
	list, err := c.a.store.Summaries(r.Context(), sessions.SummaryOptions{Platform: q.Get("platform"), ChatID: q.Get("chat_id"), Limit: limit})
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := make([]sessionView, 0, len(list))
	for _, s := range list {
		out = append(out, c.sessionView(s))
	}
	adapters.WriteJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

// messageView is one message of GET /v1/sessions/{id}.
type messageView struct {
	Role       string         `json:"role"`
	Content    string         `json:"content"`
	CreatedAt  time.Time      `json:"created_at"`
	ToolName   string         `json:"tool_name"`
	ToolCallID string         `json:"tool_call_id"`
	ToolCalls  []toolCallView `json:"tool_calls"`
}

type toolCallView struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// toolCalls reads the tool calls a message keeps as the model sent them.
func toolCalls(stored string) []toolCallView {
	out := []toolCallView{}
	if stored == "" {
		return out
	}
	var calls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	json.Unmarshal([]byte(stored), &calls)
	for _, tc := range calls {
		out = append(out, toolCallView{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return out
}

// summary is one session with its last message, for an id.
func (c *consoleAPI) summary(ctx context.Context, id string) (sessions.Summary, error) {
	sess, err := c.a.store.Session(ctx, id)
	if err != nil {
		return sessions.Summary{}, err
	}
	list, err := c.a.store.Summaries(ctx, sessions.SummaryOptions{Platform: sess.Platform, ChatID: sess.ChatID})
	if err != nil {
		return sessions.Summary{}, err
	}
	for _, s := range list {
		if s.ID == id {
			return s, nil
		}
	}
	return sessions.Summary{Session: *sess, LastMessageAt: sess.CreatedAt}, nil
}

// sessionError answers a session lookup's failure: 404 for an unknown id.
func sessionError(w http.ResponseWriter, id string, err error) {
	if errors.Is(err, sessions.ErrNoSession) {
		writeJSONError(w, http.StatusNotFound, "no session "+strconv.Quote(id))
		return
	}
	writeJSONError(w, http.StatusInternalServerError, err.Error())
}

func (c *consoleAPI) getSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	sum, err := c.summary(r.Context(), id)
	if err != nil {
		sessionError(w, id, err)
		return
	}
	msgs, err := c.a.store.Messages(r.Context(), id, 0)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := make([]messageView, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, messageView{Role: m.Role, Content: c.a.redactor.Redact(m.Content), CreatedAt: m.CreatedAt.UTC(),
			ToolName: m.ToolName, ToolCallID: m.ToolCallID, ToolCalls: toolCalls(c.a.redactor.Redact(m.ToolCalls))})
	}
	adapters.WriteJSON(w, http.StatusOK, map[string]any{"session": c.sessionView(sum), "messages": out})
}

func (c *consoleAPI) endSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	err := c.runner.EndSession(r.Context(), id)
	switch {
	case errors.Is(err, gateway.ErrSessionEnded):
		writeJSONError(w, http.StatusConflict, "session "+strconv.Quote(id)+" has ended already")
	case err != nil:
		sessionError(w, id, err)
	default:
		adapters.WriteJSON(w, http.StatusOK, map[string]bool{"ended": true})
	}
}

// attachment is one hook attached to an event, as GET /v1/hooks lists it.
type attachment struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Type     string `json:"type"`
	Matcher  string `json:"matcher"`
	Priority int    `json:"priority"`
	Consent  string `json:"consent"`
	Source   string `json:"source"`

	// the shell entry behind it (nil for the other kinds)
	spec *hooks.ShellSpec
}

// Consent states.
const (
	consentApproved    = "approved"
	consentNotApproved = "not_approved"
	consentNotNeeded   = "not_needed"
)

// attachmentID names an attachment the same way on every listing.
func attachmentID(kind, event, source, name string) string {
	sum := sha256.Sum256([]byte(kind + "\x00" + event + "\x00" + source + "\x00" + name))
	return kind + "-" + hex.EncodeToString(sum[:6])
}

// subscribes reports whether an attachment subscribed to pattern gets
// event ("*" and "base:*" as the registry reads them).
func subscribes(pattern, event string) bool {
	if pattern == event || pattern == "*" {
		return true
	}
	base, ok := strings.CutSuffix(pattern, ":*")
	return ok && strings.HasPrefix(event, base+":")
}

// attachments lists what is attached to each catalogue event, and to
// each command event an attachment names ("command:status", listed
// with the attachments of "command:*" and "*" too): Go plugins,
// directory hooks, then shell and Claude Code entries, each event's by
// priority. With only set, it lists that one event's.
func (c *consoleAPI) attachments(only string) map[string][]attachment {
	a := c.a
	var all []attachment
	var patterns [][]string
	add := func(ps []string, at attachment) {
		all = append(all, at)
		canon := make([]string, len(ps))
		for i, p := range ps {
			canon[i] = hooks.CanonicalEvent(p)
		}
		patterns = append(patterns, canon)
	}
	for _, p := range a.plugins {
		add(p.Events, attachment{Name: p.Name, Kind: "go", Type: hooks.TypeCommand, Consent: consentNotNeeded, Source: p.Name})
	}
	accept := a.acceptHooks()
	dirList := a.dirAllowlist()
	found, _ := hooks.DiscoverDir(filepath.Join(a.home, "hooks"))
	for _, h := range found {
		// the accept switch approves shell hooks only (hooks.DirConsent)
		consent := consentNotApproved
		if approved, _ := dirList.DirApproved(h.Dir); approved {
			consent = consentApproved
		}
		add(h.Events, attachment{Name: h.Name, Kind: "dir", Type: h.Typed.Kind(), Matcher: h.Matcher, Priority: h.Priority,
			Consent: consent, Source: filepath.Join(h.Dir, "HOOK.yaml")})
	}
	list := hooks.Approvals(a.allowlist().Load())
	for _, s := range a.shellSpecs(false) {
		kind := "shell"
		if s.Dialect == "claude" {
			kind = "claude"
		}
		consent := consentNotApproved
		if _, ok, changed := shellConsent(list, s); (ok && !changed) || accept {
			consent = consentApproved
		}
		spec := s
		add([]string{s.Event}, attachment{Name: s.Name(), Kind: kind, Type: s.Kind(), Matcher: s.Matcher, Priority: s.Priority,
			Consent: consent, Source: s.Origin(), spec: &spec})
	}
	events := hookEvents(patterns)
	if only != "" {
		events = []string{only}
	}
	out := map[string][]attachment{}
	for _, ev := range events {
		for i, at := range all {
			if slices.ContainsFunc(patterns[i], func(p string) bool { return subscribes(p, ev) }) {
				at.ID = attachmentID(at.Kind, ev, at.Source, at.Name)
				out[ev] = append(out[ev], at)
			}
		}
	}
	kindOrder := map[string]int{"go": 0, "dir": 1, "shell": 2, "claude": 2}
	for ev := range out {
		sort.SliceStable(out[ev], func(i, j int) bool {
			x, y := out[ev][i], out[ev][j]
			if x.Priority != y.Priority {
				return x.Priority > y.Priority
			}
			return kindOrder[x.Kind] < kindOrder[y.Kind]
		})
	}
	return out
}

// hookEvents is every catalogue event, and after them each command
// event ("command:status") a pattern names, sorted.
func hookEvents(patterns [][]string) []string {
	events := hooks.Names()
	var commands []string
	for _, ps := range patterns {
		for _, p := range ps {
			if strings.HasPrefix(p, hooks.CommandPrefix) && !strings.HasSuffix(p, "*") && !slices.Contains(events, p) && !slices.Contains(commands, p) {
				commands = append(commands, p)
			}
		}
	}
	sort.Strings(commands)
	return append(events, commands...)
}

// sortedEvents is every catalogue event, then the other events of all
// (commands), sorted.
func sortedEvents(all map[string][]attachment) []string {
	events := hooks.Names()
	var more []string
	for ev := range all {
		if !slices.Contains(events, ev) {
			more = append(more, ev)
		}
	}
	sort.Strings(more)
	return append(events, more...)
}

func (c *consoleAPI) listHooks(w http.ResponseWriter, r *http.Request) {
	type event struct {
		Event       string       `json:"event"`
		Attachments []attachment `json:"attachments"`
	}
	all := c.attachments("")
	out := []event{}
	for _, ev := range sortedEvents(all) {
		out = append(out, event{Event: ev, Attachments: append([]attachment{}, all[ev]...)})
	}
	adapters.WriteJSON(w, http.StatusOK, map[string]any{"events": out})
}

// hookTestResult is one attachment's answer to POST /v1/hooks/test.
type hookTestResult struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Outcome    string          `json:"outcome"`
	Detail     string          `json:"detail"`
	Answer     json.RawMessage `json:"answer"`
	DurationMS int64           `json:"duration_ms"`
}

func (c *consoleAPI) testHooks(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Event        string         `json:"event"`
		AttachmentID string         `json:"attachment_id"`
		Payload      map[string]any `json:"payload"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	if err := dec.Decode(&in); err != nil {
		writeJSONError(w, http.StatusBadRequest, `body must be {"event": "...", "attachment_id"?: "...", "payload"?: {...}}: `+err.Error())
		return
	}
	event := hooks.CanonicalEvent(in.Event)
	if !hooks.Known(event) {
		writeJSONError(w, http.StatusBadRequest, unknownEvent(in.Event))
		return
	}
	var chosen []attachment
	for _, at := range c.attachments(event)[event] {
		if in.AttachmentID == "" || at.ID == in.AttachmentID {
			chosen = append(chosen, at)
		}
	}
	if in.AttachmentID != "" && len(chosen) == 0 {
		writeJSONError(w, http.StatusNotFound, fmt.Sprintf("no attachment %q on %s (GET /v1/hooks lists them)", in.AttachmentID, event))
		return
	}
	tool, _ := in.Payload["tool_name"].(string)
	payload := overlayPayload(samplePayload(event, hooks.HeraldToolName(tool)), in.Payload)
	runner := c.a.shellRunner()
	out := []hookTestResult{}
	for _, at := range chosen {
		out = append(out, c.testOne(r.Context(), runner, at, event, payload))
	}
	adapters.WriteJSON(w, http.StatusOK, map[string]any{"results": out})
}

// testOne fires payload at one attachment: a shell or Claude Code
// entry as `herald hooks test` does, a directory hook or a Go plugin's
// callback through the handler the gateway attached (registered) for
// it, with the event's typed payload.
func (c *consoleAPI) testOne(ctx context.Context, runner *hooks.ShellRunner, at attachment, event string, payload any) hookTestResult {
	res := hookTestResult{ID: at.ID, Name: at.Name, Outcome: "error", Answer: json.RawMessage("null")}
	if at.Consent != consentApproved && at.Consent != consentNotNeeded {
		how := fmt.Sprintf("herald hooks allow %s", filepath.Dir(at.Source))
		if at.spec != nil {
			how = fmt.Sprintf("herald hooks allow %s %q", at.spec.Event, at.spec.Key())
		}
		res.Detail = fmt.Sprintf("not run: this hook needs consent (%s)", how)
		return res
	}
	if (at.Type == hooks.TypePrompt || at.Type == hooks.TypeAgent) && runner.Judge == nil {
		res.Detail = "not run: no model to ask (no model endpoint is configured)"
		return res
	}
	var (
		value   any
		err     error
		elapsed time.Duration
	)
	if at.spec != nil {
		f, ferr := fireSpec(ctx, runner, *at.spec, event, payload)
		if ferr != nil {
			res.Detail = c.a.redactor.Redact(ferr.Error())
			return res
		}
		value, err, elapsed = f.value, f.err, f.elapsed
		if f.run != nil && f.run.SpawnErr != nil {
			err = f.run.SpawnErr
		}
	} else {
		typed, terr := typedPayload(event, payload)
		if terr != nil {
			res.Detail = terr.Error()
			return res
		}
		subs := c.attached(at, event)
		if len(subs) == 0 {
			res.Detail = "not run: the gateway has not attached this hook (see herald hooks doctor)"
			return res
		}
		start := time.Now()
		for _, sub := range subs {
			if value, err = callHandler(ctx, sub, event, typed); err != nil || value != nil {
				break
			}
		}
		elapsed = time.Since(start)
	}
	res.DurationMS = elapsed.Milliseconds()
	res.Outcome, res.Detail = hooks.Outcome(value, err)
	res.Detail = cutText(c.a.redactor.Redact(res.Detail), 500)
	if rv := reflect.ValueOf(value); err == nil && rv.IsValid() && !(rv.Kind() == reflect.Pointer && rv.IsNil()) {
		if b, err := json.Marshal(value); err == nil {
			res.Answer = hooks.RedactJSON(c.a.redactor, b)
		}
	}
	return res
}

// attached finds the registry's subscriptions of a Go plugin or a
// directory hook that take event.
func (c *consoleAPI) attached(at attachment, event string) []hooks.Subscription {
	var out []hooks.Subscription
	for _, sub := range c.a.hooks.Subscribers() {
		switch {
		case at.Kind == "go" && sub.Attach == hooks.AttachGo && sub.Name == at.Name:
		case at.Kind == "dir" && sub.Attach == hooks.AttachDir && sub.Name == at.Name && sub.Order == filepath.Base(filepath.Dir(at.Source)):
		default:
			continue
		}
		if slices.ContainsFunc(sub.Events, func(p string) bool { return subscribes(p, event) }) {
			out = append(out, sub)
		}
	}
	return out
}

// callHandler calls one subscription's handler as the registry would:
// bounded by its timeout, a panic caught and returned as an error.
func callHandler(ctx context.Context, sub hooks.Subscription, event string, payload any) (value any, err error) {
	timeout := sub.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			value, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	return sub.Handler(ctx, hooks.Event{Name: event, Payload: payload, Time: time.Now()})
}

// typedPayload is payload (samplePayload's, maybe overlaid) as the Go
// type the gateway emits at event, so a Go plugin's typed callback takes
// it; an overlay that does not fit the type is an error naming it.
func typedPayload(event string, payload any) (any, error) {
	typed := payloadOf(event)
	if typed == nil {
		return payload, nil
	}
	if reflect.TypeOf(typed) == reflect.TypeOf(payload) {
		return payload, nil
	}
	b, err := json.Marshal(payload)
	if err == nil {
		err = json.Unmarshal(b, typed)
	}
	if err != nil {
		return nil, fmt.Errorf("the payload does not fit %s's: %v", event, err)
	}
	if cmd, ok := typed.(*hooks.Command); ok && cmd.Command == "" && event != hooks.CommandPrefix+"*" {
		cmd.Command = strings.TrimPrefix(event, hooks.CommandPrefix)
		cmd.RawCommand, cmd.Platform, cmd.UserID = "/"+cmd.Command, "local", "test-user"
	}
	return typed, nil
}

// payloadOf returns a new value of the payload type of event (nil for
// an event it does not know).
func payloadOf(event string) any {
	if strings.HasPrefix(event, hooks.CommandPrefix) {
		return &hooks.Command{}
	}
	switch event {
	case hooks.GatewayStartup:
		return &hooks.Startup{}
	case hooks.SessionStartEv:
		return &hooks.SessionStart{}
	case hooks.SessionEndEv, hooks.SessionResetEv:
		return &hooks.SessionBoundary{}
	case hooks.AgentStartEv:
		return &hooks.AgentStart{}
	case hooks.AgentEndEv:
		return &hooks.AgentEnd{}
	case hooks.AgentStepEv:
		return &hooks.AgentStep{}
	case hooks.PreToolCallHook:
		return &hooks.PreToolCall{}
	case hooks.PostToolCallHook, hooks.TransformToolResultHook:
		return &hooks.ToolResult{}
	case hooks.PreLLMCallHook:
		return &hooks.PreLLMCall{}
	case hooks.PostLLMCallHook:
		return &hooks.PostLLMCall{}
	case hooks.PreAPIRequestHook:
		return &hooks.APIRequest{}
	case hooks.PostAPIRequestHook:
		return &hooks.APIResponse{}
	case hooks.OnSessionStartHook:
		return &hooks.SessionStarted{}
	case hooks.OnSessionEndHook:
		return &hooks.SessionEnded{}
	case hooks.OnSessionFinalizeHook:
		return &hooks.SessionFinalized{}
	case hooks.OnSessionResetHook:
		return &hooks.SessionWasReset{}
	case hooks.SubagentStopHook:
		return &hooks.SubagentStop{}
	case hooks.PreGatewayDispatchHook:
		return &hooks.Dispatch{}
	case hooks.PreApprovalRequestHook, hooks.PostApprovalResponseHook:
		return &hooks.Approval{}
	case hooks.TransformTerminalOutputHook:
		return &hooks.TerminalOutput{}
	case hooks.TransformLLMOutputHook:
		return &hooks.LLMOutput{}
	case hooks.PreCompactHook:
		return &hooks.PreCompact{}
	case hooks.PostCompactHook:
		return &hooks.PostCompact{}
	}
	return nil
}

// localEvents feeds the local platform's /v1/events: every hook point
// with its firing's id and time, then, once its attachments have all
// answered, a hook_result event.
func localEvents(a *app) func(fn func(string, any)) func() {
	return func(fn func(string, any)) func() {
		order := &pointOrder{seen: map[uint64]bool{}, held: map[uint64]func(){}}
		owners := &sessionOwners{a: a, byKey: map[string]local.SessionRef{}}
		stopPoints := subscribeHookPoints(a, "local /v1/events", nil, func(name string, ctx json.RawMessage, at time.Time, point uint64) {
			hp := local.HookPoint{ID: strconv.FormatUint(point, 10), At: at, Session: owners.see(name, ctx)}
			if ctx != nil {
				hp.Context = ctx
			}
			order.point(point, func() { fn(name, hp) })
		})
		kinds := newKindTable(a)
		stopResults := a.hooks.ObserveResults(func(p hooks.PointResult) {
			order.result(p.Point, func() { fn("hook_result", hookResult(a, kinds, p)) })
		})
		return func() { stopResults(); stopPoints() }
	}
}

// pluginCommandEvents names the hook points of the commands plugins
// registered ("command:weather"): the catalogue does not list them, and
// a browser listens to events by name.
func pluginCommandEvents(a *app) func() []string {
	return func() []string {
		var out []string
		for _, c := range a.hooks.Commands() {
			out = append(out, hooks.CommandPrefix+c.Name)
		}
		return out
	}
}

// sessionOwners names whose session an approval's hook point belongs
// to: its payload carries only the session key (Hermes' shape). The
// turn's agent:start, which comes first on the stream, says the
// platform, chat and user; a key not seen since the stream's start is
// looked up in the store (a session already stored), or named by its
// platform alone.
type sessionOwners struct {
	a     *app
	byKey map[string]local.SessionRef // the last maxSessionOwners keys seen
}

const maxSessionOwners = 4096

// see is called with every hook point, in order, on one goroutine.
func (o *sessionOwners) see(name string, ctx json.RawMessage) *local.SessionRef {
	switch name {
	case hooks.AgentStartEv:
		var p hooks.AgentStart
		if json.Unmarshal(ctx, &p) != nil {
			return nil
		}
		src := herald.Source{Platform: herald.Platform(p.Platform), ChatID: p.ChatID, ChatType: herald.ChatType(p.ChatType), ThreadID: p.ThreadID, UserID: p.UserID}
		key := sessions.Key(src, sessionKeyOptions(o.a.cfg))
		if len(o.byKey) >= maxSessionOwners {
			clear(o.byKey)
		}
		o.byKey[key] = local.SessionRef{Key: key, Platform: p.Platform, ChatID: p.ChatID, UserID: p.UserID}
	case hooks.PreApprovalRequestHook, hooks.PostApprovalResponseHook:
		var p hooks.Approval
		if json.Unmarshal(ctx, &p) != nil || p.SessionKey == "" {
			return nil
		}
		if ref, ok := o.byKey[p.SessionKey]; ok {
			return &ref
		}
		ref := local.SessionRef{Key: p.SessionKey, Platform: sessions.KeyPlatform(p.SessionKey)}
		if s, err := o.a.store.OpenSession(context.Background(), p.SessionKey); err == nil && s != nil {
			ref.Platform, ref.ChatID, ref.UserID = s.Platform, s.ChatID, s.UserID
		}
		return &ref
	}
	return nil
}

// pointOrder puts each hook_result after its hook point on the stream:
// the point reaches the stream through its subscription's queue, and
// its result may come first (the attachments answer on their own
// goroutines). A result waits for its point, and a point is remembered
// for its result, both among the last pointOrderSize only: past that a
// result goes out as it is.
type pointOrder struct {
	mu   sync.Mutex
	seen map[uint64]bool
	held map[uint64]func()
	// ring is the order points and results were remembered in
	ring []uint64
}

const pointOrderSize = 4096

func (o *pointOrder) point(id uint64, publish func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	publish()
	if res, ok := o.held[id]; ok {
		delete(o.held, id)
		res()
		return
	}
	o.remember(id)
	o.seen[id] = true
}

func (o *pointOrder) result(id uint64, publish func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen[id] {
		delete(o.seen, id)
		publish()
		return
	}
	o.remember(id)
	o.held[id] = publish
}

// remember records id, forgetting the oldest past pointOrderSize (a
// result held that long goes out).
func (o *pointOrder) remember(id uint64) {
	o.ring = append(o.ring, id)
	if len(o.ring) <= pointOrderSize {
		return
	}
	old := o.ring[0]
	o.ring = o.ring[1:]
	delete(o.seen, old)
	if res, ok := o.held[old]; ok {
		delete(o.held, old)
		res()
	}
}

// hookResultView is the context of a hook_result event.
type hookResultView struct {
	PointID     string                 `json:"point_id"`
	Event       string                 `json:"event"`
	SessionID   string                 `json:"session_id"`
	ChatID      string                 `json:"chat_id"`
	Platform    string                 `json:"platform"`
	DurationMS  int64                  `json:"duration_ms"`
	Attachments []attachmentResultView `json:"attachments"`
}

type attachmentResultView struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Type       string `json:"type"`
	DurationMS int64  `json:"duration_ms"`
	Outcome    string `json:"outcome"`
	Detail     string `json:"detail"`
}

// hookResult is the hook_result event of one firing, secrets masked.
func hookResult(a *app, kinds kindTable, p hooks.PointResult) hookResultView {
	v := hookResultView{PointID: strconv.FormatUint(p.Point, 10), Event: p.Event, DurationMS: p.Elapsed.Milliseconds(),
		Attachments: make([]attachmentResultView, 0, len(p.Attachments))}
	var where struct {
		SessionID any    `json:"session_id"`
		ChatID    string `json:"chat_id"`
		Platform  string `json:"platform"`
	}
	if b, err := json.Marshal(p.Payload); err == nil {
		json.Unmarshal(b, &where)
	}
	if s, ok := where.SessionID.(string); ok {
		v.SessionID = s
	}
	v.ChatID, v.Platform = where.ChatID, where.Platform
	for _, at := range p.Attachments {
		outcome, detail := hooks.Outcome(at.Value, at.Err)
		if at.Dropped {
			outcome, detail = "skip", "not delivered: the hook's queue was full"
		}
		kind, typ := kinds.of(at)
		v.Attachments = append(v.Attachments, attachmentResultView{Name: at.Name, Kind: kind, Type: typ, DurationMS: at.Elapsed.Milliseconds(),
			Outcome: outcome, Detail: cutText(a.redactor.Redact(detail), 500)})
	}
	return v
}

// kindTable names attachments' kinds and types for hook_result, by
// attachment and name: read once, when /v1/events gets its first
// client; an attachment added later is named by its attachment alone.
type kindTable map[string][2]string

func kindKey(at hooks.Attach, name string) string { return at.String() + "\x00" + name }

func newKindTable(a *app) kindTable {
	t := kindTable{}
	found, _ := hooks.DiscoverDir(filepath.Join(a.home, "hooks"))
	for _, h := range found {
		t[kindKey(hooks.AttachDir, h.Name)] = [2]string{"dir", h.Typed.Kind()}
	}
	for _, s := range a.shellSpecs(false) {
		kind := "shell"
		if s.Dialect == "claude" {
			kind = "claude"
		}
		t[kindKey(hooks.AttachShell, s.Name())] = [2]string{kind, s.Kind()}
	}
	return t
}

func (t kindTable) of(at hooks.AttachmentResult) (kind, typ string) {
	if k, ok := t[kindKey(at.Attach, at.Name)]; ok {
		return k[0], k[1]
	}
	switch at.Attach {
	case hooks.AttachGo:
		return "go", hooks.TypeCommand
	case hooks.AttachDir:
		return "dir", hooks.TypeCommand
	}
	return "shell", hooks.TypeCommand
}
