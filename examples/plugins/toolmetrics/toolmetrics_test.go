package toolmetrics_test

import (
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/toolmetrics"
	"github.com/heraldgw/herald/hooks"
)

// The figures are process-wide (one herald runs one set of plugins), so
// the test measures what its own calls add.
func TestCountsCallsErrorsAndLatency(t *testing.T) {
	before := toolmetrics.Snapshot()["terminal"]
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{toolmetrics.Plugin}})
	g.Say(t, "m", "run: echo one")
	g.Say(t, "m", "run: sleep 0.05; echo two")
	var s toolmetrics.Stats
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s = toolmetrics.Snapshot()["terminal"]; s.Calls == before.Calls+2 {
			break
		}
	}
	if s.Calls != before.Calls+2 || len(s.LatencyMS) != len(before.LatencyMS)+2 || s.Errors != before.Errors {
		t.Fatalf("stats = %+v, before = %+v", s, before)
	}
	if last := s.LatencyMS[len(s.LatencyMS)-1]; last < 40 {
		t.Fatalf("latency of a 50 ms command = %d ms", last)
	}
	g.WaitLog(t, "TOOL_METRICS", 5*time.Second)
}
