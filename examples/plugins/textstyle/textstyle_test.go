package textstyle_test

import (
	"strings"
	"testing"

	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/textstyle"
	"github.com/heraldgw/herald/hooks"
)

func TestOptInStyle(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{textstyle.Plugin}})
	if r := g.Say(t, "t", "hello!"); strings.Contains(r.Text(), "Tartar") {
		t.Fatalf("style applied while off: %q", r.Text())
	}
	t.Setenv("HERALD_SPONGEBOB_MODE", "on")
	if r := g.Say(t, "t", "hello!"); !strings.Contains(r.Text(), "hello!! Tartar sauce!") {
		t.Fatalf("style not applied: %q", r.Text())
	}
}
