package cmd_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// rewrites replace what changes from run to run (the home, times,
// addresses, ids) with fixed words: regular expressions, in order.
type rewrites [][2]string

func (n rewrites) apply(s string) string {
	for _, r := range n {
		s = regexp.MustCompile(r[0]).ReplaceAllString(s, r[1])
	}
	return s
}

func TestStatusNotRunning(t *testing.T) {
	home := t.TempDir()
	code, out, _ := run(t, home, "", "status")
	if code != 3 || out != "herald gateway: not running (home "+home+")\n" {
		t.Fatalf("status: %d %q", code, out)
	}
	code, out, _ = run(t, home, "", "status", "--json")
	var st struct {
		Running bool   `json:"running"`
		Home    string `json:"home"`
	}
	if code != 3 || json.Unmarshal([]byte(out), &st) != nil || st.Running || st.Home != home {
		t.Fatalf("status --json: %d %q", code, out)
	}
}

func TestStatusOfARunningGateway(t *testing.T) {
	home := t.TempDir()
	if code, out, errw := run(t, home, "", "cron", "add", "every 1h", "check the deploy log", "--name", "deploys"); code != 0 {
		t.Fatalf("cron add: %d %s %s", code, out, errw)
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home})
	if r := g.Say(t, "c1", "hello"); r.Status != "done" {
		t.Fatalf("say: %+v", r)
	}

	// the reply is out before the turn has ended (it still writes its log
	// line): status is read once the gateway says no turn runs
	var code int
	var out, errw string
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, out, errw = run(t, home, "", "status", "--json")
		if !strings.Contains(out, `"running_turns": 1`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var st struct {
		Running        bool              `json:"running"`
		PID            int               `json:"pid"`
		Listen         string            `json:"listen"`
		Platforms      map[string]string `json:"platforms"`
		Store          string            `json:"store"`
		Chats          int               `json:"chats"`
		RunningTurns   int               `json:"running_turns"`
		QueuedMessages int               `json:"queued_messages"`
		Cron           []struct {
			Name, Schedule string
		} `json:"cron"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("status --json: %d %q %q", code, out, errw)
	}
	if !st.Running || st.PID != os.Getpid() || st.Listen != g.Addr || st.Platforms["local"] != "connected" || st.Store != "ok" ||
		st.RunningTurns != 0 || st.QueuedMessages != 0 || len(st.Cron) != 1 || st.Cron[0].Name != "deploys" || st.Cron[0].Schedule != "every 1h" {
		t.Fatalf("status --json:\n%s", out)
	}

	code, out, errw = run(t, home, "", "status")
	if code != 0 {
		t.Fatalf("status: %d %q %q", code, out, errw)
	}
	norm := rewrites{
		{regexp.QuoteMeta(home), "<home>"},
		{regexp.QuoteMeta(g.Addr), "<addr>"},
		{`pid \d+, up [0-9hms.]+, since [0-9-]+ [0-9:]+`, "pid <pid>, up <uptime>, since <time>"},
		{`version:    \S+`, "version:    <version>"},
		{`\d{4}-\d\d-\d\d \d\d:\d\d  [0-9a-f]+  `, "<time>  <id>  "},
	}
	goldenCompare(t, "status.golden", norm.apply(out))

	g.Stop()
	if code, out, _ := run(t, home, "", "status"); code != 3 || !strings.Contains(out, "not running") {
		t.Fatalf("status after stop: %d %q", code, out)
	}
}

// While a turn waits for the model, status counts it as running.
func TestStatusCountsARunningTurn(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	model := agenttest.New(t, agenttest.Reply{Func: func(*agenttest.Request) agenttest.Reply {
		entered <- struct{}{}
		<-release
		return agenttest.Reply{Content: "done"}
	}})
	g := cmdtest.Start(t, cmdtest.Options{Env: map[string]string{"OPENAI_BASE_URL": model.BaseURL(), "OPENAI_API_KEY": "sk-test"}})
	p := g.PostAsync(`{"chat_id":"c1","user_id":"u1","chat_type":"dm","text":"take your time"}`, nil)
	<-entered
	code, out, errw := run(t, g.Home, "", "status", "--json")
	var st struct {
		RunningTurns int `json:"running_turns"`
	}
	close(release)
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.RunningTurns != 1 {
		t.Fatalf("status --json during a turn: %d %q %q", code, out, errw)
	}
	if _, r := p.Wait(t); r.Status != "done" {
		t.Fatalf("turn: %+v", r)
	}
}
