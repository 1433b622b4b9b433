package toolmetrics_test

import (
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/toolmetrics"
	"github.com/heraldgw/herald/hooks"
)

func TestCountsCallsErrorsAndLatency(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{toolmetrics.Plugin}})
	g.Say(t, "m", "run: echo one")
	g.Say(t, "m", "run: sleep 0.05; echo two")
	g.WaitLog(t, "calls=2", 5*time.Second)
	s := toolmetrics.Snapshot()["terminal"]
	if s.Calls != 2 || len(s.LatencyMS) != 2 {
		t.Fatalf("stats = %+v", s)
	}
	if s.LatencyMS[1] < 40 {
		t.Fatalf("latency of a 50 ms command = %d ms", s.LatencyMS[1])
	}
}
