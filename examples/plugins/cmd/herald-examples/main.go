// Command herald-examples is herald with every example plugin compiled in,
// each switched on by name in HERALD_EXAMPLES (a comma list, or "all"):
//
//	HERALD_EXAMPLES=tool-audit,guardrails go run ./examples/plugins/cmd/herald-examples gateway
//
// It is also the pattern for your own herald: a few lines of main that
// pass your plugins to cmd.Main.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/heraldgw/herald/cmd"
	denydms "github.com/heraldgw/herald/examples/deny-unauthorized-dms"
	"github.com/heraldgw/herald/examples/listen-only"
	"github.com/heraldgw/herald/examples/plugins/approvalnotify"
	"github.com/heraldgw/herald/examples/plugins/dangerwarn"
	"github.com/heraldgw/herald/examples/plugins/guardrails"
	"github.com/heraldgw/herald/examples/plugins/memory"
	"github.com/heraldgw/herald/examples/plugins/orchestration"
	"github.com/heraldgw/herald/examples/plugins/redactsecrets"
	"github.com/heraldgw/herald/examples/plugins/responselength"
	"github.com/heraldgw/herald/examples/plugins/sessioncache"
	"github.com/heraldgw/herald/examples/plugins/summarizefind"
	"github.com/heraldgw/herald/examples/plugins/textstyle"
	"github.com/heraldgw/herald/examples/plugins/toolaudit"
	"github.com/heraldgw/herald/examples/plugins/toolmetrics"
	"github.com/heraldgw/herald/examples/takeover"
	"github.com/heraldgw/herald/hooks"
)

var all = []hooks.Plugin{
	toolaudit.Plugin, dangerwarn.Plugin, toolmetrics.Plugin, guardrails.Plugin, memory.Plugin,
	responselength.Plugin, sessioncache.Plugin, orchestration.Plugin, approvalnotify.Plugin,
	redactsecrets.Plugin, summarizefind.Plugin, textstyle.Plugin,
}

// list reads a comma list from the environment.
func list(name string) []string {
	var out []string
	for _, v := range strings.Split(os.Getenv(name), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func main() {
	// the gateway examples take their settings from the environment:
	// HERALD_BOT_NAME (listen-only), HERALD_OWNERS and
	// HERALD_APPROVED_USERS ("platform:user" lists)
	all = append(all, listenonly.New(os.Getenv("HERALD_BOT_NAME")), takeover.New(list("HERALD_OWNERS")...), denydms.New(list("HERALD_APPROVED_USERS")...))
	want := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("HERALD_EXAMPLES"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var on []hooks.Plugin
	var names []string
	for _, p := range all {
		names = append(names, p.Name)
		if want["all"] || want[p.Name] {
			on = append(on, p)
			delete(want, p.Name)
		}
	}
	delete(want, "all")
	for n := range want {
		fmt.Fprintf(os.Stderr, "herald-examples: no example plugin %q (have: %s)\n", n, strings.Join(names, ", "))
		os.Exit(2)
	}
	os.Exit(cmd.Main(context.Background(), os.Args[1:], cmd.WithPlugins(on...), cmd.WithSignals()))
}
