package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/custom-binary/myplugin"
	"github.com/heraldgw/herald/hooks"
)

// The example builds into a real binary, which lists its compiled-in
// plugin and runs a chat turn in which the plugin blocks a command.
func TestBuildAndRun(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("the go command is needed to build the example")
	}
	bin := filepath.Join(t.TempDir(), "herald")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	home := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		c := exec.CommandContext(ctx, bin, append([]string{"--home", home}, args...)...)
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Run(); err != nil {
			t.Fatalf("herald %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	if out := run("hooks", "list"); !strings.Contains(out, "myplugin — refuses force-pushes") || !strings.Contains(out, "pre_tool_call, post_tool_call, on_session_end") ||
		!strings.Contains(out, "commands: /tool-calls") {
		t.Fatalf("hooks list:\n%s", out)
	}
	if out := run("chat", "-q", "run: rm -rf /"); !strings.Contains(out, myplugin.BlockMessage) {
		t.Fatalf("chat did not show the block:\n%s", out)
	}
}

// The way to test a plugin of your own: a whole gateway in the test, with
// the plugin compiled in, driven over its local HTTP API.
func TestPluginInAGateway(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{myplugin.Plugin}})
	r := g.Say(t, "c1", "run: git push --force origin main")
	if !strings.Contains(r.Text(), myplugin.BlockMessage) {
		t.Fatalf("reply %q", r.Text())
	}
	r = g.Say(t, "c1", "run: echo allowed")
	if strings.Contains(r.Text(), myplugin.BlockMessage) || !strings.Contains(r.Text(), "allowed") {
		t.Fatalf("reply %q", r.Text())
	}
	// the plugin's command: the allowed call ran (the refused one never did)
	if r = g.Say(t, "c1", "/tool-calls"); r.Text() != "1 tool calls in this conversation." {
		t.Fatalf("/tool-calls answered %q", r.Text())
	}
	if r = g.Say(t, "c1", "/help"); !strings.Contains(r.Text(), "/tool-calls — how many tool calls this conversation made") {
		t.Fatalf("/help: %q", r.Text())
	}
}

func TestRefused(t *testing.T) {
	for cmd, want := range map[string]bool{
		"git push --force origin main": true,
		"git push -f":                  true,
		"rm -rf /":                     true,
		"rm -rf /tmp/x":                false,
		"git push origin main":         false,
		"ls /":                         false,
	} {
		if got := myplugin.Refused.MatchString(cmd); got != want {
			t.Errorf("%q: refused=%v, want %v", cmd, got, want)
		}
	}
}
