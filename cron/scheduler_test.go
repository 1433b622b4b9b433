package cron

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// Everything here runs inside a synctest bubble: the clock is virtual
// (it starts at 2000-01-01 00:00 UTC) and advances only when every
// goroutine of the bubble is blocked, so "sleep 48h" takes no real time.
// The model and the deliverer are in-process; no network I/O.

type modelCall struct {
	at     time.Time
	prompt string
	tools  []string
}

// scriptedModel is an in-process agent.Model: answer computes each reply.
type scriptedModel struct {
	mu     sync.Mutex
	calls  []modelCall
	answer func(req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

func (m *scriptedModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Function.Name)
	}
	prompt := ""
	for _, msg := range req.Messages {
		if msg.Role == openai.ChatMessageRoleUser {
			prompt = msg.Content
		}
	}
	m.mu.Lock()
	m.calls = append(m.calls, modelCall{at: time.Now(), prompt: prompt, tools: tools})
	answer := m.answer
	m.mu.Unlock()
	if answer == nil {
		return text("ok: " + prompt), nil
	}
	return answer(req)
}

func (m *scriptedModel) callsFor(prompt string) []modelCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []modelCall
	for _, c := range m.calls {
		if strings.Contains(c.prompt, prompt) {
			out = append(out, c)
		}
	}
	return out
}

func text(s string) openai.ChatCompletionResponse {
	return openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{
		FinishReason: openai.FinishReasonStop,
		Message:      openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: s},
	}}}
}

func lastUser(req openai.ChatCompletionRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == openai.ChatMessageRoleUser {
			return req.Messages[i].Content
		}
	}
	return ""
}

type delivery struct {
	to   herald.Target
	text string
}

// recorder is an in-process herald.Deliverer.
type recorder struct {
	mu   sync.Mutex
	sent []delivery
	fail map[string]error // target string → error
}

func (r *recorder) Deliver(ctx context.Context, to herald.Target, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.fail[to.String()]; err != nil {
		return err
	}
	r.sent = append(r.sent, delivery{to, text})
	return nil
}

func (r *recorder) all() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.sent...)
}

type testEnv struct {
	t     *testing.T
	home  string
	st    *sessions.Store
	jobs  *Jobs
	model *scriptedModel
	agent *agent.Agent
	del   *recorder
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	home := t.TempDir()
	st, err := sessions.Open(filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := &scriptedModel{}
	return &testEnv{
		t: t, home: home, st: st, jobs: NewJobs(st, time.UTC, nil), model: m, del: &recorder{},
		agent: &agent.Agent{Model: m, Tools: agent.NewTools(), Hooks: hooks.NewRegistry(nil), MaxIterations: 5},
	}
}

func (e *testEnv) config() Config {
	return Config{
		Jobs: e.jobs, Agent: e.agent, Deliverer: e.del, Home: e.home, MaxParallel: 4, Tick: time.Hour, Wrap: true,
		Homes: map[herald.Platform]string{herald.PlatformLocal: "", herald.PlatformTelegram: "tg-home", herald.PlatformDiscord: "dc-home"},
	}
}

// start runs a scheduler until the returned stop is called.
func (e *testEnv) start(cfg Config) (*Scheduler, func()) {
	s := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	e.t.Cleanup(stop) // also when a check fails first
	return s, stop
}

func (e *testEnv) add(n NewJob) *Job {
	e.t.Helper()
	j, err := e.jobs.Add(context.Background(), n)
	if err != nil {
		e.t.Fatalf("add %+v: %v", n, err)
	}
	return j
}

func (e *testEnv) get(id string) *Job {
	e.t.Helper()
	j, err := e.jobs.Get(context.Background(), id)
	if err != nil {
		e.t.Fatalf("get %s: %v", id, err)
	}
	return j
}

func times(calls []modelCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.at.UTC().Format("01-02 15:04"))
	}
	return out
}

func TestScheduleFormsFireOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		// the bubble's clock starts at 2000-01-01 00:00 UTC
		e.add(NewJob{Prompt: "once-delay", Schedule: "30m"})
		e.add(NewJob{Prompt: "interval", Schedule: "every 6h"})
		e.add(NewJob{Prompt: "cron-daily", Schedule: "0 9 * * *"})
		e.add(NewJob{Prompt: "cron-tz", Schedule: "CRON_TZ=Asia/Tokyo 0 9 * * *"})
		e.add(NewJob{Prompt: "iso", Schedule: "2000-01-01T12:00"})
		e.add(NewJob{Prompt: "limited", Schedule: "every 1h", Repeat: 3})
		_, stop := e.start(e.config())
		time.Sleep(48*time.Hour + time.Minute)
		stop()

		want := map[string]string{
			"once-delay": "01-01 00:30",
			"interval":   "01-01 06:00 01-01 12:00 01-01 18:00 01-02 00:00 01-02 06:00 01-02 12:00 01-02 18:00 01-03 00:00",
			"cron-daily": "01-01 09:00 01-02 09:00",
			"cron-tz":    "01-02 00:00 01-03 00:00", // 09:00 in Tokyo is 00:00 UTC, and the job was added at 00:00
			"iso":        "01-01 12:00",
			"limited":    "01-01 01:00 01-01 02:00 01-01 03:00",
		}
		for prompt, w := range want {
			if got := strings.Join(times(e.model.callsFor(prompt)), " "); got != w {
				t.Errorf("%s ran at [%s], want [%s]", prompt, got, w)
			}
		}
		// once jobs and used-up repeats are removed; the others remain
		left, err := e.jobs.List(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range left {
			names = append(names, j.Prompt)
		}
		if got := strings.Join(names, ","); got != "interval,cron-daily,cron-tz" {
			t.Errorf("jobs left: %s", got)
		}
	})
}

func TestAtMostOnceWithTwoSchedulers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.add(NewJob{Prompt: "hourly", Schedule: "every 1h"})
		e.add(NewJob{Prompt: "once", Schedule: "90m"})
		// a second store on the same file, as a second process would have
		st2, err := sessions.Open(e.st.Path())
		if err != nil {
			t.Fatal(err)
		}
		defer st2.Close()
		cfg1, cfg2, cfg3 := e.config(), e.config(), e.config()
		cfg2.Jobs = NewJobs(st2, time.UTC, nil)
		_, stop1 := e.start(cfg1)
		_, stop2 := e.start(cfg2)
		_, stop3 := e.start(cfg3) // and a second scheduler on the first store
		time.Sleep(5*time.Hour + time.Minute)
		stop1()
		stop2()
		stop3()
		if got := strings.Join(times(e.model.callsFor("hourly")), " "); got != "01-01 01:00 01-01 02:00 01-01 03:00 01-01 04:00 01-01 05:00" {
			t.Fatalf("hourly job ran at [%s]: each slot must run exactly once", got)
		}
		if n := len(e.model.callsFor("once")); n != 1 {
			t.Fatalf("once job ran %d times", n)
		}
	})
}

func TestMissedRunsAreSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		h := e.add(NewJob{Prompt: "hourly", Schedule: "every 1h"})
		d := e.add(NewJob{Prompt: "daily", Schedule: "0 9 * * *"})
		// the gateway is down for three days
		time.Sleep(72*time.Hour + 10*time.Minute)
		_, stop := e.start(e.config())
		time.Sleep(30 * time.Minute)
		if n := len(e.model.callsFor("")); n != 0 {
			t.Fatalf("%d runs fired on start after downtime; missed runs must be skipped", n)
		}
		if got := e.get(h.ID).NextRunAt.UTC().Format("01-02 15:04"); got != "01-04 01:00" {
			t.Fatalf("hourly next run %s, want the next future slot", got)
		}
		if got := e.get(d.ID).NextRunAt.UTC().Format("01-02 15:04"); got != "01-04 09:00" {
			t.Fatalf("daily next run %s", got)
		}
		time.Sleep(9 * time.Hour)
		stop()
		if got := strings.Join(times(e.model.callsFor("hourly")), " "); !strings.HasPrefix(got, "01-04 01:00 01-04 02:00") {
			t.Fatalf("hourly ran at [%s] after the restart", got)
		}
		if got := strings.Join(times(e.model.callsFor("daily")), " "); got != "01-04 09:00" {
			t.Fatalf("daily ran at [%s]", got)
		}
	})
}

func TestSilentFailedAndPanickingJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.model.answer = func(req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
			switch p := lastUser(req); {
			case strings.Contains(p, "quiet"):
				return text("[silent] nothing new"), nil
			case strings.Contains(p, "broken"):
				return openai.ChatCompletionResponse{}, errors.New("model endpoint returned 500")
			case strings.Contains(p, "empty"):
				return text("   "), nil
			}
			return text("report"), nil
		}
		quiet := e.add(NewJob{Name: "quiet", Prompt: "quiet", Schedule: "every 1h", Deliver: "telegram:1"})
		broken := e.add(NewJob{Name: "broken", Prompt: "broken", Schedule: "every 1h", Deliver: "telegram:2"})
		crash := e.add(NewJob{Name: "crash", Prompt: "crash", Schedule: "every 1h", Deliver: "telegram:3"})
		empty := e.add(NewJob{Name: "empty", Prompt: "empty", Schedule: "every 1h", Deliver: "telegram:4"})
		cfg := e.config()
		cfg.Wrap = false
		// the agent recovers its own model's panics; this runner panics
		// in the scheduler's hands, past the agent's boundary
		cfg.Agent = &panicky{Runner: e.agent, on: "crash"}
		_, stop := e.start(cfg)
		time.Sleep(2*time.Hour + time.Minute)
		stop()

		got := map[string][]string{}
		for _, d := range e.del.all() {
			got[d.to.ChatID] = append(got[d.to.ChatID], d.text)
		}
		if len(got["1"]) != 0 {
			t.Errorf("a [SILENT] reply was delivered: %q", got["1"])
		}
		if j := e.get(quiet.ID); j.LastStatus != StatusOK || j.RepeatCompleted != 2 {
			t.Errorf("quiet job: status %q, completed %d", j.LastStatus, j.RepeatCompleted)
		}
		files, _ := filepath.Glob(filepath.Join(e.home, "cron", "output", quiet.ID, "*.md"))
		if len(files) != 2 {
			t.Fatalf("quiet job saved %d outputs, want 2", len(files))
		}
		if b, _ := os.ReadFile(files[0]); !strings.Contains(string(b), "[silent] nothing new") || !strings.Contains(string(b), "2000-01-01_01-00-00") && !strings.HasSuffix(files[0], "2000-01-01_01-00-00.md") {
			t.Errorf("output %s:\n%s", files[0], b)
		}
		for _, c := range []struct {
			job  *Job
			chat string
			want string
		}{
			{broken, "2", "model endpoint returned 500"},
			{crash, "3", "the job crashed: boom"},
			{empty, "4", "Agent completed but produced empty response"},
		} {
			if len(got[c.chat]) != 2 || !strings.HasPrefix(got[c.chat][0], "⚠️ Cron job '"+c.job.Name+"' failed:\n") || !strings.Contains(got[c.chat][0], c.want) {
				t.Errorf("%s delivered %q, want twice %q", c.job.Name, got[c.chat], c.want)
			}
			j := e.get(c.job.ID)
			if j.LastStatus != StatusError || j.LastError == "" || j.State != StateScheduled {
				t.Errorf("%s: status %q error %q state %q", c.job.Name, j.LastStatus, j.LastError, j.State)
			}
		}
	})
}

