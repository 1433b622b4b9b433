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
