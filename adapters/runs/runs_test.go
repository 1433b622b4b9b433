package runs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/runs"
)

// router serves the endpoints without the local platform's token check.
type router struct{ *http.ServeMux }

func (r router) Handle(pattern string, h http.HandlerFunc) { r.HandleFunc(pattern, h) }

// gw plays the gateway: the test reads each message handed to the Sink,
// answers through the adapter's Send and Edit, resolves the receipt, and
// fires hook points into the feed.
type gw struct {
	t    *testing.T
	a    *runs.Adapter
	srv  *httptest.Server
	got  chan herald.Message
	feed func(runs.HookPoint)

	mu   sync.Mutex
	recs map[string]*adapters.Receipt
	ctxs map[string]context.Context
	now  time.Time
}

type store map[string]herald.Source

func (s store) SessionSource(ctx context.Context, id string) (herald.Source, bool, error) {
	src, ok := s[id]
	return src, ok, nil
}

func newGW(t *testing.T, cfg runs.Config) *gw {
	g := &gw{t: t, got: make(chan herald.Message, 16), recs: map[string]*adapters.Receipt{}, ctxs: map[string]context.Context{}, now: time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)}
	subscribed := make(chan struct{})
	cfg.Events = func(fn func(runs.HookPoint)) func() {
		g.feed = fn
		close(subscribed)
		return func() {}
	}
	cfg.SessionKey = func(src herald.Source) string { return "key:" + src.ChatID }
	cfg.Now = func() time.Time {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.now
	}
	if cfg.Store == nil {
		cfg.Store = store{}
	}
	g.a = runs.New(cfg)
	mux := router{http.NewServeMux()}
	g.a.Register(mux)
	g.srv = httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		g.a.Run(ctx, g)
		close(done)
	}()
	t.Cleanup(func() {
		g.srv.CloseClientConnections()
		cancel()
		<-done
		g.srv.Close()
	})
	<-subscribed
	return g
}

func (g *gw) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	rec := adapters.NewReceipt()
	g.mu.Lock()
	g.recs[m.ID] = rec
	g.ctxs[m.ID] = ctx
	g.mu.Unlock()
	g.got <- m
	return rec
}

func (g *gw) next() herald.Message {
	g.t.Helper()
	select {
	case m := <-g.got:
		return m
	case <-time.After(10 * time.Second):
		g.t.Fatal("no message reached the gateway")
	}
	return herald.Message{}
}

func (g *gw) resolve(m herald.Message, status, session string) {
	g.mu.Lock()
	rec := g.recs[m.ID]
	g.mu.Unlock()
	rec.Resolve(adapters.Outcome{Status: status, SessionID: session})
}

func (g *gw) send(m herald.Message, cause, text string) string {
	sent, err := g.a.Send(context.Background(), m.Source.Target(), adapters.Outgoing{Text: text, Cause: cause})
	if err != nil {
		g.t.Fatal(err)
	}
	return sent.MessageID
}

func (g *gw) hook(name string, ctx map[string]any) {
	b, _ := json.Marshal(ctx)
	g.feed(runs.HookPoint{Name: name, Context: b, Time: time.Now()})
}

