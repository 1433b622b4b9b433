package cmd_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// runEvent is one Server-Sent Event of a run's stream.
type runEvent struct {
	ID   int64
	Name string
	Data map[string]any
}

// runEvents reads a run's event stream to its end (the server closes it
// after the run's last event).
func runEvents(t *testing.T, g *cmdtest.Gateway, id string, lastID string) []runEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+g.Addr+"/v1/runs/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+g.Token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET events: %d %s", res.StatusCode, b)
	}
	var out []runEvent
	var cur runEvent
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name != "" {
				out = append(out, cur)
			}
			cur = runEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			cur.Name = line[7:]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &cur.Data); err != nil {
				t.Fatalf("event %s: data is not JSON: %s", cur.Name, line)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the events: %v (after %d events)", err, len(out))
	}
	return out
}

func startRun(t *testing.T, g *cmdtest.Gateway, body string) string {
	t.Helper()
	code, _, out := apiCall(t, g, "POST", "/v1/runs", body, nil)
	id, _ := out["run_id"].(string)
	if code != 202 || id == "" {
		t.Fatalf("POST /v1/runs %s: %d %v", body, code, out)
	}
	return id
}

// waitRun polls the run until its status is one of want.
func waitRun(t *testing.T, g *cmdtest.Gateway, id string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, out := apiCall(t, g, "GET", "/v1/runs/"+id, "", nil)
		if code != 200 {
			t.Fatalf("GET run: %d %v", code, out)
		}
		if slices.Contains(want, out["status"].(string)) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %v, want %v", id, out, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func eventNames(evs []runEvent) []string {
	var names []string
	for _, e := range evs {
		names = append(names, e.Name)
	}
	return names
}

func indexOf(evs []runEvent, name string) int {
	return slices.IndexFunc(evs, func(e runEvent) bool { return e.Name == name })
}

// A run calls a tool and answers, streamed: its events come in order
// from run.started to run.completed, a late subscriber gets them all
// again, and a second run continues the session.
func TestRunCompletesWithEvents(t *testing.T) {
	srv := agenttest.New(t,
		agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call1", Name: "terminal", Args: `{"command":"echo tool-ran"}`}}},
		agenttest.Reply{Content: "the run's answer", Pieces: 4})
	srv.Default = agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
		return agenttest.Reply{Content: "answer to " + r.LastMessage().Content}
	}}
	g := cmdtest.Start(t, cmdtest.Options{Env: fakeModelEnv(srv)})
	id := startRun(t, g, `{"input":"use a tool"}`)
	live := runEvents(t, g, id, "")
	names := eventNames(live)

	for i, e := range live {
		if e.ID != int64(i+1) {
			t.Fatalf("event %d (%s) has id %d: ids must run 1, 2, … with no gap: %v", i, e.Name, e.ID, names)
		}
	}
	if names[0] != "run.started" || names[len(names)-1] != "run.completed" {
		t.Fatalf("events = %v", names)
	}
	order := []string{"agent:start", "pre_tool_call", "tool.started", "post_tool_call", "tool.completed", "agent:end", "run.completed"}
	last := -1
	for _, n := range order {
		i := indexOf(live, n)
		if i <= last {
			t.Fatalf("%s at %d, after %d: events = %v", n, i, last, names)
		}
		last = i
	}
	started, done := live[indexOf(live, "tool.started")], live[indexOf(live, "tool.completed")]
	if started.Data["tool_name"] != "terminal" || done.Data["tool_name"] != "terminal" || done.Data["tool_call_id"] != "call1" {
		t.Fatalf("tool events: %v %v", started.Data, done.Data)
	}
	if _, ok := done.Data["duration_ms"].(float64); !ok {
		t.Fatalf("tool.completed without duration_ms: %v", done.Data)
	}
	if ctx, _ := live[indexOf(live, "agent:start")].Data["context"].(map[string]any); ctx["platform"] != "runs" || ctx["message"] != "use a tool" {
		t.Fatalf("agent:start = %v", live[indexOf(live, "agent:start")].Data)
	}
	// the deltas make the answer, and come after the tool's end
	var text strings.Builder
	for i, e := range live {
		if e.Name == "message.delta" {
			if i < indexOf(live, "tool.completed") {
				t.Fatalf("a delta before the tool ended: %v", names)
			}
			text.WriteString(e.Data["delta"].(string))
		}
	}
	if text.String() != "the run's answer" {
		t.Fatalf("deltas make %q", text.String())
	}
	final := live[len(live)-1]
	if final.Data["output"] != "the run's answer" || final.Data["run_id"] != id {
		t.Fatalf("run.completed = %v", final.Data)
	}

	st := waitRun(t, g, id, "completed")
	sid, _ := st["session_id"].(string)
	if st["output"] != "the run's answer" || sid == "" || st["finished_at"] == nil || st["created_at"] == nil || st["error"] != nil {
		t.Fatalf("state = %v", st)
	}

	// a late subscriber gets the whole log, then the stream ends
	again := runEvents(t, g, id, "")
	if fmt.Sprint(eventNames(again)) != fmt.Sprint(names) {
		t.Fatalf("replay:\n%v\nlive:\n%v", eventNames(again), names)
	}
	// and one that resumes gets what follows its last id
	if rest := runEvents(t, g, id, "3"); len(rest) != len(live)-3 || rest[0].ID != 4 {
		t.Fatalf("resumed after 3: %v", eventNames(rest))
	}

	// a run continuing the session: the model sees the first run
	id2 := startRun(t, g, `{"input":"and again","session_id":"`+sid+`"}`)
	st2 := waitRun(t, g, id2, "completed", "failed", "stopped")
	if st2["status"] != "completed" || st2["output"] != "answer to and again" || st2["session_id"] != sid {
		t.Fatalf("continued run: %v", st2)
	}
	if saw := seen(srv); !strings.Contains(saw, "user: use a tool") || !strings.Contains(saw, "assistant: the run's answer") {
		t.Fatalf("the continued run's history:\n%s", saw)
	}
}

