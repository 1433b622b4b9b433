package redactsecrets_test

import (
	"strings"
	"testing"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/redactsecrets"
	"github.com/heraldgw/herald/hooks"
)

func TestMasksTokensInToolResults(t *testing.T) {
	const tok = "acme_0123456789abcdefghijklmnop"
	g := cmdtest.Start(t, cmdtest.Options{})
	if r := g.Say(t, "x", "run: echo "+tok); !strings.Contains(r.Text(), tok) {
		t.Fatalf("without the plugin the model sees the token (herald does not know this shape): %q", r.Text())
	}
	g.Stop()
	g = cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{redactsecrets.Plugin}})
	r := g.Say(t, "x", "run: echo "+tok)
	if strings.Contains(r.Text(), tok) || !strings.Contains(r.Text(), "[REDACTED]") {
		t.Fatalf("the model saw the token: %q", r.Text())
	}
}
