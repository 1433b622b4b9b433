package listenonly_test

import (
	"strings"
	"testing"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/examples/listen-only"
	"github.com/heraldgw/herald/gateway/gatewaytest"
	"github.com/heraldgw/herald/hooks"
)

func TestBufferThenMention(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{Plugins: []hooks.Plugin{listenonly.New("herald")}})
	for _, m := range []gatewaytest.Message{
		{Chat: "g1", ChatType: "group", User: "u1", UserName: "ann", Text: "lunch at noon?"},
		{Chat: "g1", ChatType: "group", User: "u2", UserName: "bob", Text: "make it one"},
	} {
		if r := g.Post(t, m); r.Status != "skipped" || len(r.Replies) != 0 {
			t.Fatalf("ambient %q: %+v", m.Text, r)
		}
	}
	r := g.Post(t, gatewaytest.Message{Chat: "g1", ChatType: "group", User: "u1", UserName: "ann", Text: "@herald what did we agree?"})
	want := agent.EchoPrefix + "Earlier in this chat:\nann: lunch at noon?\nbob: make it one\n\n@herald what did we agree?"
	if r.Status != "done" || r.Text() != want {
		t.Fatalf("mention answered %q", r.Text())
	}
	// the buffer was used up
	r = g.Post(t, gatewaytest.Message{Chat: "g1", ChatType: "group", User: "u1", Text: "@herald again", Mentioned: ptr(true)})
	if r.Text() != agent.EchoPrefix+"@herald again" {
		t.Fatalf("second mention %q", r.Text())
	}
	// DMs are untouched
	if r := g.Post(t, gatewaytest.Message{Chat: "d1", User: "u1", Text: "hi"}); !strings.HasSuffix(r.Text(), "hi") {
		t.Fatalf("dm %q", r.Text())
	}
}

func ptr[T any](v T) *T { return &v }
