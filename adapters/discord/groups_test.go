package discord_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters/discord/discordtest"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
)

// Group manners through discordgo: a member with an allowed role is let
// in (the adapter puts the member's roles on the message), one without
// is not; /status@otherbot is another bot's and gets no answer, while
// /status@herald (this bot's name) is herald's; the answer to a guild
// message quotes it (reply_to_mode first).
func TestGroupMannersThroughGateway(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	startGateway(t, srv, agent.Echo{}, func(c *gateway.Config) {
		pa := c.Auth[herald.PlatformDiscord]
		pa.GroupManners = gateway.GroupManners{AllowedRoles: []string{"r-ops"}, ReplyToMode: "first"}
		c.Auth[herald.PlatformDiscord] = pa
	})
	bob := &discordgo.User{ID: "43", Username: "bob"}
	carol := &discordgo.User{ID: "44", Username: "carol"}
	withRoles := func(m *discordgo.Message, roles ...string) *discordgo.Message {
		m.Member = &discordgo.Member{Roles: roles}
		return m
	}
	srv.Inject(withRoles(srv.Mention("g1", "c1", carol, "from carol"), "r-x"))
	srv.Inject(srv.GuildMessage("g1", "c1", alice, "/status@otherbot"))
	bobs := srv.Inject(withRoles(srv.Mention("g1", "c1", bob, "from bob"), "r-x", "r-ops"))
	srv.Inject(srv.GuildMessage("g1", "c1", alice, "/status@"+discordtest.BotName))
	if _, err := srv.WaitSent(waitCtx(t), 2); err != nil {
		t.Fatal(err)
	}
	// one channel's messages are handled in order: carol's and the
	// other bot's command came before bob's, which is answered
	var texts []string
	for _, m := range srv.Sent() {
		if m.ChannelID != "c1" {
			t.Errorf("sent to %s: %q", m.ChannelID, m.Content)
			continue
		}
		texts = append(texts, m.Content)
		if m.Content == agent.EchoPrefix+"from bob" && m.ReplyTo != bobs {
			t.Errorf("the answer to bob quotes %q, want %q", m.ReplyTo, bobs)
		}
	}
	slices.Sort(texts)
	if len(texts) != 2 || texts[1] != agent.EchoPrefix+"from bob" || !strings.HasPrefix(texts[0], "Session: ") {
		t.Fatalf("sent in c1: %q", texts)
	}
}
