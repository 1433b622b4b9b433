package cmd_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), []string{"chat", "-q", "hi"}, cmd.WithStdio(strings.NewReader(""), &out, &errw),
		cmd.WithGetenv(func(k string) string {
			if k == "HERALD_HOME" {
				return home
			}
			return ""
		}))
	if code == 0 || !strings.Contains(errw.String(), "agent.workdir") {
		t.Fatalf("exit %d, stderr %q", code, errw.String())
	}
}