func (g *gw) call(method, path, body string) (int, map[string]any) {
	g.t.Helper()
	req, _ := http.NewRequest(method, g.srv.URL+path, strings.NewReader(body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		g.t.Fatalf("%s %s: not JSON (%d): %s", method, path, res.StatusCode, b)
	}
	return res.StatusCode, out
}

func (g *gw) start(body string) (string, herald.Message) {
	g.t.Helper()
	code, out := g.call("POST", "/v1/runs", body)
	if code != 202 {
		g.t.Fatalf("POST /v1/runs: %d %v", code, out)
	}
	return out["run_id"].(string), g.next()
}

func (g *gw) waitStatus(id, want string) map[string]any {
	g.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, out := g.call("GET", "/v1/runs/"+id, "")
		if out["status"] == want {
			return out
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("run %s: %v, want status %s", id, out, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type event struct {
	id   int64
	name string
	data map[string]any
}

// subscribe reads a run's events until the stream ends, onto a channel
// closed at the end; the stream has begun when it returns.
func (g *gw) subscribe(id string) <-chan event {
	g.t.Helper()
	req, _ := http.NewRequest("GET", g.srv.URL+"/v1/runs/"+id+"/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		g.t.Fatalf("subscribe: %v %v", res, err)
	}
	out := make(chan event, 4096)
	go func() {
		defer res.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		var cur event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && cur.name != "":
				out <- cur
				cur = event{}
			case strings.HasPrefix(line, "id: "):
				cur.id, _ = strconv.ParseInt(line[4:], 10, 64)
			case strings.HasPrefix(line, "event: "):
				cur.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				json.Unmarshal([]byte(line[6:]), &cur.data)
			}
		}
	}()
	return out
}

func collect(ch <-chan event) []event {
	var evs []event
	for e := range ch {
		evs = append(evs, e)
	}
	return evs
}

// The approval prompt (the last message before the receipt resolved
// awaiting_input) and the acknowledgement of the answer are not output;
// the answer goes to the gateway as /deny from the run's user and chat.
func TestApprovalPromptAndAcknowledgementAreNotOutput(t *testing.T) {
	g := newGW(t, runs.Config{})
	id, m := g.start(`{"input":"clean up"}`)
	chat := m.Source.ChatID
	if m.Source.Platform != runs.Platform || m.Text != "clean up" || m.Source.UserID == "" {
		t.Fatalf("message = %+v", m)
	}
	events := g.subscribe(id)
	g.hook("agent:start", map[string]any{"platform": "runs", "chat_id": chat, "session_id": "s1"})
	g.send(m, m.ID, "working on it")
	g.hook("pre_approval_request", map[string]any{"command": "rm -rf /x", "description": "recursive delete", "session_key": "key:" + chat})
	g.send(m, m.ID, "⚠️ This command needs your approval")
	g.resolve(m, adapters.StatusAwaitingInput, "s1")
	st := g.waitStatus(id, "awaiting_approval")
	if ap := st["approval"].(map[string]any); ap["command"] != "rm -rf /x" || ap["reason"] != "recursive delete" || st["session_id"] != "s1" {
		t.Fatalf("state = %v", st)
	}
	// the session is busy with this run
	if code, out := g.call("POST", "/v1/runs", `{"input":"x","session_id":"s1"}`); code != 409 || !strings.Contains(out["error"].(string), id) {
		t.Fatalf("a second run in the session: %d %v", code, out)
	}

	if code, out := g.call("POST", "/v1/runs/"+id+"/approval", `{"choice":"deny"}`); code != 200 || out["status"] != "running" {
		t.Fatalf("approval: %d %v", code, out)
	}
	ans := g.next()
	if ans.Text != "/deny" || ans.Source != m.Source {
		t.Fatalf("answer = %+v", ans)
	}
	if code, _ := g.call("POST", "/v1/runs/"+id+"/approval", `{"choice":"once"}`); code != 409 {
		t.Fatalf("a second answer: %d", code)
	}
	g.send(ans, ans.ID, "❌ Denied.")
	g.hook("post_approval_response", map[string]any{"command": "rm -rf /x", "choice": "deny", "session_key": "key:" + chat})
	rid := g.send(ans, ans.ID, "Fine, ")
	g.a.Edit(context.Background(), m.Source.Target(), rid, "Fine, not removed.")
	g.resolve(ans, adapters.StatusDone, "s1")
	g.hook("agent:end", map[string]any{"platform": "runs", "chat_id": chat, "session_id": "s1"})
	st = g.waitStatus(id, "completed")
	if st["output"] != "working on it\n\nFine, not removed." || st["approval"] != nil {
		t.Fatalf("state = %v", st)
	}
	var names []string
	deltas := map[string]string{}
	for _, e := range collect(events) {
		names = append(names, e.name)
		if e.name == "message.delta" {
			deltas[e.data["message_id"].(string)] += e.data["delta"].(string)
		}
	}
	// "working on it" is shown once the prompt follows it
	want := "run.started agent:start pre_approval_request approval.requested message.delta post_approval_response approval.answered message.delta agent:end run.completed"
	if strings.Join(names, " ") != want {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(names, " "), want)
	}
	if deltas[rid] != "Fine, not removed." || len(deltas) != 2 {
		t.Fatalf("deltas = %v", deltas)
	}
}

// Subscribers that come before, during and after a run get every event
// once, in order, ids 1, 2, …, and their streams end after the last.
func TestEverySubscriberGetsEveryEventOnce(t *testing.T) {
	g := newGW(t, runs.Config{})
	id, m := g.start(`{"input":"go"}`)
	early := g.subscribe(id)
	g.hook("agent:start", map[string]any{"platform": "runs", "chat_id": m.Source.ChatID, "session_id": "s9"})
	var wg sync.WaitGroup
	wg.Add(1)
	var middle []event
	go func() {
		defer wg.Done()
		middle = collect(g.subscribe(id))
	}()
	for i := range 200 {
		g.hook("agent:step", map[string]any{"session_id": "s9", "iteration": i})
		if i%50 == 0 {
			g.send(m, m.ID, fmt.Sprintf("part %d", i))
		}
	}
	g.hook("agent:step", map[string]any{"session_id": "another session"})
	g.resolve(m, adapters.StatusDone, "s9")
	g.hook("agent:end", map[string]any{"platform": "runs", "chat_id": m.Source.ChatID, "session_id": "s9"})
	all := collect(early)
	wg.Wait()
	late := collect(g.subscribe(id))
	for name, evs := range map[string][]event{"early": all, "middle": middle, "late": late} {
		if len(evs) != len(all) {
			t.Fatalf("%s got %d events, early %d", name, len(evs), len(all))
		}
		for i, e := range evs {
			if e.id != int64(i+1) || e.name != all[i].name {
				t.Fatalf("%s: event %d is %d %s, want %d %s", name, i, e.id, e.name, i+1, all[i].name)
			}
		}
	}
	// run.started, agent:start, 200 steps, 4 deltas, agent:end, run.completed
	if len(all) != 208 || all[len(all)-1].name != "run.completed" || all[len(all)-1].data["output"] != "part 0\n\npart 50\n\npart 100\n\npart 150" {
		t.Fatalf("%d events, last %+v", len(all), all[len(all)-1])
	}
}

// A log past its bound drops its oldest events; a subscriber from the
// start is told how many it missed, then gets the rest.
func TestLogBoundDropsTheOldest(t *testing.T) {
	g := newGW(t, runs.Config{MaxLog: 4000})
	id, m := g.start(`{"input":"go"}`)
	pad := strings.Repeat("x", 400)
	for i := range 30 {
		g.hook("agent:start", map[string]any{"platform": "runs", "chat_id": m.Source.ChatID, "message": fmt.Sprint(i, pad)})
	}
	g.resolve(m, adapters.StatusDone, "")
	g.hook("agent:end", map[string]any{"platform": "runs", "chat_id": m.Source.ChatID})
	req, _ := http.NewRequest("GET", g.srv.URL+"/v1/runs/"+id+"/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	body := string(b)
	var dropped int
	if _, err := fmt.Sscanf(body[strings.Index(body, "event: dropped\ndata: "):], "event: dropped\ndata: {\"dropped\":%d}", &dropped); err != nil {
		t.Fatalf("no dropped count: %v\n%s", err, body)
	}
	ids := strings.Count(body, "\nid: ")
	// run.started + 30 + agent:end + run.completed
	if dropped == 0 || dropped+ids != 33 || !strings.HasSuffix(body, "\n\n") || !strings.Contains(body, "event: run.completed") {
		t.Fatalf("dropped %d, kept %d:\n%s", dropped, ids, body)
	}
	if len(body) > 2*4000 {
		t.Fatalf("the log kept %d bytes", len(body))
	}
}

// A stop while the run waits for an approval: /stop goes to the run's
// chat, the turn's end makes the run stopped, and the stop's reply is
// not output.
func TestStopWhileAwaitingApproval(t *testing.T) {
	g := newGW(t, runs.Config{})
	id, m := g.start(`{"input":"clean up"}`)
	g.hook("pre_approval_request", map[string]any{"command": "rm -rf /x", "description": "d", "session_key": "key:" + m.Source.ChatID})
	g.send(m, m.ID, "prompt")
	g.resolve(m, adapters.StatusAwaitingInput, "s2")
	g.waitStatus(id, "awaiting_approval")
	if code, out := g.call("POST", "/v1/runs/"+id+"/stop", ""); code != 202 {
		t.Fatalf("stop: %d %v", code, out)
	}
	stop := g.next()
	if stop.Text != "/stop" || stop.Source != m.Source {
		t.Fatalf("stop message = %+v", stop)
	}
	g.send(stop, stop.ID, "⏹ Stopped.")
	g.hook("agent:end", map[string]any{"platform": "runs", "chat_id": m.Source.ChatID, "session_id": "s2", "failed": true, "error": "stopped"})
	st := g.waitStatus(id, "stopped")
	if st["output"] != nil || st["finished_at"] == nil {
		t.Fatalf("state = %v", st)
	}
	evs := collect(g.subscribe(id))
	for _, e := range evs {
		if e.name == "message.delta" {
			t.Fatalf("a delta in a stopped run: %v", e.data)
		}
	}
	if evs[len(evs)-1].name != "run.stopped" {
		t.Fatalf("last event %s", evs[len(evs)-1].name)
	}
}

// A failed turn's run is failed with the turn's error; a run continuing
// a stored session runs in its chat as its user.
func TestFailedRunAndContinuedSession(t *testing.T) {
	old := herald.Source{Platform: runs.Platform, ChatID: "run-old", ChatType: herald.ChatDM, UserID: "u7", UserName: "Ann"}
	g := newGW(t, runs.Config{Store: store{"s-old": old, "s-local": {Platform: herald.PlatformLocal, ChatID: "c"}}})
	id, m := g.start(`{"input":"again","session_id":"s-old"}`)
	if m.Source != old {
		t.Fatalf("source = %+v", m.Source)
	}
	// the request that started the run is over; the message's context
	// is not
	g.mu.Lock()
	ctx := g.ctxs[m.ID]
	g.mu.Unlock()
	if ctx.Err() != nil {
		t.Fatalf("the run's message was handed over with the request's context: %v", ctx.Err())
	}
	if _, out := g.call("GET", "/v1/runs/"+id, ""); out["session_id"] != "s-old" {
		t.Fatalf("state = %v", out)
	}
	// the session had ended: the turn runs in the chat's next one
	g.hook("agent:start", map[string]any{"platform": "runs", "chat_id": "run-old", "session_id": "s-next"})
	g.hook("agent:end", map[string]any{"platform": "runs", "chat_id": "run-old", "session_id": "s-next", "failed": true, "error": "the model did not respond"})
	g.resolve(m, adapters.StatusDone, "s-next")
	st := g.waitStatus(id, "failed")
	if st["error"] != "the model did not respond" || st["session_id"] != "s-next" || st["output"] != nil {
		t.Fatalf("state = %v", st)
	}
	if code, out := g.call("POST", "/v1/runs", `{"input":"x","session_id":"s-local"}`); code != 400 || !strings.Contains(out["error"].(string), "local session") {
		t.Fatalf("a local session: %d %v", code, out)
	}
}

// Finished runs are forgotten past MaxRuns (the oldest first) and past
// Keep.
func TestRetention(t *testing.T) {
	g := newGW(t, runs.Config{MaxRuns: 2, Keep: time.Hour})
	var ids []string
	for range 3 {
		id, m := g.start(`{"input":"hi"}`)
		g.send(m, m.ID, "hello")
		g.hook("agent:end", map[string]any{"platform": "runs", "chat_id": m.Source.ChatID})
		g.resolve(m, adapters.StatusDone, "")
		g.waitStatus(id, "completed")
		ids = append(ids, id)
		g.mu.Lock()
		g.now = g.now.Add(time.Minute)
		g.mu.Unlock()
	}
	if code, _ := g.call("GET", "/v1/runs/"+ids[0], ""); code != 404 {
		t.Fatalf("the oldest of 3 with MaxRuns 2: %d", code)
	}
	if code, _ := g.call("GET", "/v1/runs/"+ids[1], ""); code != 200 {
		t.Fatalf("the second: %d", code)
	}
	g.mu.Lock()
	g.now = g.now.Add(time.Hour)
	g.mu.Unlock()
	if code, out := g.call("GET", "/v1/runs/"+ids[2], ""); code != 404 || !strings.Contains(out["error"].(string), "kept 1h0m0s") {
		t.Fatalf("after an hour: %d %v", code, out)
	}
}

// Hook points reach the adapter after the turn emitted them: a delta
// sent after a hook point was emitted, but before it arrived, still
// follows it in the log, and one sent before precedes it.
func TestDeltasKeepTheirPlaceAmongHookPoints(t *testing.T) {
	g := newGW(t, runs.Config{})
	id, m := g.start(`{"input":"go"}`)
	chat := m.Source.ChatID
	before := g.send(m, m.ID, "before")
	g.a.Edit(context.Background(), m.Source.Target(), before, "before the tool")
	emitted := time.Now() // pre_tool_call, not yet delivered
	after := g.send(m, m.ID, "after")
	g.a.Edit(context.Background(), m.Source.Target(), after, "after the tool")
	b, _ := json.Marshal(map[string]any{"session_id": "s5", "session_key": "key:" + chat, "tool_name": "terminal"})
	g.feed(runs.HookPoint{Name: "pre_tool_call", Context: b, Time: emitted})
	g.resolve(m, adapters.StatusDone, "s5")
	g.hook("agent:end", map[string]any{"platform": "runs", "chat_id": chat, "session_id": "s5"})
	g.waitStatus(id, "completed")
	var got []string
	for _, e := range collect(g.subscribe(id)) {
		if e.name == "message.delta" {
			got = append(got, e.data["delta"].(string))
			continue
		}
		got = append(got, e.name)
	}
	want := "run.started|before the tool|pre_tool_call|tool.started|after the tool|agent:end|run.completed"
	if strings.Join(got, "|") != want {
		t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "|"), want)
	}
}

