package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/sessions"
)

// bootGW is a gateway run through cmd.Main in this process.
type bootGW struct {
	home      string
	addr      string
	token     string
	out, errw *watchBuf
	stop      func() int
}

const bootKey = "sk-boot-gateway-key-0123456789"

// startBootGateway writes config.yaml (the fake model's base URL and key)
// and BOOT.md, starts the gateway and waits until the local API listens.
func startBootGateway(t *testing.T, srv *agenttest.Server, bootMD, extraConfig string) *bootGW {
	t.Helper()
	home := t.TempDir()
	conf := fmt.Sprintf("model:\n  default: boot-model\n  base_url: %s\n  api_key: %s\nplatforms:\n  local:\n    listen: 127.0.0.1:0\n%s", srv.BaseURL(), bootKey, extraConfig)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if bootMD != "" {
		if err := os.WriteFile(filepath.Join(home, "BOOT.md"), []byte(bootMD), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return runBootGateway(t, home)
}

// runBootGateway starts a gateway on home and waits until the local API
// listens.
func runBootGateway(t *testing.T, home string) *bootGW {
	t.Helper()
	g := &bootGW{home: home, out: newWatchBuf(), errw: newWatchBuf()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- cmd.Main(ctx, []string{"--home", home, "gateway"}, cmd.WithStdio(strings.NewReader(""), g.out, g.errw), cmd.WithGetenv(cronEnv(home, nil)))
	}()
	stopped := false
	code := 0
	g.stop = func() int {
		if !stopped {
			stopped = true
			cancel()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Errorf("gateway did not stop")
			}
		}
		return code
	}
	t.Cleanup(func() { g.stop() })
	g.out.waitFor(t, "local platform listening on http://", 20*time.Second)
	b, err := os.ReadFile(filepath.Join(home, "local.addr"))
	if err != nil {
		t.Fatal(err)
	}
	g.addr = strings.TrimSpace(string(b))
	tok, err := os.ReadFile(filepath.Join(home, "local.token"))
	if err != nil {
		t.Fatal(err)
	}
	g.token = strings.TrimSpace(string(tok))
	return g
}

// post sends a chat message on the local platform and returns the replies.
func (g *bootGW) post(t *testing.T, chat, text string) []string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"chat_id": chat, "user_id": "u1", "text": text})
	req, _ := http.NewRequest(http.MethodPost, "http://"+g.addr+"/v1/messages", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+g.token)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Replies []struct {
			Text string `json:"text"`
		} `json:"replies"`
	}
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &out) != nil {
		t.Fatalf("POST /v1/messages: %s %s", resp.Status, data)
	}
	var texts []string
	for _, r := range out.Replies {
		texts = append(texts, r.Text)
	}
	return texts
}

func isBootPrompt(r *agenttest.Request) bool {
	return len(r.Body.Messages) > 0 && strings.Contains(r.Body.Messages[len(r.Body.Messages)-1].Content, "startup boot checklist")
}