// Malformed or misdirected requests get a clear 4xx in the local API's
// error shape; every runs endpoint wants the token.
func TestRunErrors(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{})
	// a session of another platform
	lr := g.Say(t, "runs-errors", "hello")
	for _, tc := range []struct {
		method, path, body string
		status             int
		says               string
	}{
		{"POST", "/v1/runs", `{}`, 400, `"input" is required`},
		{"POST", "/v1/runs", `{"input":"  "}`, 400, `"input" is empty`},
		{"POST", "/v1/runs", `{"input":7}`, 400, `"input"`},
		{"POST", "/v1/runs", `{"input":"x","sesion_id":"s"}`, 400, `unknown field "sesion_id"`},
		{"POST", "/v1/runs", `{"input":"x"} {}`, 400, "after its JSON object"},
		{"POST", "/v1/runs", `{"input":"x","session_id":"no-such-session"}`, 404, `no session "no-such-session"`},
		{"POST", "/v1/runs", `{"input":"x","session_id":"` + lr.SessionID + `"}`, 400, "is a local session"},
		{"GET", "/v1/runs/run_nope", ``, 404, `no run "run_nope"`},
		{"GET", "/v1/runs/run_nope/events", ``, 404, `no run "run_nope"`},
		{"POST", "/v1/runs/run_nope/approval", `{"choice":"once"}`, 404, `no run "run_nope"`},
		{"POST", "/v1/runs/run_nope/stop", ``, 404, `no run "run_nope"`},
	} {
		code, _, out := apiCall(t, g, tc.method, tc.path, tc.body, nil)
		msg, _ := out["error"].(string)
		if code != tc.status || !strings.Contains(msg, tc.says) {
			t.Errorf("%s %s %s: %d %v (want %d saying %s)", tc.method, tc.path, tc.body, code, out, tc.status, tc.says)
		}
	}
	id := startRun(t, g, `{"input":"hi"}`)
	waitRun(t, g, id, "completed")
	if code, _, out := apiCall(t, g, "POST", "/v1/runs/"+id+"/approval", `{"choice":"maybe"}`, nil); code != 400 || !strings.Contains(out["error"].(string), "once, session, always, deny") {
		t.Errorf("a bad choice: %d %v", code, out)
	}
	if code, _, out := apiCall(t, g, "POST", "/v1/runs/"+id+"/approval", `{"choice":"once"}`, nil); code != 409 || !strings.Contains(out["error"].(string), "not waiting for an approval") {
		t.Errorf("an approval with none pending: %d %v", code, out)
	}
	if code, _, out := apiCall(t, g, "POST", "/v1/runs/"+id+"/stop", ``, nil); code != 409 || !strings.Contains(out["error"].(string), "already ended (completed)") {
		t.Errorf("stopping a finished run: %d %v", code, out)
	}

	if code, _, h := apiCall(t, g, "GET", "/healthz", "", nil); code != 200 || h["platforms"].(map[string]any)["runs"] != "connected" {
		t.Errorf("healthz: %d %v", code, h)
	}

	for _, ep := range []struct{ method, path string }{
		{"POST", "/v1/runs"}, {"GET", "/v1/runs/" + id}, {"GET", "/v1/runs/" + id + "/events"},
		{"POST", "/v1/runs/" + id + "/approval"}, {"POST", "/v1/runs/" + id + "/stop"},
	} {
		req, _ := http.NewRequest(ep.method, "http://"+g.Addr+ep.path, strings.NewReader(`{"input":"x"}`))
		req.Header.Set("Authorization", "Bearer wrong-token")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]string
		json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if res.StatusCode != 401 || !strings.Contains(out["error"], "bearer token") {
			t.Errorf("%s %s with a wrong token: %d %v", ep.method, ep.path, res.StatusCode, out)
		}
	}
	req, _ := http.NewRequest("GET", "http://"+g.Addr+"/v1/runs/"+id, nil)
	req.Host = "evil.example"
	req.Header.Set("Authorization", "Bearer "+g.Token)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 403 {
		t.Errorf("a foreign Host: %v %v", res, err)
	} else {
		res.Body.Close()
	}
}

