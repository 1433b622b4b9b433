package takeover_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/sessions"
)

// The same behaviour as a shell hook, with no Go: silent while taken
// over, customer messages still in the transcript.
func TestTakeoverShellHook(t *testing.T) {
	script, _ := filepath.Abs("takeover.py")
	home := t.TempDir()
	t.Setenv("HERALD_OWNERS", "local:owner")
	t.Setenv("HERALD_TAKEOVER_DIR", t.TempDir())
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("hooks:\n  pre_gateway_dispatch:\n    - command: "+script+"\n      env: [HERALD_OWNERS, HERALD_TAKEOVER_DIR]\n"), 0o600)
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Args: []string{"--accept-hooks"}})
	say := func(user, text string) cmdtest.Response {
		return g.Send(t, cmdtest.Message{ChatID: "shop", ChatType: "dm", UserID: user, Text: text})
	}
	if r := say("customer", "hello?"); r.Status != "done" || len(r.Replies) != 1 {
		t.Fatalf("before takeover: %+v", r)
	}
	say("owner", "/takeover")
	r := say("customer", "is my order late?")
	if r.Status != "skipped" || len(r.Replies) != 0 {
		t.Fatalf("during takeover the bot must be silent: %+v", r)
	}
	say("owner", "/handback")
	after := say("customer", "thanks")
	if after.Status != "done" || len(after.Replies) != 1 {
		t.Fatalf("after handback: %+v", after)
	}
	g.Stop()
	st, err := sessions.Open(filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs, _ := st.Messages(context.Background(), after.SessionID, 0)
	found := false
	for _, m := range msgs {
		if m.Role == "user" && m.Content == "is my order late?" {
			found = true
		}
	}
	if !found {
		t.Fatalf("the customer's message during takeover was not recorded: %+v", msgs)
	}
}