// TestBootSendsToLocalWithGatewayModel: the checklist runs with the
// gateway's resolved endpoint (custom base URL and key), calls
// send_message, and the message reaches the local chat (recorded in that
// chat's transcript).
func TestBootSendsToLocalWithGatewayModel(t *testing.T) {
	release := make(chan struct{})
	srv := agenttest.New(t)
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the server closes, also on failure
	srv.Default = agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
		last := r.LastMessage()
		switch {
		case isBootPrompt(r):
			<-release // until the test's chat has a session
			return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "c1", Name: "send_message",
				Args: `{"action":"send","target":"local:c1","message":"Overnight: 2 ERROR lines in deploy.log"}`}}}
		case last.Role == openai.ChatMessageRoleTool:
			return agenttest.Reply{Content: "Sent the overnight summary to local:c1."}
		}
		return agenttest.Reply{Content: "pong"}
	}}
	g := startBootGateway(t, srv, "# Startup Checklist\nCheck the deploy log and tell local:c1.\n", "")
	g.errw.waitFor(t, "Running BOOT.md (59 chars)", 20*time.Second)
	if got := g.post(t, "c1", "hello"); len(got) != 1 || got[0] != "pong" {
		t.Fatalf("chat replies %q", got)
	}
	unblock()
	g.errw.waitFor(t, "boot-md completed: Sent the overnight summary to local:c1.", 20*time.Second)

	var boot *agenttest.Request
	for _, r := range srv.Requests() {
		if isBootPrompt(r) {
			boot = r
		}
	}
	if boot == nil || boot.Authorization != "Bearer "+bootKey || boot.Body.Model != "boot-model" {
		t.Fatalf("BOOT.md request: %+v", boot)
	}
	var tools []string
	for _, tl := range boot.Body.Tools {
		tools = append(tools, tl.Function.Name)
	}
	for _, want := range []string{"send_message", "terminal", "cronjob"} {
		if !strings.Contains(strings.Join(tools, ","), want) {
			t.Errorf("BOOT.md ran without %s (tools %v)", want, tools)
		}
	}
	if code := g.stop(); code != 0 {
		t.Fatalf("gateway exit %d:\n%s", code, g.errw.String())
	}
	st, err := sessions.Open(filepath.Join(g.home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n int
	err = st.DB().QueryRow(`SELECT COUNT(*) FROM messages m JOIN sessions s ON s.id = m.session_id
		WHERE s.platform = 'local' AND s.chat_id = 'c1' AND m.role = 'assistant' AND m.content = ?`, "Overnight: 2 ERROR lines in deploy.log").Scan(&n)
	if err != nil || n != 1 {
		t.Fatalf("the message did not reach local:c1 (%d, %v)", n, err)
	}
}

func TestBootSilentAndFailing(t *testing.T) {
	t.Run("silent", func(t *testing.T) {
		srv := agenttest.New(t)
		srv.Default = agenttest.Reply{Content: "[SILENT]"}
		g := startBootGateway(t, srv, "Reply [SILENT] if all is well.", "")
		g.errw.waitFor(t, "boot-md completed (nothing to report)", 20*time.Second)
		// herald boot run asks the running gateway
		code, out, errOut := cronCLI(t, g.home, "boot", "run")
		if code != 0 || strings.TrimSpace(out) != "[SILENT]" || !strings.Contains(errOut, "boot-md completed (nothing to report)") || strings.Contains(errOut, "no gateway is running") {
			t.Fatalf("boot run: exit %d, out %q, err %q", code, out, errOut)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Fatalf("%d model requests, want 2 (startup, boot run)", n)
		}
	})
	t.Run("model fails, gateway serves", func(t *testing.T) {
		srv := agenttest.New(t)
		srv.Default = agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
			if isBootPrompt(r) {
				return agenttest.Reply{Status: http.StatusInternalServerError, Message: "upstream exploded"}
			}
			return agenttest.Reply{Content: "still here"}
		}}
		g := startBootGateway(t, srv, "check", "")
		g.errw.waitFor(t, "boot-md agent failed: ", 30*time.Second)
		if got := g.post(t, "c2", "are you up?"); len(got) != 1 || got[0] != "still here" {
			t.Fatalf("after a failed checklist the chat got %q", got)
		}
	})
	t.Run("boot.enabled false", func(t *testing.T) {
		srv := agenttest.New(t)
		g := startBootGateway(t, srv, "check", "boot:\n  enabled: false\n")
		g.errw.waitFor(t, "BOOT.md hook is off", 20*time.Second)
		g.stop() // drains the hook queues
		if strings.Contains(g.errw.String(), "Running BOOT.md") || len(srv.Requests()) != 0 {
			t.Fatalf("the checklist ran although boot.enabled is false:\n%s", g.errw.String())
		}
	})
}

// TestCronRunThroughGateway: with a gateway running, `herald cron run`
// asks it, and the result is delivered by the gateway.
func TestCronRunThroughGateway(t *testing.T) {
	srv := agenttest.New(t)
	srv.Default = agenttest.Reply{Content: "nightly report: all green"}
	g := startBootGateway(t, srv, "", "")
	code, out, errOut := cronCLI(t, g.home, "cron", "add", "every 1h", "write the nightly report", "--name", "nightly", "--deliver", "local:c9")
	if code != 0 {
		t.Fatalf("add: %d %s", code, errOut)
	}
	if strings.Contains(out, "gateway is not running") {
		t.Fatalf("warned although a gateway runs:\n%s", out)
	}
	id := createdRE.FindStringSubmatch(out)[1]
	code, out, errOut = cronCLI(t, g.home, "cron", "run", id)
	if code != 0 {
		t.Fatalf("run: %d %s\n%s", code, errOut, out)
	}
	mustContain(t, "cron run", out, "Ran job "+id+" (nightly): ok", "Delivered to: local:c9", "nightly report: all green")
	if strings.Contains(errOut, "no gateway is running") {
		t.Fatalf("ran locally although a gateway runs: %s", errOut)
	}
	var sawJob bool
	for _, r := range srv.Requests() {
		if strings.Contains(r.LastMessage().Content, "write the nightly report") {
			sawJob = true
			for _, tl := range r.Body.Tools {
				if tl.Function.Name == "cronjob" || tl.Function.Name == "send_message" {
					t.Fatalf("the job ran with %s", tl.Function.Name)
				}
			}
		}
	}
	if !sawJob {
		t.Fatal("the job's prompt never reached the model")
	}
}

func TestBootRunWithoutGateway(t *testing.T) {
	home := t.TempDir()
	code, _, errOut := cronCLI(t, home, "boot", "run")
	if code != 1 || !strings.Contains(errOut, "no BOOT.md checklist") {
		t.Fatalf("without BOOT.md: exit %d, %q", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(home, "BOOT.md"), []byte("Check the disks."), 0o600); err != nil {
		t.Fatal(err)
	}
	// no credentials: the offline echo model answers by repeating the
	// prompt; quoting its [SILENT] convention is not being silent
	code, out, errOut := cronCLI(t, home, "boot", "run")
	if code != 0 {
		t.Fatalf("boot run: exit %d, %s", code, errOut)
	}
	mustContain(t, "boot run stderr", errOut, "no gateway is running, so the checklist runs here", "boot-md completed: [echo model — offline]")
	mustContain(t, "boot run output", out, "[echo model — offline] You are running a startup boot checklist.", "---\nCheck the disks.\n---")
}
