package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/hooks"
)

// api calls the gateway's local API with the token ("" for none) and
// decodes the JSON answer into out (if not nil).
func api(t *testing.T, g *cmdtest.Gateway, method, path, token, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+g.Addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil && json.Unmarshal(b, out) != nil {
		t.Fatalf("%s %s = %d, not JSON: %q", method, path, res.StatusCode, b)
	}
	return res.StatusCode
}

// waitEvent reads events until ok takes one.
func waitEvent(t *testing.T, events <-chan cmdtest.Event, what string, ok func(cmdtest.Event) bool) cmdtest.Event {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case e, open := <-events:
			if !open {
				t.Fatalf("event stream ended before %s", what)
			}
			if ok(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("no %s within 60 s", what)
		}
	}
}

// The console's server side on a whole gateway with a shell hook that
// blocks pre_tool_call, an http hook before it, an unapproved shell hook
// and a directory hook: the events stream opens with a ticket (once, and
// on no other endpoint, and the ticket is never logged); a blocked tool
// call is followed by a hook_result naming each attachment's outcome;
// GET /v1/hooks lists them with their consent; POST /v1/hooks/test fires
// one and returns its answer, and refuses to run one without consent.
func TestConsoleTicketHookResultAndHooks(t *testing.T) {
	policy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{}`) }))
	defer policy.Close()
	home := t.TempDir()
	guard := filepath.Join(home, "guard.sh")
	os.WriteFile(guard, []byte("#!/bin/sh\nif grep -q 'rm -rf'; then echo '{\"action\":\"block\",\"message\":\"no rm -rf here\"}'; else echo '{}'; fi\n"), 0o755)
	unapproved := filepath.Join(home, "audit.sh")
	os.WriteFile(unapproved, []byte("#!/bin/sh\necho '{}'\n"), 0o755)
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte(fmt.Sprintf(`hooks:
  pre_tool_call:
    - type: http
      url: %s/check
      allow_private: true
      priority: 100
    - command: %s
      matcher: terminal
      timeout: 5
    - command: %s
      timeout: 5
`, policy.URL, guard, unapproved)), 0o600)
	hd := filepath.Join(home, "hooks", "watch")
	os.MkdirAll(hd, 0o700)
	os.WriteFile(filepath.Join(hd, "HOOK.yaml"), []byte("name: watch\nevents: [agent:start]\ncommand: [/bin/true]\n"), 0o600)
	for _, key := range []string{"http:" + policy.URL + "/check", guard} {
		if code, out, errw := run(t, home, "", "hooks", "allow", "pre_tool_call", key); code != 0 {
			t.Fatalf("hooks allow %s: %d %s %s", key, code, out, errw)
		}
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home})

	// tickets
	var tk struct {
		Ticket    string `json:"ticket"`
		ExpiresIn int    `json:"expires_in"`
	}
	if code := api(t, g, "POST", "/v1/events/ticket", "", "", nil); code != 401 {
		t.Fatalf("ticket without the token: %d", code)
	}
	if code := api(t, g, "POST", "/v1/events/ticket", g.Token, "", &tk); code != 200 || len(tk.Ticket) < 26 || tk.ExpiresIn != 60 {
		t.Fatalf("ticket: %d %+v", code, tk)
	}
	if code := api(t, g, "GET", "/v1/sessions?ticket="+tk.Ticket, "", "", nil); code != 401 {
		t.Fatalf("ticket on /v1/sessions: %d", code)
	}
	frames := g.TicketEvents(t, tk.Ticket)
	if code := api(t, g, "GET", "/v1/events?ticket="+tk.Ticket, "", "", nil); code != 401 {
		t.Fatalf("ticket used twice: %d", code)
	}

	// a blocked tool call and its hook_result
	r := g.Say(t, "c1", "run: rm -rf ./x")
	if !strings.Contains(r.Text(), "no rm -rf here") {
		t.Fatalf("reply: %q", r.Text())
	}
	pre := waitEvent(t, frames, "pre_tool_call", func(e cmdtest.Event) bool { return e.Name == hooks.PreToolCallHook })
	if pre.PointID == "" || pre.At == "" {
		t.Fatalf("pre_tool_call without point_id or at: %+v", pre)
	}
	if _, err := time.Parse(time.RFC3339Nano, pre.At); err != nil {
		t.Fatalf("at: %v", err)
	}
	res := waitEvent(t, frames, "hook_result of pre_tool_call", func(e cmdtest.Event) bool {
		return e.Name == "hook_result" && e.Context["point_id"] == pre.PointID
	})
	raw, _ := json.Marshal(res)
	var hr struct {
		Context struct {
			Event       string `json:"event"`
			ChatID      string `json:"chat_id"`
			Platform    string `json:"platform"`
			SessionID   string `json:"session_id"`
			Attachments []struct {
				Name, Kind, Type, Outcome, Detail string
				DurationMS                        *int64 `json:"duration_ms"`
			} `json:"attachments"`
		} `json:"context"`
	}
	json.Unmarshal(raw, &hr)
	c := hr.Context
	if c.Event != hooks.PreToolCallHook || c.SessionID == "" || len(c.Attachments) != 2 {
		t.Fatalf("hook_result: %s", raw)
	}
	byType := map[string]int{}
	for i, a := range c.Attachments {
		byType[a.Type] = i
		if a.Kind != "shell" || a.DurationMS == nil {
			t.Errorf("attachment %+v", a)
		}
	}
	if h := c.Attachments[byType["http"]]; h.Outcome != "none" {
		t.Errorf("http hook: %+v", h)
	}
	if s := c.Attachments[byType["command"]]; s.Outcome != "block" || s.Detail != "no rm -rf here" || s.Name != guard {
		t.Errorf("shell hook: %+v (%s)", s, raw)
	}
	if strings.Contains(g.Log(), tk.Ticket) {
		t.Error("the ticket is in the gateway's log")
	}

	// GET /v1/hooks
	type att struct {
		ID, Name, Kind, Type, Matcher, Consent, Source string
		Priority                                       int
	}
	var list struct {
		Events []struct {
			Event       string `json:"event"`
			Attachments []att  `json:"attachments"`
		} `json:"events"`
	}
	if code := api(t, g, "GET", "/v1/hooks", g.Token, "", &list); code != 200 || len(list.Events) != len(hooks.Names()) {
		t.Fatalf("hooks: %d, %d events", code, len(list.Events))
	}
	got := map[string][]att{}
	for _, e := range list.Events {
		got[e.Event] = e.Attachments
	}
	pt := got[hooks.PreToolCallHook]
	if len(pt) != 3 || pt[0].Type != "http" || pt[0].Priority != 100 || pt[0].Consent != "approved" ||
		pt[1].Name != guard || pt[1].Consent != "approved" || pt[1].Matcher != "terminal" || !strings.Contains(pt[1].Source, "config.yaml:") ||
		pt[2].Name != unapproved || pt[2].Consent != "not_approved" {
		t.Fatalf("pre_tool_call attachments: %+v", pt)
	}
	if as := got[hooks.AgentStartEv]; len(as) != 1 || as[0].Kind != "dir" || as[0].Name != "watch" || as[0].Consent != "not_approved" || !strings.HasSuffix(as[0].Source, "HOOK.yaml") {
		t.Fatalf("agent:start attachments: %+v", as)
	}

	// POST /v1/hooks/test
	type result struct {
		ID, Name, Outcome, Detail string
		Answer                    json.RawMessage
		DurationMS                int64 `json:"duration_ms"`
	}
	var tr struct {
		Results []result `json:"results"`
	}
	body := fmt.Sprintf(`{"event":"pre_tool_call","attachment_id":%q,"payload":{"args":{"command":"rm -rf /"}}}`, pt[1].ID)
	if code := api(t, g, "POST", "/v1/hooks/test", g.Token, body, &tr); code != 200 || len(tr.Results) != 1 {
		t.Fatalf("hooks test: %d %+v", code, tr)
	}
	if x := tr.Results[0]; x.ID != pt[1].ID || x.Outcome != "block" || x.Detail != "no rm -rf here" || string(x.Answer) != `{"action":"block","message":"no rm -rf here"}` {
		t.Fatalf("hooks test result: %+v %s", x, x.Answer)
	}
	body = fmt.Sprintf(`{"event":"pre_tool_call","attachment_id":%q}`, pt[2].ID)
	if code := api(t, g, "POST", "/v1/hooks/test", g.Token, body, &tr); code != 200 || len(tr.Results) != 1 ||
		tr.Results[0].Outcome != "error" || !strings.Contains(tr.Results[0].Detail, "consent") || string(tr.Results[0].Answer) != "null" {
		t.Fatalf("unapproved hook tested: %d %+v", code, tr)
	}
	if code := api(t, g, "POST", "/v1/hooks/test", g.Token, `{"event":"pre_tool_cal"}`, nil); code != 400 {
		t.Fatalf("unknown event: %d", code)
	}
	if code := api(t, g, "POST", "/v1/hooks/test", g.Token, `{"event":"pre_tool_call","attachment_id":"shell-000000000000"}`, nil); code != 404 {
		t.Fatalf("unknown attachment: %d", code)
	}
}

// On the local platform an approval prompt carries buttons (reply,
// outbox, message event); a press approves it and message_update closes
// it. The session list and transcript show the turn; ending the session
// fires session:end, a second end is 409, and the next message starts a
// new session.
func TestConsoleButtonsAndSessions(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{})
	events := g.Events(t)
	work := t.TempDir()
	pending := g.PostAsync(`{"chat_id":"c2","user_id":"u-c2","user_name":"Ann","text":"run: mkdir -p `+work+`/x && rm -rf `+work+`/x && echo cleaned"}`, nil)
	msg := cmdtest.WaitFor(t, events, "message", 60*time.Second)
	for msg.Context["buttons"] == nil {
		msg = cmdtest.WaitFor(t, events, "message", 60*time.Second)
	}
	buttons, _ := msg.Context["buttons"].([]any)
	var approve string
	for _, b := range buttons {
		m := b.(map[string]any)
		if m["label"] == "Approve once" {
			approve, _ = m["data"].(string)
		}
	}
	id, _ := msg.Context["id"].(string)
	if len(buttons) != 4 || approve == "" || id == "" {
		t.Fatalf("prompt event: %+v", msg.Context)
	}
	var outbox struct {
		Messages []struct {
			ID       string `json:"id"`
			Text     string `json:"text"`
			Buttons  []any  `json:"buttons"`
			EditedAt string `json:"edited_at"`
		} `json:"messages"`
	}
	api(t, g, "GET", "/v1/chats/c2/messages", g.Token, "", &outbox)
	if n := len(outbox.Messages); n == 0 || outbox.Messages[n-1].ID != id || len(outbox.Messages[n-1].Buttons) != 4 {
		t.Fatalf("outbox: %+v", outbox)
	}
	var pr struct {
		Reply string `json:"reply"`
	}
	if code := api(t, g, "POST", "/v1/chats/c2/press", g.Token, `{"message_id":"`+id+`","data":"`+approve+`","user_id":"someone-else"}`, &pr); code != 200 || pr.Reply != "Only the person who asked, or an approver, can answer this." {
		t.Fatalf("stranger's press: %d %+v", code, pr)
	}
	if code := api(t, g, "POST", "/v1/chats/c2/press", g.Token, `{"message_id":"`+id+`","data":"`+approve+`"}`, nil); code != 400 {
		t.Fatalf("press without user_id: %d", code)
	}
	if code := api(t, g, "POST", "/v1/chats/c2/press", g.Token, `{"message_id":"`+id+`","data":"`+approve+`","user_id":"u-c2","user_name":"Ann"}`, &pr); code != 200 || pr.Reply != "✅ Approved (once)." {
		t.Fatalf("press: %d %+v", code, pr)
	}
	upd := cmdtest.WaitFor(t, events, "message_update", 60*time.Second)
	if upd.Context["id"] != id || upd.Context["chat_id"] != "c2" || !strings.Contains(fmt.Sprint(upd.Context["text"]), "Approved once by Ann") {
		t.Fatalf("message_update: %+v", upd.Context)
	}
	if b, ok := upd.Context["buttons"].([]any); !ok || len(b) != 0 {
		t.Fatalf("message_update buttons: %+v", upd.Context["buttons"])
	}
	// the POST answered with the prompt (awaiting input); the turn goes on
	if code, r := pending.Wait(t); code != 200 || len(r.Replies) == 0 || r.Replies[len(r.Replies)-1].ID != id || len(r.Replies[len(r.Replies)-1].Buttons) != 4 {
		t.Fatalf("turn: %d %+v", code, r)
	}
	cmdtest.WaitFor(t, events, hooks.AgentEndEv, 60*time.Second)
	outbox.Messages = nil
	api(t, g, "GET", "/v1/chats/c2/messages?after="+id, g.Token, "", &outbox)
	if n := len(outbox.Messages); n == 0 || !strings.Contains(outbox.Messages[n-1].Text, "cleaned") {
		t.Fatalf("the approved command's result: %+v", outbox)
	}
	outbox.Messages = nil
	api(t, g, "GET", "/v1/chats/c2/messages", g.Token, "", &outbox)
	for _, m := range outbox.Messages {
		if m.ID == id && (m.Buttons != nil || m.EditedAt == "" || !strings.Contains(m.Text, "Approved once by Ann")) {
			t.Fatalf("closed prompt in the outbox: %+v", m)
		}
	}

	// sessions
	type session struct {
		ID            string  `json:"id"`
		Platform      string  `json:"platform"`
		ChatID        string  `json:"chat_id"`
		ChatType      string  `json:"chat_type"`
		UserID        string  `json:"user_id"`
		UserName      string  `json:"user_name"`
		StartedAt     string  `json:"started_at"`
		EndedAt       *string `json:"ended_at"`
		LastMessageAt string  `json:"last_message_at"`
		MessageCount  int     `json:"message_count"`
		LastMessage   string  `json:"last_message"`
	}
	var sl struct {
		Sessions []session `json:"sessions"`
	}
	if code := api(t, g, "GET", "/v1/sessions?platform=local&chat_id=c2&limit=1", g.Token, "", &sl); code != 200 || len(sl.Sessions) != 1 {
		t.Fatalf("sessions: %d %+v", code, sl)
	}
	s := sl.Sessions[0]
	if s.Platform != "local" || s.ChatID != "c2" || s.UserID != "u-c2" || s.UserName != "Ann" || s.EndedAt != nil || s.MessageCount < 3 || s.LastMessage == "" || s.StartedAt == "" || s.LastMessageAt < s.StartedAt {
		t.Fatalf("session: %+v", s)
	}
	var tr struct {
		Session  session `json:"session"`
		Messages []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			CreatedAt  string `json:"created_at"`
			ToolName   string `json:"tool_name"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID, Name, Arguments string
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if code := api(t, g, "GET", "/v1/sessions/"+s.ID, g.Token, "", &tr); code != 200 || tr.Session.ID != s.ID || len(tr.Messages) < 3 {
		t.Fatalf("transcript: %d %+v", code, tr)
	}
	if m := tr.Messages[0]; m.Role != "user" || !strings.Contains(m.Content, "run: mkdir") {
		t.Fatalf("first message: %+v", m)
	}
	var call, result bool
	for _, m := range tr.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) == 1 && m.ToolCalls[0].Name == "terminal" && strings.Contains(m.ToolCalls[0].Arguments, "rm -rf") {
			call = true
		}
		if m.Role == "tool" && m.ToolName == "terminal" && m.ToolCallID != "" {
			result = true
		}
	}
	if !call || !result {
		t.Fatalf("transcript lacks the tool call or its result: %+v", tr.Messages)
	}
	if code := api(t, g, "GET", "/v1/sessions/nope", g.Token, "", nil); code != 404 {
		t.Fatalf("unknown session: %d", code)
	}
	if code := api(t, g, "GET", "/v1/sessions?limit=x", g.Token, "", nil); code != 400 {
		t.Fatalf("bad limit: %d", code)
	}
	var ended struct {
		Ended bool `json:"ended"`
	}
	if code := api(t, g, "POST", "/v1/sessions/"+s.ID+"/end", g.Token, "", &ended); code != 200 || !ended.Ended {
		t.Fatalf("end: %d %+v", code, ended)
	}
	cmdtest.WaitFor(t, events, hooks.SessionEndEv, 60*time.Second)
	if code := api(t, g, "POST", "/v1/sessions/"+s.ID+"/end", g.Token, "", nil); code != 409 {
		t.Fatalf("second end: %d", code)
	}
	if code := api(t, g, "POST", "/v1/sessions/nope/end", g.Token, "", nil); code != 404 {
		t.Fatalf("end of an unknown session: %d", code)
	}
	if r := g.Say(t, "c2", "hello again"); r.SessionID == s.ID || r.SessionID == "" {
		t.Fatalf("after end the chat kept session %q", r.SessionID)
	}
	api(t, g, "GET", "/v1/sessions?platform=local&chat_id=c2", g.Token, "", &sl)
	if len(sl.Sessions) != 2 || sl.Sessions[1].ID != s.ID || sl.Sessions[1].EndedAt == nil || sl.Sessions[0].LastMessage == "" {
		t.Fatalf("sessions after end: %+v", sl.Sessions)
	}
}