// approvalModel scripts a model that asks to remove victim with the
// terminal tool, then answers with what the tool said.
func approvalModel(t *testing.T, victim string) *agenttest.Server {
	srv := agenttest.New(t, agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "rm1", Name: "terminal",
		Args: fmt.Sprintf(`{"command":"rm -rf %s"}`, victim)}}})
	srv.Default = agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
		return agenttest.Reply{Content: "finished after the tool"}
	}}
	return srv
}

// An approval mid-run: the run waits with the command, and the answer
// over the API decides whether the command runs.
func TestRunApproval(t *testing.T) {
	for _, tc := range []struct {
		choice  string
		removed bool
	}{{"once", true}, {"deny", false}} {
		t.Run(tc.choice, func(t *testing.T) {
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.Mkdir(victim, 0o755); err != nil {
				t.Fatal(err)
			}
			srv := approvalModel(t, victim)
			g := cmdtest.Start(t, cmdtest.Options{Env: fakeModelEnv(srv)})
			id := startRun(t, g, `{"input":"clean up"}`)
			st := waitRun(t, g, id, "awaiting_approval", "completed", "failed", "stopped")
			ap, _ := st["approval"].(map[string]any)
			if st["status"] != "awaiting_approval" || ap == nil || !strings.Contains(fmt.Sprint(ap["command"]), "rm -rf "+victim) || ap["reason"] == "" {
				t.Fatalf("state while waiting: %v", st)
			}
			if _, err := os.Stat(victim); err != nil {
				t.Fatalf("the command ran before its approval: %v", err)
			}
			code, _, out := apiCall(t, g, "POST", "/v1/runs/"+id+"/approval", `{"choice":"`+tc.choice+`"}`, nil)
			if code != 200 || out["status"] != "running" {
				t.Fatalf("approval: %d %v", code, out)
			}
			st = waitRun(t, g, id, "completed", "failed", "stopped")
			if st["status"] != "completed" || st["output"] != "finished after the tool" {
				t.Fatalf("after the approval: %v", st)
			}
			if _, err := os.Stat(victim); (err != nil) != tc.removed {
				t.Fatalf("choice %s: victim removed = %v, want %v", tc.choice, err != nil, tc.removed)
			}
			evs := runEvents(t, g, id, "")
			req, ans := indexOf(evs, "approval.requested"), indexOf(evs, "approval.answered")
			if req < 0 || ans < req || indexOf(evs, "run.completed") != len(evs)-1 {
				t.Fatalf("events = %v", eventNames(evs))
			}
			want := map[string]string{"once": "once", "deny": "deny"}[tc.choice]
			if evs[ans].Data["choice"] != want || !strings.Contains(fmt.Sprint(evs[req].Data["command"]), victim) {
				t.Fatalf("approval events: %v %v", evs[req].Data, evs[ans].Data)
			}
			// the prompt and the acknowledgement are not the output
			for _, e := range evs {
				if e.Name == "message.delta" && strings.Contains(fmt.Sprint(e.Data), "approv") {
					t.Fatalf("a delta of the approval bookkeeping: %v", e.Data)
				}
			}
		})
	}
}

