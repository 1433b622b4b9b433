package responselength_test

import (
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/responselength"
	"github.com/heraldgw/herald/hooks"
)

func TestLogsResponseLength(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{responselength.Plugin}})
	r := g.Say(t, "r", "12345")
	// "[echo model — offline] 12345" is 28 characters
	if r.Text() != "[echo model — offline] 12345" {
		t.Fatalf("reply = %q", r.Text())
	}
	log := g.WaitLog(t, "msg=RESPONSE", 5*time.Second)
	if !strings.Contains(log, "session="+r.SessionID+" model=echo chars=28") {
		t.Fatalf("RESPONSE line lacks session, model or length:\n%s", log)
	}
}