func TestDeliveryTargets(t *testing.T) {
	origin := herald.Target{Platform: herald.PlatformDiscord, ChatID: "chan-7", ThreadID: "th-1"}
	tests := []struct {
		deliver string
		origin  herald.Target
		want    string // delivered targets, in order
		status  string
		deliErr string
	}{
		{deliver: "local", want: "", status: StatusOK},
		{deliver: "origin", origin: origin, want: "discord:chan-7:th-1", status: StatusOK},
		{deliver: "origin", want: "discord:dc-home", status: StatusOK}, // no origin: first home channel
		{deliver: "telegram", want: "telegram:tg-home", status: StatusOK},
		{deliver: "discord", origin: origin, want: "discord:chan-7:th-1", status: StatusOK}, // same platform as origin: the origin chat
		{deliver: "telegram:-100123:77", want: "telegram:-100123:77", status: StatusOK},
		{deliver: "local:c1", want: "local:c1", status: StatusOK},
		{deliver: "telegram, discord:9 ,local", want: "telegram:tg-home,discord:9", status: StatusOK},
		{deliver: "all", want: "discord:dc-home,telegram:tg-home", status: StatusOK},
		{deliver: "all,telegram,telegram:tg-home,origin", want: "discord:dc-home,telegram:tg-home", status: StatusOK},
		{deliver: "local", origin: origin, want: "", status: StatusOK},
		{deliver: "slack", want: "", status: StatusDeliveryFailed, deliErr: "slack: the platform is not configured"},
		{deliver: "localhome", want: "", status: StatusDeliveryFailed, deliErr: "not configured"},
		{deliver: "telegram:bad,telegram", want: "telegram:tg-home", status: StatusDeliveryFailed, deliErr: "telegram:bad: chat not found"},
		{deliver: "telegram:slow,telegram", want: "telegram:tg-home", status: StatusQueued, deliErr: "queued for later (the platform asked to wait): telegram:slow until 2000-01-01T01:02:30Z"},
		{deliver: "telegram:lost,telegram", want: "telegram:tg-home", status: StatusMaybeSent, deliErr: "may have been sent (timed out after it was written; not sent again): telegram:lost"},
		{deliver: "telegram:bad,telegram:slow", want: "", status: StatusDeliveryFailed, deliErr: "telegram:bad: chat not found; queued for later (the platform asked to wait): telegram:slow until"},
	}
	for _, tt := range tests {
		t.Run(tt.deliver, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				e.del.fail = map[string]error{"telegram:bad": errors.New("chat not found"),
					"telegram:slow": &herald.QueuedError{Target: herald.Target{Platform: "telegram", ChatID: "slow"}, Until: time.Date(2000, 1, 1, 1, 2, 30, 0, time.UTC)},
					"telegram:lost": fmt.Errorf("deliver to telegram:lost: %w", herald.ErrMaybeSent)}
				j := e.add(NewJob{Name: "n", Prompt: "p", Schedule: "every 1h", Deliver: tt.deliver, Origin: tt.origin})
				s := New(e.config())
				out, err := s.RunNow(context.Background(), j.ID)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, d := range e.del.all() {
					got = append(got, d.to.String())
					if !strings.HasPrefix(d.text, "Cronjob Response: n\n(job_id: "+j.ID+")\n-------------\n\nok: p\n\nTo stop or manage this job") {
						t.Errorf("delivered text not wrapped: %q", d.text)
					}
				}
				if g := strings.Join(got, ","); g != tt.want {
					t.Errorf("delivered to %q, want %q", g, tt.want)
				}
				jj := e.get(j.ID)
				if jj.LastStatus != tt.status || !strings.Contains(jj.LastDeliveryError, tt.deliErr) || (tt.deliErr == "") != (jj.LastDeliveryError == "") {
					t.Errorf("status %q delivery error %q, want %q containing %q", jj.LastStatus, jj.LastDeliveryError, tt.status, tt.deliErr)
				}
				if out.deliveryText() != jj.LastDeliveryError || out.Status() != jj.LastStatus {
					t.Errorf("outcome %q vs stored %q", out.DeliveryError, jj.LastDeliveryError)
				}
			})
		})
	}
}

func TestMissingHomeChannelIsDeliveryFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		cfg := e.config()
		cfg.Homes = map[herald.Platform]string{herald.PlatformTelegram: ""}
		j := e.add(NewJob{Name: "n", Prompt: "p", Schedule: "every 1h", Deliver: "telegram"})
		a := e.add(NewJob{Name: "a", Prompt: "p", Schedule: "every 1h", Deliver: "all"})
		s := New(cfg)
		for _, id := range []string{j.ID, a.ID} {
			if _, err := s.RunNow(context.Background(), id); err != nil {
				t.Fatal(err)
			}
		}
		if got := e.get(j.ID); got.LastStatus != StatusDeliveryFailed || !strings.Contains(got.LastDeliveryError, "no home channel configured (set TELEGRAM_HOME_CHANNEL") {
			t.Fatalf("status %q, delivery error %q", got.LastStatus, got.LastDeliveryError)
		}
		if got := e.get(a.ID); got.LastStatus != StatusDeliveryFailed || !strings.Contains(got.LastDeliveryError, "no platform has a home channel") {
			t.Fatalf("all: status %q, delivery error %q", got.LastStatus, got.LastDeliveryError)
		}
		// a later good delivery clears the old delivery error
		cfg.Homes[herald.PlatformTelegram] = "tg-home"
		if _, err := New(cfg).RunNow(context.Background(), j.ID); err != nil {
			t.Fatal(err)
		}
		if got := e.get(j.ID); got.LastStatus != StatusOK || got.LastDeliveryError != "" || got.RepeatCompleted != 2 {
			t.Fatalf("after a good run: status %q, delivery error %q, completed %d", got.LastStatus, got.LastDeliveryError, got.RepeatCompleted)
		}
	})
}