// A reply the model streams grows in place on the local platform: the
// event stream (opened with a ticket, as the console opens it) has it as
// a "message" with the first words while the model still writes, then a
// "message_update" per step, the last with the whole text; the POST that
// caused it answers with the final text once, and the outbox keeps one
// message with it.
func TestConsoleStreamedReplyEvents(t *testing.T) {
	const answer = "Hello there, this reply streams in three steps."
	gates := []chan struct{}{make(chan struct{}), make(chan struct{})}
	srv := agenttest.New(t, agenttest.Reply{Content: answer, Pieces: 3, Gates: gates})
	g := cmdtest.Start(t, cmdtest.Options{Env: fakeModelEnv(srv)})
	var tk struct {
		Ticket string `json:"ticket"`
	}
	if code := api(t, g, "POST", "/v1/events/ticket", g.Token, "", &tk); code != 200 {
		t.Fatalf("ticket: %d", code)
	}
	events := g.TicketEvents(t, tk.Ticket)
	pending := g.PostAsync(`{"chat_id":"s1","user_id":"u-s1","user_name":"Ann","text":"hi"}`, nil)
	parts := agenttest.Split(answer, 3)
	inChat := func(name string) func(cmdtest.Event) bool {
		return func(e cmdtest.Event) bool { return e.Name == name && e.Context["chat_id"] == "s1" }
	}
	first := waitEvent(t, events, "the first words", inChat("message"))
	id, _ := first.Context["id"].(string)
	if first.Context["text"] != parts[0] || id == "" {
		t.Fatalf("first message: %+v (want %q)", first.Context, parts[0])
	}
	select {
	case <-pending.Done():
		t.Fatal("the POST answered before the model finished")
	default:
	}
	grown := parts[0]
	for i, gate := range gates {
		close(gate)
		grown += parts[i+1]
		upd := waitEvent(t, events, "the reply grown to "+strconv.Quote(grown), inChat("message_update"))
		if upd.Context["id"] != id || upd.Context["text"] != grown {
			t.Fatalf("message_update: %+v (want %q)", upd.Context, grown)
		}
	}
	code, r := pending.Wait(t)
	if code != 200 || len(r.Replies) != 1 || r.Replies[0].Text != answer || r.Replies[0].ID != id {
		t.Fatalf("POST: %d %+v", code, r)
	}
	var outbox struct {
		Messages []struct {
			ID       string `json:"id"`
			Text     string `json:"text"`
			EditedAt string `json:"edited_at"`
		} `json:"messages"`
	}
	api(t, g, "GET", "/v1/chats/s1/messages", g.Token, "", &outbox)
	if len(outbox.Messages) != 1 || outbox.Messages[0].ID != id || outbox.Messages[0].Text != answer || outbox.Messages[0].EditedAt == "" {
		t.Fatalf("outbox: %+v", outbox)
	}
}

