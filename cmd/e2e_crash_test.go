package cmd_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/sessions/pgtest"
)

// gatewayChildEnv switches the test binary into a herald gateway process
// (see TestMain): a whole gateway that a test can kill with SIGKILL.
const gatewayChildEnv = "HERALD_TEST_GATEWAY_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(gatewayChildEnv) != "" {
		os.Exit(cmd.Main(context.Background(), []string{"gateway"}, cmd.WithSignals()))
	}
	code := pgtest.Main(m) // and stop the PostgreSQL its tests started
	closeBrowser()         // the console tests' Chromium (e2e_console_test.go)
	os.Exit(code)
}

// startChild runs a gateway process on home; its output goes to out.
func startChild(t *testing.T, env []string, out *cmdtest.Buffer) *exec.Cmd {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), env...)
	c.Env = append(c.Env, gatewayChildEnv+"=1")
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Process.Kill()
		c.Wait()
	})
	return c
}

// A gateway killed with SIGKILL in the middle of a turn, after Telegram
// was told the update arrived: the restarted gateway answers the message,
// exactly once.
func TestKilledMidTurnAnswersOnceAfterRestart(t *testing.T) {
	tg := telegramtest.New(telegramtest.Options{MaxPoll: time.Second})
	defer tg.Close()

	// the model holds the first process's turn open; the restarted
	// process's calls are answered at once, echoing the last message
	var mu sync.Mutex
	calls := 0
	held := make(chan struct{}, 1)
	release := make(chan struct{})
	model := agenttest.New(t)
	t.Cleanup(func() { close(release) }) // runs before the server closes
	model.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			held <- struct{}{}
			<-release
		}
		return agenttest.Reply{Content: "re: " + req.LastMessage().Content}
	}}

	home := t.TempDir()
	cfg := "platforms:\n  telegram:\n    api_endpoint: " + tg.Endpoint() + "\n    poll_timeout: 1\n    allowed_users: [\"*\"]\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"HERALD_HOME=" + home, "HERALD_LOCAL_LISTEN=127.0.0.1:0",
		"TELEGRAM_BOT_TOKEN=" + tg.Token(),
		"OPENAI_BASE_URL=" + model.BaseURL(), "OPENAI_API_KEY=sk-test-key-0123456789abcdef", "HERALD_MODEL=fake-model",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var out1 cmdtest.Buffer
	first := startChild(t, env, &out1)
	tg.DM(42, "alice", "hello before the crash")
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatalf("the turn never reached the model:\n%s", out1.String())
	}
	// Telegram has been told the update arrived (the next poll moved past
	// it) before the process dies
	if err := tg.Wait(ctx, func() bool { return tg.Confirmed() >= 1 }); err != nil {
		t.Fatalf("update never confirmed: %v\n%s", err, out1.String())
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	if n := len(tg.Calls("sendMessage")); n != 0 {
		t.Fatalf("%d answers before the crash", n)
	}

	var out2 cmdtest.Buffer
	startChild(t, env, &out2)
	want := "re: hello before the crash"
	// replies are streamed: a sendMessage, then edits of that message;
	// finals maps each sent message to its last text
	finals := func() map[string]string {
		out := map[string]string{}
		for _, c := range tg.Calls("sendMessage") {
			out[c.MessageID] = c.Text
		}
		for _, c := range tg.Calls("editMessageText") {
			out[c.MessageID] = c.Text
		}
		return out
	}
	answers := func(text string) int {
		n := 0
		for _, t := range finals() {
			if strings.Contains(t, text) {
				n++
			}
		}
		return n
	}
	answered := func(text string) func() bool {
		return func() bool { return answers(text) > 0 }
	}
	if err := tg.Wait(ctx, answered(want)); err != nil {
		t.Fatalf("the message was lost in the crash (%v): %d model calls, replies %q\n%s", err, len(model.Requests()), finals(), out2.String())
	}
	// a later message in the same chat is answered after any second
	// answer to the first would have been
	tg.DM(42, "alice", "and after it")
	if err := tg.Wait(ctx, answered("re: and after it")); err != nil {
		t.Fatalf("no answer to the next message (%v): replies %q\n%s", err, finals(), out2.String())
	}
	if n := answers(want); n != 1 {
		t.Fatalf("the message was answered %d times: %q", n, finals())
	}
}