func TestJobCreatedFromChat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		s := New(e.config())
		e.agent.Tools.Add(&Tool{Jobs: e.jobs, OnChange: s.Wake})
		e.agent.Tools.Add(fakeTool("send_message"))
		e.model.answer = func(req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
			last := req.Messages[len(req.Messages)-1]
			switch {
			case last.Role == openai.ChatMessageRoleTool:
				return text("Done: " + last.Content), nil
			case strings.Contains(last.Content, "remind me every morning at 8"):
				return openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{
					FinishReason: openai.FinishReasonToolCalls,
					Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
						ID: "call_1", Type: openai.ToolTypeFunction,
						Function: openai.FunctionCall{Name: ToolName, Arguments: `{"action":"create","schedule":"0 8 * * *","prompt":"Wish the user good morning and list today's tasks.","name":"morning"}`},
					}}},
				}}}, nil
			}
			return text("Good morning! Today: standup at 10."), nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.Run(ctx) }()

		res, err := e.agent.Run(context.Background(), "remind me every morning at 8", agent.Options{
			Turn: agent.Turn{Platform: "telegram", ChatID: "42", UserID: "u1", SessionID: "s1"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.FinalResponse, `"success":true`) {
			t.Fatalf("tool answer: %s", res.FinalResponse)
		}
		jobs, _ := e.jobs.List(context.Background(), false)
		if len(jobs) != 1 || jobs[0].Deliver != "origin" || jobs[0].Origin.String() != "telegram:42" || jobs[0].Name != "morning" {
			t.Fatalf("jobs: %+v", jobs)
		}
		time.Sleep(8*time.Hour + time.Minute)
		cancel()
		<-done

		runs := e.model.callsFor("Wish the user good morning")
		if len(runs) != 1 || runs[0].at.UTC().Format("15:04") != "08:00" {
			t.Fatalf("job runs: %+v", runs)
		}
		for _, tool := range runs[0].tools {
			if tool == ToolName || tool == "send_message" {
				t.Fatalf("a job ran with the %s tool", tool)
			}
		}
		sent := e.del.all()
		if len(sent) != 1 || sent[0].to.String() != "telegram:42" || !strings.Contains(sent[0].text, "Good morning! Today: standup at 10.") {
			t.Fatalf("deliveries: %+v", sent)
		}
	})
}

func TestToolNeverTouchesScriptJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		tool := &Tool{Jobs: e.jobs}
		sj := e.add(NewJob{Name: "disk", Script: "df -h", Schedule: "every 1h"})
		pj := e.add(NewJob{Name: "ask", Prompt: "how are you", Schedule: "every 1h"})
		ctx := context.Background()
		out, err := tool.Run(ctx, &agent.Call{Args: map[string]any{"action": "list"}})
		if err != nil || strings.Contains(out, sj.ID) || !strings.Contains(out, pj.ID) {
			t.Fatalf("list: %s %v", out, err)
		}
		if _, err := tool.Run(ctx, &agent.Call{Args: map[string]any{"action": "remove", "job_id": sj.ID}}); err == nil || !strings.Contains(err.Error(), "herald cron rm") {
			t.Fatalf("removing a script job: %v", err)
		}
		if _, err := tool.Run(ctx, &agent.Call{Args: map[string]any{"action": "create", "schedule": "1h", "prompt": "x", "script": "rm -rf /"}}); err != nil {
			t.Fatal(err)
		}
		all, _ := e.jobs.List(ctx, true)
		for _, j := range all {
			if j.Script != "" && j.ID != sj.ID {
				t.Fatalf("the tool created a script job: %+v", j)
			}
		}
		if _, err := tool.Run(ctx, &agent.Call{Args: map[string]any{"action": "remove", "job_id": pj.ID}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.jobs.Get(ctx, pj.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("prompt job not removed: %v", err)
		}
	})
}

func TestScriptJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		gate := e.add(NewJob{Name: "gate", Script: `echo "checked"; echo '{"wakeAgent": false}'`, Prompt: "summarise", Schedule: "every 1h", Deliver: "telegram"})
		wake := e.add(NewJob{Name: "wake", Script: `echo "disk 91% full"`, Prompt: "summarise the disk report", Schedule: "every 1h", Deliver: "telegram:w"})
		only := e.add(NewJob{Name: "only", Script: `echo "raw report"`, Schedule: "every 1h", Deliver: "telegram:o"})
		bad := e.add(NewJob{Name: "bad", Script: `echo oops >&2; exit 3`, Prompt: "x", Schedule: "every 1h", Deliver: "telegram:b"})
		s := New(e.config())
		for _, id := range []string{gate.ID, wake.ID, only.ID, bad.ID} {
			if _, err := s.RunNow(context.Background(), id); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(e.model.callsFor("summarise")); n != 1 {
			t.Fatalf("agent woken %d times, want once (the gate skips it)", n)
		}
		if c := e.model.callsFor("summarise the disk report"); len(c) != 1 || !strings.Contains(c[0].prompt, "disk 91% full") {
			t.Fatalf("script output not given to the prompt: %+v", c)
		}
		got := map[string]string{}
		for _, d := range e.del.all() {
			got[d.to.ChatID] = d.text
		}
		if _, ok := got["tg-home"]; ok {
			t.Fatal("a gated job was delivered")
		}
		if !strings.Contains(got["o"], "raw report") {
			t.Fatalf("script-only output: %q", got["o"])
		}
		if !strings.Contains(got["b"], "⚠️ Cron job 'bad' failed:\nscript failed: exit status 3: oops") {
			t.Fatalf("script failure: %q", got["b"])
		}
		if j := e.get(gate.ID); j.LastStatus != StatusOK {
			t.Fatalf("gated job status %q", j.LastStatus)
		}
	})
}

func TestRestartInTheMiddleOfARun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		j := e.add(NewJob{Name: "hourly", Prompt: "hourly", Schedule: "every 1h", Deliver: "telegram:1"})
		time.Sleep(time.Hour)
		// process A claims the 01:00 slot and dies before the run ends
		e.claimAndDie(claimOne)
		time.Sleep(10 * time.Minute)

		// process B starts at 01:10: the 01:00 slot is not fired again
		_, stop := e.start(e.config())
		time.Sleep(time.Minute)
		if n := len(e.model.callsFor("hourly")); n != 0 {
			t.Fatalf("the interrupted slot ran again (%d runs)", n)
		}
		got := e.get(j.ID)
		if got.LastStatus != StatusError || !strings.Contains(got.LastError, "interrupted") || !got.RunningSince.IsZero() {
			t.Fatalf("interrupted run recorded as %q %q running=%v", got.LastStatus, got.LastError, got.RunningSince)
		}
		time.Sleep(time.Hour)
		stop()
		if got := strings.Join(times(e.model.callsFor("hourly")), " "); got != "01-01 02:00" {
			t.Fatalf("runs after restart: [%s]", got)
		}
		if got := e.get(j.ID); got.LastStatus != StatusOK || got.LastError != "" {
			t.Fatalf("after the next run: %q %q", got.LastStatus, got.LastError)
		}
	})
}

func TestParallelLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		var mu sync.Mutex
		running, peak := 0, 0
		e.model.answer = func(req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
			mu.Lock()
			running++
			peak = max(peak, running)
			mu.Unlock()
			time.Sleep(10 * time.Minute)
			mu.Lock()
			running--
			mu.Unlock()
			return text("done"), nil
		}
		for i := range 7 {
			e.add(NewJob{Prompt: fmt.Sprintf("job %d", i), Schedule: "30m"})
		}
		cfg := e.config()
		cfg.MaxParallel = 2
		_, stop := e.start(cfg)
		time.Sleep(2 * time.Hour)
		stop()
		if peak != 2 {
			t.Fatalf("peak parallel runs %d, want 2", peak)
		}
		if n := len(e.model.callsFor("job")); n != 7 {
			t.Fatalf("%d jobs ran, want 7", n)
		}
	})
}

// panicky is a Runner that panics for prompts containing on.
type panicky struct {
	Runner
	on string
}

func (p *panicky) Run(ctx context.Context, prompt string, o agent.Options) (*agent.Result, error) {
	if strings.Contains(prompt, p.on) {
		panic("boom")
	}
	return p.Runner.Run(ctx, prompt, o)
}

// fakeTool is a stand-in tool with the given name, so that the test can
// see which tools a job's run is offered.
type fakeTool string

func (f fakeTool) Name() string                                     { return string(f) }
func (f fakeTool) Description() string                              { return "test tool" }
func (f fakeTool) Schema() json.RawMessage                          { return json.RawMessage(`{"type":"object"}`) }
func (f fakeTool) Run(context.Context, *agent.Call) (string, error) { return "{}", nil }