// A client that saw a run end may start the next in its session at once,
// even before the ended run has left the adapter's indexes.
func TestNextRunRightAfterTheLastEnded(t *testing.T) {
	old := herald.Source{Platform: runs.Platform, ChatID: "run-old", ChatType: herald.ChatDM, UserID: "u7", UserName: "Ann"}
	g := newGW(t, runs.Config{Store: store{"s-old": old}})
	id, m := g.start(`{"input":"first","session_id":"s-old"}`)
	codes := make(chan int, 1)
	runs.SetTestHookFinished(func() {
		code, _ := g.call("POST", "/v1/runs", `{"input":"second","session_id":"s-old"}`)
		codes <- code
	})
	t.Cleanup(func() { runs.SetTestHookFinished(nil) })
	g.hook("agent:start", map[string]any{"platform": "runs", "chat_id": "run-old", "session_id": "s-old"})
	g.send(m, "", "the first answer")
	g.hook("agent:end", map[string]any{"platform": "runs", "chat_id": "run-old", "session_id": "s-old"})
	g.resolve(m, adapters.StatusDone, "s-old")
	g.waitStatus(id, "completed")
	if code := <-codes; code != http.StatusAccepted {
		t.Fatalf("POST /v1/runs right after the last run ended: %d, want 202", code)
	}
}
