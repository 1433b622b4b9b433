// Package hooks_test runs the example directory hooks — Hermes' own
// handler.py where it runs unchanged — in a whole gateway.
package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/signed"
)

// install copies example hook directories into a new herald home.
func install(t *testing.T, names ...string) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("handler.py hooks need python3; scripts/test installs it")
	}
	home := t.TempDir()
	for _, n := range names {
		dst := filepath.Join(home, "hooks", n)
		os.MkdirAll(dst, 0o700)
		for _, f := range []string{"HOOK.yaml", "handler.py"} {
			b, err := os.ReadFile(filepath.Join(n, f))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dst, f), b, 0o600)
		}
		// as a user would: a directory hook runs once approved
		var out, errw strings.Builder
		if code := cmd.Main(context.Background(), []string{"--home", home, "hooks", "allow", n}, cmd.WithStdio(strings.NewReader(""), &out, &errw),
			cmd.WithGetenv(func(string) string { return "" })); code != 0 {
			t.Fatalf("herald hooks allow %s: exit %d\n%s%s", n, code, out.String(), errw.String())
		}
	}
	return home
}

func waitFile(t *testing.T, path string, ok func(string) bool) string {
	t.Helper()
	var b []byte
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, _ = os.ReadFile(path); ok(string(b)) {
			return string(b)
		}
	}
	t.Fatalf("%s never became what was expected:\n%s", path, b)
	return ""
}

func TestCommandLogger(t *testing.T) {
	fakeHome := t.TempDir()
	t.Setenv("HOME", fakeHome)
	g := cmdtest.Start(t, cmdtest.Options{Home: install(t, "command-logger")})
	g.Say(t, "c", "/status")
	g.Say(t, "c", "/help")
	log := waitFile(t, filepath.Join(fakeHome, ".hermes", "logs", "command_usage.jsonl"), func(s string) bool { return strings.Count(s, "\n") >= 2 })
	lines := strings.Split(strings.TrimSpace(log), "\n")
	var first map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	if first["command"] != "status" || first["platform"] != "local" || first["user"] != "u-c" || !strings.Contains(lines[1], `"command": "help"`) {
		t.Fatalf("command_usage.jsonl =\n%s", log)
	}
}

func TestSessionWebhook(t *testing.T) {
	const secret = "webhook-secret"
	got := make(chan map[string]any, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !signed.Verify([]byte(secret), body, r.Header.Get(signed.Header)) {
			http.Error(w, "bad signature", 401)
			return
		}
		var m map[string]any
		json.Unmarshal(body, &m)
		got <- m
	}))
	defer srv.Close()
	t.Setenv("HERALD_SESSION_WEBHOOK_URL", srv.URL)
	t.Setenv("HERALD_SESSION_WEBHOOK_SECRET", secret)
	g := cmdtest.Start(t, cmdtest.Options{Home: install(t, "session-webhook")})
	r := g.Say(t, "w", "hello")
	for _, want := range []string{"session:start", "session:reset"} {
		if want == "session:reset" {
			g.Say(t, "w", "/new")
		}
		select {
		case m := <-got:
			if m["event"] != want || m["platform"] != "local" || m["session_key"] != "agent:main:local:dm:w" {
				t.Fatalf("webhook body = %v", m)
			}
			if want == "session:start" && m["session_id"] != r.SessionID {
				t.Fatalf("session_id = %v, want %s", m["session_id"], r.SessionID)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("no signed %s webhook", want)
		}
	}
}

func TestLongTaskAlert(t *testing.T) {
	tg := telegramtest.New(telegramtest.Options{})
	defer tg.Close()
	t.Setenv("TELEGRAM_BOT_TOKEN", tg.Token())
	t.Setenv("TELEGRAM_HOME_CHANNEL", "555")
	t.Setenv("TELEGRAM_API_BASE", tg.URL())
	fm := agenttest.New(t)
	fm.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		steps := 0
		for _, m := range req.Body.Messages {
			if m.Role == openai.ChatMessageRoleTool {
				steps++
			}
		}
		if steps >= 12 {
			return agenttest.Reply{Content: "finally done"}
		}
		return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: fmt.Sprint("c", steps), Name: "terminal", Args: `{"command":"echo step"}`}}}
	}}
	g := cmdtest.Start(t, cmdtest.Options{Home: install(t, "long-task-alert"),
		Env: map[string]string{"OPENAI_BASE_URL": fm.BaseURL(), "OPENAI_API_KEY": "sk-test-0123456789abcdefghij"}})
	if r := g.Say(t, "l", "a long job"); r.Text() != "finally done" {
		t.Fatalf("reply = %q", r.Text())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	calls, err := tg.WaitCalls(ctx, "sendMessage", 1)
	if err != nil {
		t.Fatalf("no Telegram alert: %v\n%s", err, g.Log())
	}
	if calls[0].ChatID != "555" || calls[0].Text != "⚠️ Agent has been running for 10 steps. Last tools: terminal" {
		t.Fatalf("alert = %+v", calls[0])
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(tg.Calls("sendMessage")); n != 1 {
		t.Fatalf("%d alerts, want exactly one (at step 10)", n)
	}
}
