package cmd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald/adapters/matrix/matrixtest"
	"github.com/heraldgw/herald/adapters/teams/teamstest"
	"github.com/heraldgw/herald/adapters/whatsapp"
	"github.com/heraldgw/herald/adapters/whatsapp/whatsapptest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// One gateway process with every platform: Telegram, Discord, Slack,
// WhatsApp, Teams and Matrix against their fakes (WhatsApp and Teams on
// the inbound listener), and the local platform. Each answers a DM from an allowed
// user, and no platform's secret reaches the log.
func TestAllPlatformsInOneGateway(t *testing.T) {
	p := startAllPlatforms(t, t.TempDir(), "", nil)
	tg, dc, sl, wa, tm, mx, g := p.tg, p.dc, p.sl, p.wa, p.tm, p.mx, p.g
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	tg.DM(555, "ann", "hello telegram")
	dc.Inject(dc.DM(&discordgo.User{ID: "42", Username: "bob"}, "hello discord"))
	sl.DM("U123", "hello slack")
	if _, err := wa.Webhook(p.inbound+whatsapp.WebhookPath).Send(ctx, whatsapptest.Text("15551230001", "Cy", "hello whatsapp")); err != nil {
		t.Fatal(err)
	}
	if code, _, err := tm.Post(ctx, p.inbound+"/api/messages", tm.DM("act-1", teamstest.User{ID: "29:dee", AAD: "aad-dee", Name: "Dee"}, "hello teams"), teamstest.Signing{}); err != nil || code != 200 {
		t.Fatalf("teams activity: %d %v", code, err)
	}
	mx.Say("!alldm:localhost", "@cy:localhost", matrixtest.Text("hello matrix"))
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
	was, err := wa.WaitSent(ctx, 1)
	if err != nil || was[0].To != "15551230001" || !strings.Contains(was[0].Text, "hello whatsapp") {
		t.Fatalf("whatsapp: %+v %v", was, err)
	}
	if _, err := tm.WaitText(ctx, "hello teams"); err != nil {
		t.Fatalf("teams: %v %+v", err, tm.Sent())
	}
	if _, err := mx.WaitFor(ctx, func(sent []matrixtest.Sent) bool {
		for _, s := range matrixtest.Visible(sent, "!alldm:localhost") {
			if strings.Contains(s.Text, "hello matrix") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatalf("matrix: %v %+v", err, mx.Sent())
	}
	if !strings.Contains(local.Text(), "hello local") {
		t.Fatalf("local: %q", local.Text())
	}
	// no token reaches the log
	log := g.Log()
	for _, secret := range []string{tg.Token(), "discord-test-token-0123456789", "xoxb-test-bot-token-0123456789", "xapp-test-app-token-0123456789",
		wa.Token(), wa.AppSecret(), tm.AppPassword(), mx.Token()} {
		if strings.Contains(log, secret) {
			t.Fatalf("a platform secret is in gateway.log")
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
