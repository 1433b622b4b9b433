package guardrails_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/guardrails"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// The echo model repeats the user message as the model received it, so
// the reply shows the injected policy; the stored transcript does not.
func TestPolicyReachesTheModelOnly(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{guardrails.Plugin}})
	r := g.Say(t, "g", "tidy my disk")
	if !strings.Contains(r.Text(), "tidy my disk\n\n"+guardrails.Policy) {
		t.Fatalf("the model did not see the policy after the user's words: %q", r.Text())
	}
	g.Stop()
	st, err := sessions.Open(filepath.Join(g.Home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs, err := st.Messages(context.Background(), r.SessionID, 0)
	if err != nil || len(msgs) == 0 {
		t.Fatal(msgs, err)
	}
	if msgs[0].Role != "user" || msgs[0].Content != "tidy my disk" {
		t.Fatalf("stored user message = %+v (the policy must not be stored)", msgs[0])
	}
}
