package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

func run(t *testing.T, home string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), append([]string{"--home", home}, args...), cmd.WithStdio(strings.NewReader(stdin), &out, &errw), cmd.WithGetenv(func(string) string { return "" }))
	return code, out.String(), errw.String()
}

func TestChatOneShotAndSessionsList(t *testing.T) {
	home := t.TempDir()
	code, out, errw := run(t, home, "", "chat", "-q", "hello from the terminal")
	if code != 0 || !strings.Contains(out, "[echo model — offline] hello from the terminal") {
		t.Fatalf("chat -q: %d %q %q", code, out, errw)
	}
	// an interactive conversation (not a terminal: no prompt) keeps history
	code, out, _ = run(t, home, "second\n/status\n", "chat")
	if code != 0 || !strings.Contains(out, "second") || !strings.Contains(out, "Session: ") {
		t.Fatalf("chat: %d %q", code, out)
	}
	code, out, _ = run(t, home, "", "sessions", "list")
	if code != 0 || !strings.Contains(out, "cli") || !strings.Contains(out, "terminal") {
		t.Fatalf("sessions list: %d %q", code, out)
	}
	// both turns went to the same session: 4 messages
	if !strings.Contains(out, "  4  ") {
		t.Fatalf("sessions list does not show 4 messages:\n%s", out)
	}
}

func TestVersionUsageAndLogs(t *testing.T) {
	home := t.TempDir()
	if code, out, _ := run(t, home, "", "version"); code != 0 || !strings.HasPrefix(out, "herald ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _, errw := run(t, home, "", "frobnicate"); code != 2 || !strings.Contains(errw, `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: %d %q", code, errw)
	}
	os.MkdirAll(filepath.Join(home, "logs"), 0o700)
	os.WriteFile(filepath.Join(home, "logs", "gateway.log"), []byte("time=1 level=INFO msg=a\ntime=2 level=WARN msg=b\ntime=3 level=ERROR msg=c\n"), 0o600)
	code, out, _ := run(t, home, "", "logs", "--level", "warn")
	if code != 0 || strings.Contains(out, "msg=a") || !strings.Contains(out, "msg=b") || !strings.Contains(out, "msg=c") {
		t.Fatalf("logs --level warn: %d %q", code, out)
	}
}

// Commands started together on a new home all succeed: the first to open
// state.db creates the schema, the others wait for it and find it done.
func TestCommandsStartedTogetherOnANewHome(t *testing.T) {
	const n = 8
	home := t.TempDir()
	type result struct {
		code      int
		out, errw string
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			code, out, errw := run(t, home, "", "hooks", "allow", "pre_tool_call", fmt.Sprintf("/bin/echo %d", i))
			results[i] = result{code, out, errw}
		})
	}
	close(start)
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("hooks allow %d: exit %d: %s%s", i, r.code, r.out, r.errw)
		}
	}
	code, out, errw := run(t, home, "", "hooks", "list")
	if code != 0 {
		t.Fatalf("hooks list: %d %s%s", code, out, errw)
	}
}

