package toolaudit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/toolaudit"
	"github.com/heraldgw/herald/hooks"
)

func TestAuditLogsToolCalls(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{toolaudit.Plugin}})
	r := g.Say(t, "a", "run: echo audited")
	if !strings.Contains(r.Text(), "audited") {
		t.Fatalf("reply = %q", r.Text())
	}
	log := g.WaitLog(t, "TOOL_CALL", 5*time.Second)
	if !strings.Contains(log, "tool=terminal") || !strings.Contains(log, `echo audited`) {
		t.Fatalf("audit line missing fields:\n%s", log)
	}
}
