package cmd_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// runGateway runs herald gateway until ctx ends; done gets its exit status.
func runGateway(ctx context.Context, env map[string]string) (done chan int, out, errw *cmdtest.Buffer) {
	out, errw, done = &cmdtest.Buffer{}, &cmdtest.Buffer{}, make(chan int, 1)
	go func() {
		done <- cmd.Main(ctx, []string{"gateway"}, cmd.WithStdio(strings.NewReader(""), out, errw),
			cmd.WithGetenv(func(k string) string { return env[k] }))
	}()
	return done, out, errw
}

// gatewayExit runs herald gateway with env and returns its exit status and
// stderr, or fails the test if it is still running after 30 s (a bound for
// a failing test only: a gateway that exits does so at once).
func gatewayExit(t *testing.T, env map[string]string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, out, errw := runGateway(ctx, env)
	select {
	case code := <-done:
		return code, errw.String()
	case <-time.After(30 * time.Second):
		cancel()
		<-done
		t.Fatalf("the gateway kept running with no platform:\n%s%s", out.String(), errw.String())
	}
	return 0, ""
}

// A gateway whose only platform cannot start (its port is taken, or its
// address is not one) exits 1 with one line naming the platform and why.
func TestGatewayExitsWhenItsOnlyPlatformFails(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, tc := range []struct{ listen, why string }{
		{taken.Addr().String(), "address already in use"},
		{"not-an-address", "not-an-address"},
	} {
		t.Run(tc.listen, func(t *testing.T) {
			home := t.TempDir()
			code, errw := gatewayExit(t, map[string]string{"HERALD_HOME": home, "HERALD_LOCAL_LISTEN": tc.listen})
			lines := heraldLines(errw)
			if code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "platform local") || !strings.Contains(lines[0], tc.why) {
				t.Fatalf("exit %d, want 1 and one line naming local and %q:\n%s", code, tc.why, errw)
			}
		})
	}
}

// With several platforms, one that fails is one line on stderr and the
// others keep serving.
func TestGatewayKeepsServingTheOtherPlatforms(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tg := telegramtest.New(telegramtest.Options{MaxPoll: time.Second})
	defer tg.Close()
	home := t.TempDir()
	cfg := "platforms:\n  telegram:\n    api_endpoint: " + tg.Endpoint() + "\n    poll_timeout: 1\n    allowed_users: [\"*\"]\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HERALD_HOME": home, "HERALD_LOCAL_LISTEN": taken.Addr().String(), "TELEGRAM_BOT_TOKEN": tg.Token()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done, _, errw := runGateway(ctx, env)
	tg.DM(42, "ann", "still here?")
	if _, err := tg.WaitCalls(ctx, "sendMessage", 1); err != nil {
		t.Fatalf("telegram did not answer: %v\n%s", err, errw.String())
	}
	cancel()
	code := <-done
	failed := heraldLines(errw.String())
	if code != 0 || len(failed) != 1 || !strings.Contains(failed[0], "address already in use") {
		t.Fatalf("exit %d, want 0 and one line on local's failure:\n%s", code, errw.String())
	}
}

// heraldLines are herald's own lines in what it printed (not the log's).
func heraldLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "herald: ") {
			out = append(out, l)
		}
	}
	return out
}

// herald chat -q without a terminal denies a command that needs approval
// at once (no "Reply /approve" and no wait) and exits 1 saying why.
func TestChatWithoutATerminalDeniesApprovalsAtOnce(t *testing.T) {
	home := t.TempDir()
	code, out, errw := run(t, home, "", "chat", "-q", "run: rm -rf ./x")
	if code != 1 || strings.Contains(out, "/approve") || !strings.Contains(errw, "rm -rf ./x") || !strings.Contains(errw, "no terminal to ask on") {
		t.Fatalf("exit %d, want 1, no /approve prompt and a message on the missing terminal:\n%s\n%s", code, out, errw)
	}
}

// On a terminal, herald chat -q asks y/N; "n" denies and the command is
// not run.
func TestChatOnATerminalAsks(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	home := t.TempDir()
	marker := filepath.Join(home, "marker")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ptmx.Write([]byte("n\n")); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, ptmx) // the terminal's echo
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), []string{"--home", home, "chat", "-q", "run: rm -rf " + marker},
		cmd.WithStdio(tty, &out, &errw), cmd.WithGetenv(func(string) string { return "" }))
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the denied command ran: %v", err)
	}
	if code != 0 || !strings.Contains(out.String(), "Allow it?") || strings.Contains(out.String(), "/approve") {
		t.Fatalf("exit %d, want 0 after a y/N prompt:\n%s\n%s", code, out.String(), errw.String())
	}
}

// After a restart, /status names the session the next message resumes,
// not "(none yet)".
func TestStatusAfterARestartNamesTheStoredSession(t *testing.T) {
	home := t.TempDir()
	if code, out, errw := run(t, home, "", "chat", "-q", "remember me"); code != 0 {
		t.Fatalf("chat -q: %d %s%s", code, out, errw)
	}
	_, list, _ := run(t, home, "", "sessions", "list")
	rows := strings.Split(strings.TrimSpace(list), "\n")
	if len(rows) != 2 {
		t.Fatalf("want one session:\n%s", list)
	}
	id := strings.Fields(rows[1])[0]
	code, out, errw := run(t, home, "/status\n", "chat")
	if code != 0 || !strings.Contains(out, "Session: "+id+"\n") {
		t.Fatalf("/status after a restart: %d, want Session: %s\n%s%s", code, id, out, errw)
	}
}

// herald boot run without BOOT.md says so, naming the file, with a
// gateway running or not, and never as the gateway's error.
func TestBootRunWithoutAChecklist(t *testing.T) {
	home := t.TempDir()
	check := func(when string) {
		t.Helper()
		code, _, errw := cronCLI(t, home, "boot", "run")
		if code != 1 || !strings.Contains(errw, "no BOOT.md checklist") || !strings.Contains(errw, filepath.Join(home, "BOOT.md")) || strings.Contains(errw, "gateway:") {
			t.Fatalf("%s: exit %d, want 1 and a message naming BOOT.md, not the gateway:\n%s", when, code, errw)
		}
	}
	check("no gateway")
	cmdtest.Start(t, cmdtest.Options{Home: home})
	check("gateway running")
}

// herald sessions list prints the configuration's warnings, with file and
// line, as the other commands do.
func TestSessionsListWarnsAboutTheConfig(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("bogus_key: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errw := run(t, home, "", "sessions", "list")
	if code != 0 || !strings.Contains(out, "No sessions yet.") || !strings.Contains(errw, `config.yaml:1: unknown key "bogus_key"`) {
		t.Fatalf("sessions list: exit %d, want 0 and the warning on stderr:\n%s%s", code, out, errw)
	}
}