// A named pipe where herald reads a file from its home at start never
// holds a command up: it is refused (or, for a hook's HOOK.yaml, that hook
// is skipped) with a message naming the path, and never opened for a
// blocking read. A watchdog notices a reader on the pipe (a writer that
// opens it without blocking succeeds only then), fails the test and
// releases that reader, so a failing test still ends.
func TestNamedPipesInTheHomeAreRefused(t *testing.T) {
	for _, tc := range []struct {
		file   string
		args   []string
		config string
		code   int
		// quiet: the file is read as absent (the allowlist, like a corrupt
		// one, is then empty), so only "not blocked" is checked
		quiet bool
	}{
		{file: "config.yaml", args: []string{"sessions", "list"}, code: 2},
		{file: ".env", args: []string{"sessions", "list"}, code: 2},
		{file: "BOOT.md", args: []string{"boot", "run"}, code: 1},
		{file: "local.token", args: []string{"gateway"}, code: 1},
		{file: filepath.Join("hooks", "piped", "HOOK.yaml"), args: []string{"hooks", "list"}},
		{file: "shell-hooks-allowlist.json", args: []string{"hooks", "list"}, quiet: true,
			config: "hooks:\n  pre_tool_call:\n    - command: /bin/true\n"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			home := t.TempDir()
			p := filepath.Join(home, tc.file)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			if tc.config != "" {
				if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(tc.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"HERALD_HOME": home, "HERALD_LOCAL_LISTEN": "127.0.0.1:0"}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				code      int
				out, errw string
			}
			done := make(chan result, 1)
			go func() {
				var out, errw bytes.Buffer
				code := cmd.Main(ctx, tc.args, cmd.WithStdio(strings.NewReader(""), &out, &errw),
					cmd.WithGetenv(func(k string) string { return env[k] }))
				done <- result{code, out.String(), errw.String()}
			}()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			var r result
		wait:
			for {
				select {
				case r = <-done:
					break wait
				case <-tick.C:
					w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0)
					if err != nil {
						continue
					}
					w.Close()
					t.Errorf("herald %s opened %s for a blocking read", strings.Join(tc.args, " "), tc.file)
					// keep a reader open so that a write to the pipe cannot
					// block either, and stop whatever is running
					if rd, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
						defer rd.Close()
					}
					cancel()
					r = <-done
					break wait
				}
			}
			said := r.out + r.errw
			if r.code != tc.code || !tc.quiet && (!strings.Contains(said, p) || !strings.Contains(said, "named pipe")) {
				t.Fatalf("herald %s: exit %d, want %d and a message naming %s as a named pipe:\n%s%s", strings.Join(tc.args, " "), r.code, tc.code, p, r.out, r.errw)
			}
		})
	}
}

// /v1/events streams every hook point in the directory-hook form.
func TestEventsStream(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{})
	events := g.Events(t)
	g.Say(t, "ev", "watch this")
	if e := cmdtest.WaitFor(t, events, "session:start", 10*time.Second); e.Context["session_key"] != "agent:main:local:dm:ev" {
		t.Fatalf("session:start context = %v", e.Context)
	}
	if e := cmdtest.WaitFor(t, events, "agent:start", 10*time.Second); e.Context["message"] != "watch this" || e.Context["platform"] != "local" {
		t.Fatalf("agent:start context = %v", e.Context)
	}
	if e := cmdtest.WaitFor(t, events, "agent:end", 10*time.Second); !strings.Contains(fmt.Sprint(e.Context["response"]), "watch this") {
		t.Fatalf("agent:end context = %v", e.Context)
	}
}

// SIGINT (here: the context) lets an in-flight turn finish and deliver,
// then the gateway exits 0. Every step waits on the event that proves the
// one before it happened: the turn has started (agent:start) before the stop,
// and the gateway has begun stopping with that turn still running
// (on_session_finalize, platform "gateway") before the model answers.
func TestGracefulShutdownFinishesTurns(t *testing.T) {
	fm := newFakeModel(t)
	g := cmdtest.Start(t, cmdtest.Options{Home: t.TempDir(), Env: fm.env()})
	events := g.Events(t)
	b, _ := json.Marshal(map[string]string{"chat_id": "c", "user_id": "u", "text": "slow goodbye"})
	pending := g.PostAsync(string(b), nil)
	cmdtest.WaitFor(t, events, "agent:start", 10*time.Second)

	stopped := make(chan int, 1)
	go func() { stopped <- g.Stop() }()
	if e := cmdtest.WaitFor(t, events, "on_session_finalize", 10*time.Second); e.Context["platform"] != "gateway" {
		t.Fatalf("on_session_finalize context = %v", e.Context)
	}
	select {
	case <-pending.Done():
		t.Fatal("the turn ended before the model answered")
	default:
	}
	close(fm.release)
	if _, r := pending.Wait(t); r.Status != "done" || len(r.Replies) != 1 {
		t.Fatalf("in-flight turn during shutdown: %+v", r)
	}
	if code := <-stopped; code != 0 {
		t.Fatalf("exit status %d", code)
	}
}