// POST /v1/hooks/test fires at every kind of attachment: a directory
// hook (its handler run on the synthetic payload, its answer parsed), a
// Go plugin's callback (given the event's typed payload, with the
// overlay applied) and an unapproved directory hook (listed as such, and
// not run, even with the accept switch on).
func TestConsoleHooksTestEveryKind(t *testing.T) {
	home := t.TempDir()
	hd := filepath.Join(home, "hooks")
	writeFiles(t, filepath.Join(hd, "no-status"), map[string]string{
		"HOOK.yaml": "events: [command:status]\ncommand: [./deny.sh]\n",
		"deny.sh":   "#!/bin/sh\ncat >/dev/null\necho '{\"decision\": \"deny\", \"message\": \"status is off today\"}'\n",
	})
	writeFiles(t, filepath.Join(hd, "unasked"), map[string]string{
		"HOOK.yaml": "events: [command:status]\ncommand: [./deny.sh]\n",
		"deny.sh":   "#!/bin/sh\ncat >/dev/null\necho '{\"decision\": \"deny\"}'\n",
	})
	allowDir(t, home, "no-status")
	guard := hooks.Plugin{Name: "rm-guard", Register: func(c *hooks.PluginContext) error {
		c.RegisterHook(hooks.PreToolCallHook, hooks.Func(func(ctx context.Context, p *hooks.PreToolCall) *hooks.ToolDecision {
			if cmd, _ := p.Args["command"].(string); strings.Contains(cmd, "rm -rf") {
				return hooks.Block("the plugin says no to " + cmd)
			}
			return nil
		}))
		return nil
	}}
	// the accept switch approves shell hooks, not directory hooks
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Plugins: []hooks.Plugin{guard}, Args: []string{"--accept-hooks"}})

	var list struct {
		Events []struct {
			Event       string `json:"event"`
			Attachments []struct {
				ID, Name, Kind string
			} `json:"attachments"`
		} `json:"events"`
	}
	if code := api(t, g, "GET", "/v1/hooks", g.Token, "", &list); code != 200 {
		t.Fatalf("hooks: %d", code)
	}
	ids := map[string]string{}
	for _, e := range list.Events {
		for _, a := range e.Attachments {
			ids[e.Event+" "+a.Kind+" "+a.Name] = a.ID
		}
	}
	type result struct {
		ID, Name, Outcome, Detail string
		Answer                    json.RawMessage
		DurationMS                *int64 `json:"duration_ms"`
	}
	fire := func(event, id, payload string) result {
		t.Helper()
		if id == "" {
			t.Fatalf("no attachment listed for %s: %v", event, ids)
		}
		body := fmt.Sprintf(`{"event":%q,"attachment_id":%q%s}`, event, id, payload)
		var tr struct {
			Results []result `json:"results"`
		}
		if code := api(t, g, "POST", "/v1/hooks/test", g.Token, body, &tr); code != 200 || len(tr.Results) != 1 || tr.Results[0].ID != id || tr.Results[0].DurationMS == nil {
			t.Fatalf("hooks test %s: %d %+v", body, code, tr)
		}
		return tr.Results[0]
	}

	dir := fire("command:status", ids["command:status dir no-status"], "")
	if dir.Outcome != "block" || dir.Detail != "status is off today" || !strings.Contains(string(dir.Answer), "status is off today") {
		t.Errorf("directory hook: %+v %s", dir, dir.Answer)
	}
	plugin := fire(hooks.PreToolCallHook, ids["pre_tool_call go rm-guard"], `,"payload":{"args":{"command":"rm -rf ./x"}}`)
	if plugin.Outcome != "block" || plugin.Detail != "the plugin says no to rm -rf ./x" || string(plugin.Answer) != `{"action":"block","message":"the plugin says no to rm -rf ./x"}` {
		t.Errorf("Go plugin: %+v %s", plugin, plugin.Answer)
	}
	if quiet := fire(hooks.PreToolCallHook, ids["pre_tool_call go rm-guard"], ""); quiet.Outcome != "none" || string(quiet.Answer) != "null" {
		t.Errorf("Go plugin on the sample payload: %+v %s", quiet, quiet.Answer)
	}
	if bad := fire(hooks.PreToolCallHook, ids["pre_tool_call go rm-guard"], `,"payload":{"args":"not an object"}`); bad.Outcome != "error" || !strings.Contains(bad.Detail, "does not fit") || !strings.Contains(bad.Detail, "args") {
		t.Errorf("Go plugin on a payload of the wrong shape: %+v", bad)
	}
	if un := fire("command:status", ids["command:status dir unasked"], ""); un.Outcome != "error" || !strings.Contains(un.Detail, "consent") || string(un.Answer) != "null" {
		t.Errorf("unapproved directory hook: %+v", un)
	}
}