// A run stopped while the model streams ends stopped, and its stream
// ends with run.stopped.
func TestRunStop(t *testing.T) {
	srv := agenttest.New(t, agenttest.Reply{Content: "a long answer that never ends", Pieces: 6, StallAfter: 2})
	g := cmdtest.Start(t, cmdtest.Options{Env: fakeModelEnv(srv)})
	id := startRun(t, g, `{"input":"talk for ever"}`)
	select {
	case <-srv.Stalled:
	case <-time.After(30 * time.Second):
		t.Fatal("the model was never asked")
	}
	// another chat's turn meanwhile is not the run's
	if r := g.Say(t, "elsewhere", "hello"); r.Status != "done" {
		t.Fatalf("the other chat: %+v", r)
	}
	code, _, out := apiCall(t, g, "POST", "/v1/runs/"+id+"/stop", ``, nil)
	if code != 202 {
		t.Fatalf("stop: %d %v", code, out)
	}
	st := waitRun(t, g, id, "completed", "failed", "stopped")
	if st["status"] != "stopped" || st["output"] != nil || st["finished_at"] == nil {
		t.Fatalf("state = %v", st)
	}
	evs := runEvents(t, g, id, "")
	if evs[len(evs)-1].Name != "run.stopped" {
		t.Fatalf("events = %v", eventNames(evs))
	}
	for _, e := range evs {
		if b, _ := json.Marshal(e.Data); strings.Contains(string(b), "elsewhere") || strings.Contains(string(b), `"platform":"local"`) {
			t.Fatalf("another chat's event in the run: %s %s", e.Name, b)
		}
	}
}

// The client that started a run goes away at once: the run goes on, and
// its answer is there afterwards.
func TestRunOutlivesItsClient(t *testing.T) {
	asked, release := make(chan struct{}), make(chan struct{})
	srv := agenttest.New(t)
	srv.Default = agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
		close(asked)
		<-release
		return agenttest.Reply{Content: "answered after the client left"}
	}}
	g := cmdtest.Start(t, cmdtest.Options{Env: fakeModelEnv(srv)})

	ctx, cancel := context.WithCancel(context.Background())
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+g.Addr+"/v1/runs", strings.NewReader(`{"input":"take your time"}`))
	req.Header.Set("Authorization", "Bearer "+g.Token)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	json.NewDecoder(res.Body).Decode(&out)
	res.Body.Close()
	cancel()
	client.CloseIdleConnections()
	if res.StatusCode != 202 || out["run_id"] == "" {
		t.Fatalf("POST: %d %v", res.StatusCode, out)
	}
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the model was never asked")
	}
	if st := waitRun(t, g, out["run_id"], "running"); st["finished_at"] != nil {
		t.Fatalf("state = %v", st)
	}
	close(release)
	st := waitRun(t, g, out["run_id"], "completed", "failed", "stopped")
	if st["status"] != "completed" || st["output"] != "answered after the client left" {
		t.Fatalf("state = %v", st)
	}
}
