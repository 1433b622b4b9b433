package cmd_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// TestGatewayEchoRunsTerminal: the offline echo model's demo phrase calls
// the terminal tool, which runs in agent.workdir.
func TestGatewayEchoRunsTerminal(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(work, "marker.txt"), []byte("found-the-workdir\n"), 0o644)
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+work+"\n"), 0o600)
	g := cmdtest.Start(t, cmdtest.Options{Home: home})
	r := g.Say(t, "c1", "run: cat marker.txt")
	if r.Status != "done" || len(r.Replies) == 0 || !strings.Contains(r.Replies[len(r.Replies)-1].Text, "found-the-workdir") {
		t.Fatalf("reply = %+v", r)
	}
}

func TestBadWorkdirFailsAtStart(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+filepath.Join(home, "missing")+"\n"), 0o600)
	code, stderr := chatOnce(home)
	if code == 0 || !strings.Contains(stderr, "agent.workdir") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// chatOnce runs "herald chat -q hi" with home as HERALD_HOME.
func chatOnce(home string) (int, string) {
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), []string{"chat", "-q", "hi"}, cmd.WithStdio(strings.NewReader(""), &out, &errw),
		cmd.WithGetenv(func(k string) string {
			if k == "HERALD_HOME" {
				return home
			}
			return ""
		}))
	return code, errw.String()
}

// TestTerminalCannotReachGatewaySecrets replays "cat /proc/$PPID/environ
// | base64" and reading local.token and .env through a running gateway,
// each turned around (rev) so that redaction, which knows the values,
// cannot hide a leak: the process environment's secret, the local token
// and the .env value stay out of the reply.
func TestTerminalCannotReachGatewaySecrets(t *testing.T) {
	const canary = "canary-secret-value-5be1d2"
	t.Setenv("HERALD_CANARY_TOKEN", canary)
	home, work := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+work+"\n"), 0o600)
	os.WriteFile(filepath.Join(home, ".env"), []byte("SOME_SERVICE_PASSWORD=dotenv-value-0c4e77\n"), 0o600)
	g := cmdtest.Start(t, cmdtest.Options{Home: home})
	r := g.Say(t, "c1", "run: tr '\\0' '\\n' < /proc/$PPID/environ | rev; cat /proc/$PPID/environ | base64 -w0 | rev; rev "+home+"/local.token "+home+"/.env; echo end-of-attack")
	text := ""
	for _, rep := range r.Replies {
		text += rep.Text
	}
	if !strings.Contains(text, "end-of-attack") {
		t.Fatalf("the command did not run: %+v", r)
	}
	// /proc/<pid>/environ is the environment the process started with
	// (t.Setenv does not change it): any entry of it proves a read
	initial := longestEntry("HERALD_CANARY_TOKEN")
	for _, leak := range []string{canary, g.Token, "dotenv-value-0c4e77", initial} {
		if strings.Contains(text, reverse(leak)) {
			t.Errorf("reply holds %q turned around: %s", leak, text)
		}
	}
}

// longestEntry is the longest entry of the environment this process
// started with (that /proc/<pid>/environ shows): os.Environ, less what
// tests set since.
func longestEntry(set ...string) string {
	long := ""
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if len(kv) > len(long) && !slices.Contains(set, k) {
			long = kv
		}
	}
	return long
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// TestGatewaySaysWhenUnsandboxed: with tools.terminal.sandbox: none the
// gateway says so at start, once, at warn; a mode that is not available
// fails the start naming the setting.
func TestGatewaySaysWhenUnsandboxed(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+work+"\ntools:\n  terminal:\n    sandbox: none\n"), 0o600)
	g := cmdtest.Start(t, cmdtest.Options{Home: home})
	g.Say(t, "c1", "run: true")
	g.Say(t, "c1", "run: true")
	log := g.Log()
	if n := strings.Count(log, "tools.terminal.sandbox is none"); n != 1 || !strings.Contains(log, "level=WARN msg=\"tools.terminal.sandbox is none") {
		t.Errorf("warning %d times in:\n%s", n, log)
	}
}

func TestUnavailableSandboxFailsStart(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+work+"\ntools:\n  terminal:\n    sandbox: bubblewrap\n"), 0o600)
	code, stderr := chatOnce(home)
	if _, err := exec.LookPath("bwrap"); err == nil {
		if code != 0 {
			t.Fatalf("bwrap installed, yet exit %d: %s", code, stderr)
		}
		return
	}
	if code == 0 || !strings.Contains(stderr, "tools.terminal.sandbox: bubblewrap: bwrap is not installed") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// TestTerminalCannotInstallHook replays the hook install through the
// terminal tool: under the default sandbox nothing appears in the home's
// hooks/, config.yaml is unchanged and cannot be hard-linked out.
func TestTerminalCannotInstallHook(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	cfg := "agent:\n  workdir: " + work + "\n"
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600)
	g := cmdtest.Start(t, cmdtest.Options{Home: home})
	if strings.Contains(g.Log(), "without a sandbox") {
		t.Skip("no sandbox on this kernel")
	}
	r := g.Say(t, "c1", "run: mkdir -p "+home+"/hooks/zz; printf 'name: zz\\nevents: [pre_gateway_dispatch]\\n' > "+home+"/hooks/zz/HOOK.yaml; echo 'hooks_auto_accept: true' >> "+home+"/config.yaml; ln "+home+"/config.yaml cfg; echo end-of-attack")
	if len(r.Replies) == 0 || !strings.Contains(r.Replies[len(r.Replies)-1].Text, "end-of-attack") {
		t.Fatalf("the command did not run: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(home, "hooks", "zz")); err == nil {
		t.Error("a hook directory was made in the home")
	}
	if b, _ := os.ReadFile(filepath.Join(home, "config.yaml")); string(b) != cfg {
		t.Errorf("config.yaml now %q", b)
	}
	if _, err := os.Stat(filepath.Join(work, "cfg")); err == nil {
		t.Error("config.yaml was hard-linked into the working directory")
	}
}
