package dangerwarn_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/dangerwarn"
	"github.com/heraldgw/herald/hooks"
)

func TestWarnsBeforeTerminal(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{dangerwarn.Plugin}})
	g.Say(t, "a", "plain text uses no tool")
	if strings.Contains(g.Log(), "dangerous tool") {
		t.Fatal("warned without a tool call")
	}
	r := g.Say(t, "a", "run: echo still runs")
	if !strings.Contains(r.Text(), "still runs") {
		t.Fatalf("the warning must not block: %q", r.Text())
	}
	g.WaitLog(t, "Executing potentially dangerous tool: terminal", 5*time.Second)
}