// A command a plugin registered fires its command:<name> hook point on
// the event stream opened with a ticket, as a built-in command's does,
// and the ticket names it (an EventSource listens to events by name).
func TestConsolePluginCommandOnTheEventStream(t *testing.T) {
	weather := hooks.Plugin{Name: "weather", Register: func(c *hooks.PluginContext) error {
		return c.RegisterCommand("weather", "the weather", "<city>", func(ctx context.Context, call *hooks.CommandCall) (string, error) {
			return "Sunny in " + call.RawArgs + ".", nil
		})
	}}
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{weather}})
	var tk struct {
		Ticket string   `json:"ticket"`
		Events []string `json:"events"`
	}
	if code := api(t, g, "POST", "/v1/events/ticket", g.Token, "", &tk); code != 200 || len(tk.Events) != 1 || tk.Events[0] != "command:weather" {
		t.Fatalf("ticket: %d %+v", code, tk)
	}
	events := g.TicketEvents(t, tk.Ticket)
	for _, text := range []string{"/status", "/weather Lyon"} {
		if r := g.Say(t, "pc", text); r.Status != "done" {
			t.Fatalf("%s: %+v", text, r)
		}
	}
	if r := g.Say(t, "pc", "/weather Paris"); r.Text() != "Sunny in Paris." {
		t.Fatalf("/weather: %q", r.Text())
	}
	status := waitEvent(t, events, "command:status", func(e cmdtest.Event) bool { return e.Name == "command:status" })
	if status.PointID == "" {
		t.Fatalf("command:status: %+v", status)
	}
	for _, city := range []string{"Lyon", "Paris"} {
		e := waitEvent(t, events, "command:weather for "+city, func(e cmdtest.Event) bool { return e.Name == "command:weather" })
		if e.Context["command"] != "weather" || e.Context["args"] != city || e.Context["platform"] != "local" || e.PointID == "" {
			t.Fatalf("command:weather: %+v", e)
		}
	}
}

