package cmd_test

import (
	"context"
	"encoding/json"
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

// DISCORD_SHARD_ID and DISCORD_SHARD_COUNT make the gateway's Discord
// connection that shard; a shard outside the count stops herald, naming
// config.yaml's line.
func TestDiscordShardConfig(t *testing.T) {
	home := t.TempDir()
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	cfg := "platforms:\n  discord:\n    api_base: " + srv.APIBase() + "\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: map[string]string{
		"DISCORD_BOT_TOKEN": "discord-test-token-0123456789", "DISCORD_SHARD_ID": "1", "DISCORD_SHARD_COUNT": "2",
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitReady(ctx, 1); err != nil {
		t.Fatalf("no IDENTIFY: %v\n%s", err, g.Log())
	}
	var ident struct {
		Shard []int `json:"shard"`
	}
	json.Unmarshal(srv.LastIdentify(), &ident)
	if len(ident.Shard) != 2 || ident.Shard[0] != 1 || ident.Shard[1] != 2 {
		t.Errorf("IDENTIFY shard = %v, want [1 2]", ident.Shard)
	}

	bad := writeHome(t, map[string]string{"config.yaml": "platforms:\n  discord:\n    shard_count: 2\n    shard_id: 2\n"})
	code, out, errw := configCLI(t, bad, nil, "sessions", "list")
	want := "herald: config.yaml:4:15: platforms.discord.shard_id: 2 is not below platforms.discord.shard_count 2 (want 0 <= shard_id < shard_count)\n"
	if code != 2 || out != "" || errw != want {
		t.Errorf("exit %d, want 2 and\n%s\ngot:\n%s%s", code, want, out, errw)
	}
}
