package cmd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald/cmd/cmdtest"
)

// One gateway process with all four platforms: Telegram, Discord and
// Slack against their fakes, and the local platform. Each answers a DM
// from an allowed user, and /healthz shows every platform connected.
func TestAllPlatformsInOneGateway(t *testing.T) {
	p := startPlatforms(t, t.TempDir(), "", nil)
	tg, dc, sl, g := p.tg, p.dc, p.sl, p.g
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	tg.DM(555, "ann", "hello telegram")
	dc.Inject(dc.DM(&discordgo.User{ID: "42", Username: "bob"}, "hello discord"))
	sl.DM("U123", "hello slack")
	local := g.Say(t, "l1", "hello local")

	calls, err := tg.WaitCalls(ctx, "sendMessage", 1)
	if err != nil || !strings.Contains(calls[0].Text, "hello telegram") {
		t.Fatalf("telegram: %+v %v", calls, err)
	}
	sent, err := dc.WaitSent(ctx, 1)
	if err != nil || !strings.Contains(sent[0].Content, "hello discord") {
		t.Fatalf("discord: %+v %v", sent, err)
	}
	posts, err := sl.WaitPosts(ctx, 1)
	if err != nil || !strings.Contains(posts[0].Text, "hello slack") {
		t.Fatalf("slack: %+v %v", posts, err)
	}
	if !strings.Contains(local.Text(), "hello local") {
		t.Fatalf("local: %q", local.Text())
	}
	// no token reaches the log
	log := g.Log()
	for _, secret := range []string{tg.Token(), "discord-test-token-0123456789", "xoxb-test-bot-token-0123456789", "xapp-test-app-token-0123456789"} {
		if strings.Contains(log, secret) {
			t.Fatalf("a platform token is in gateway.log")
		}
	}
}

func waitHealth(t *testing.T, g *cmdtest.Gateway, ctx context.Context, platforms ...string) {
	t.Helper()
	want := map[string]string{}
	for _, p := range platforms {
		want[p] = "connected"
	}
	waitHealthStates(t, g, ctx, want)
}
