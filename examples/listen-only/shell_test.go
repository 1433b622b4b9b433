package listenonly_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldgw/herald/cmd/cmdtest"
)

// The same behaviour as a shell hook, for users who would rather not
// write Go.
func TestListenOnlyShellHook(t *testing.T) {
	script, _ := filepath.Abs("listen-only.py")
	home := t.TempDir()
	t.Setenv("HERALD_BOT_NAME", "herald")
	t.Setenv("HERALD_LISTEN_DIR", t.TempDir())
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("hooks:\n  pre_gateway_dispatch:\n    - command: "+script+"\n      env: [HERALD_BOT_NAME, HERALD_LISTEN_DIR]\n"), 0o600)
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Args: []string{"--accept-hooks"}})
	group := func(user, text string) cmdtest.Response {
		return g.Send(t, cmdtest.Message{ChatID: "team", ChatType: "group", UserID: user, UserName: user, Text: text})
	}
	if r := group("ann", "the deploy failed"); r.Status != "skipped" || len(r.Replies) != 0 {
		t.Fatalf("ambient message: %+v", r)
	}
	group("bob", "logs say disk full")
	r := group("ann", "@herald what happened?")
	if !strings.Contains(r.Text(), "ann: the deploy failed\nbob: logs say disk full\n@herald what happened?") {
		t.Fatalf("mention reply = %q", r.Text())
	}
	if r := g.Say(t, "dm", "hi"); !strings.Contains(r.Text(), "hi") {
		t.Fatalf("a DM must pass through: %+v", r)
	}
}
