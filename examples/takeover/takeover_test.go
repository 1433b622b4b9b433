package takeover_test

import (
	"slices"
	"testing"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/examples/takeover"
	"github.com/heraldgw/herald/gateway/gatewaytest"
	"github.com/heraldgw/herald/hooks"
)

func TestTakeoverAndHandback(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{Plugins: []hooks.Plugin{takeover.New("local:boss")}})
	say := func(user, text string) gatewaytest.Response {
		return g.Post(t, gatewaytest.Message{Chat: "shop", User: user, Text: text})
	}
	if r := say("cust", "hello?"); r.Text() != agent.EchoPrefix+"hello?" {
		t.Fatalf("before takeover: %q", r.Text())
	}
	if r := say("cust", "/takeover"); r.Text() != takeover.NotOwnerText {
		t.Fatalf("customer /takeover: %q", r.Text())
	}
	if r := say("boss", "/takeover"); r.Text() != takeover.TakenText {
		t.Fatalf("owner /takeover: %q", r.Text())
	}
	if r := say("cust", "my order is late"); r.Status != "skipped" || len(r.Replies) != 0 {
		t.Fatalf("during takeover the bot answered: %+v", r)
	}
	if r := say("boss", "/handback"); r.Text() != takeover.HandbackText {
		t.Fatalf("/handback: %q", r.Text())
	}
	if r := say("cust", "thanks"); r.Text() != agent.EchoPrefix+"thanks" {
		t.Fatalf("after handback: %q", r.Text())
	}
	tr := g.Transcript(t, "shop", "dm", "cust")
	want := []string{"user: hello?", "assistant: " + agent.EchoPrefix + "hello?", "user: my order is late", "user: thanks", "assistant: " + agent.EchoPrefix + "thanks"}
	if !slices.Equal(tr, want) {
		t.Fatalf("transcript\n got  %q\n want %q", tr, want)
	}
}