// An approval's hook points name whose session they belong to beside
// their payload (which carries only the session key): platform, chat and
// user.
func TestConsoleApprovalNamesItsSession(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+work+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home})
	events := g.Events(t)
	g.PostAsync(`{"chat_id":"ap","user_id":"u-ap","user_name":"Ann","chat_type":"group","text":"run: rm -rf ./x"}`, nil)
	pre := cmdtest.WaitFor(t, events, hooks.PreApprovalRequestHook, 60*time.Second)
	key, _ := pre.Context["session_key"].(string)
	s := pre.Session
	if key == "" || s["key"] != key || s["platform"] != "local" || s["chat_id"] != "ap" || s["user_id"] != "u-ap" {
		t.Fatalf("pre_approval_request: context %+v, session %+v", pre.Context, s)
	}
	if code, r := g.Post(t, `{"chat_id":"ap","user_id":"u-ap","chat_type":"group","text":"/deny"}`, nil); code != 200 {
		t.Fatalf("/deny: %d %+v", code, r)
	}
	post := cmdtest.WaitFor(t, events, hooks.PostApprovalResponseHook, 60*time.Second)
	if post.Session["chat_id"] != "ap" || post.Session["user_id"] != "u-ap" || post.Session["key"] != key {
		t.Fatalf("post_approval_response: session %+v", post.Session)
	}
}

