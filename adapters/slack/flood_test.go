package slack_test

import (
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/slack"
)

// The gateway paces Slack channels at one message a second.
func TestPace(t *testing.T) {
	var a adapters.Adapter = slack.New(slack.Config{BotToken: "xoxb-test"})
	p, ok := a.(adapters.Pacer)
	if !ok {
		t.Fatal("the Slack adapter declares no pace")
	}
	if got := p.Pace(herald.Target{Platform: herald.PlatformSlack, ChatID: "C1"}); got != (adapters.Pace{Every: time.Second}) {
		t.Fatalf("pace %+v", got)
	}
}

// Delete removes a sent message with chat.delete.
func TestDelete(t *testing.T) {
	srv := newFake(t)
	a := newAdapter(srv)
	to := herald.Target{Platform: herald.PlatformSlack, ChatID: "C1"}
	sent, err := a.Send(ctxT(t), to, adapters.Outgoing{Text: "preview"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctxT(t), to, sent.MessageID); err != nil {
		t.Fatal(err)
	}
	posts := srv.Posts()
	if len(posts) != 2 || posts[1].Method != "chat.delete" || posts[1].Channel != "C1" || posts[1].TS != sent.MessageID {
		t.Fatalf("posts %+v", posts)
	}
}
