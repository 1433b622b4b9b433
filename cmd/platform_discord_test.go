package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/discord/discordtest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// platforms.discord.command_guilds registers the slash commands in those
// servers, not globally.
func TestDiscordCommandGuildsConfig(t *testing.T) {
	home := t.TempDir()
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	cfg := "platforms:\n  discord:\n    api_base: " + srv.APIBase() + "\n    command_guilds: [\"111\", \"222\"]\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: map[string]string{"DISCORD_BOT_TOKEN": "discord-test-token-0123456789"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sets, err := srv.WaitCommandSets(ctx, 2)
	if err != nil {
		t.Fatalf("command sets %+v: %v\n%s", sets, err, g.Log())
	}
	if sets[0].GuildID != "111" || sets[1].GuildID != "222" || len(sets[0].Commands) == 0 {
		t.Errorf("command sets = %+v, want the commands in 111 and 222", sets)
	}
}