// A turn whose model wrote before asking for an approval, answered by a
// typed /approve: the answer goes to the /approve request, once (the
// words before the prompt stay as they were shown).
func TestConsoleStreamedReplyAcrossATypedApproval(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+work+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := agenttest.New(t,
		agenttest.Reply{Content: "Let me clean up.", ToolCalls: []agenttest.ToolCall{{ID: "call_1", Name: "terminal", Args: `{"command":"rm -rf ./x"}`}}},
		agenttest.Reply{Content: "Cleaned up."})
	env := fakeModelEnv(srv)
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: env})
	first := g.Say(t, "ta", "clean up")
	// (the words before the prompt are sent as the model writes them:
	// before or after the prompt reaches the first request)
	if first.Status != "awaiting_input" || !strings.Contains(first.Text(), "needs your approval") {
		t.Fatalf("first: %+v", first)
	}
	second := g.Say(t, "ta", "/approve")
	if second.Status != "done" || !strings.Contains(second.Text(), "Cleaned up.") {
		t.Fatalf("/approve: %+v", second)
	}
	var outbox struct {
		Messages []struct {
			Text string `json:"text"`
		} `json:"messages"`
	}
	api(t, g, "GET", "/v1/chats/ta/messages", g.Token, "", &outbox)
	var texts []string
	for _, m := range outbox.Messages {
		texts = append(texts, m.Text)
	}
	all := strings.Join(texts, "|")
	if strings.Count(all, "Cleaned up.") != 1 || strings.Count(all, "Let me clean up.") > 1 {
		t.Fatalf("outbox: %q", all)
	}
}
