package sessioncache_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/sessioncache"
	"github.com/heraldgw/herald/hooks"
)

func TestCacheLivesForTheFirstRun(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{sessioncache.Plugin}})
	r := g.Say(t, "s", "run: echo cached")
	log := g.WaitLog(t, "SESSION_DURATION", 5*time.Second)
	for _, want := range []string{"session=" + r.SessionID, "status=completed", "tool_calls=1", "platform=local", "model=echo"} {
		if !strings.Contains(log, want) {
			t.Fatalf("SESSION_DURATION line lacks %s:\n%s", want, log)
		}
	}
}
