package config

import (
	"slices"
	"testing"
)

func TestDiscordCommandGuilds(t *testing.T) {
	cfg, warns, err := Parse([]byte("platforms:\n  discord:\n    command_guilds: [\"111\", 222]\n"))
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse = %v, %v", warns, err)
	}
	if got := cfg.Platforms.Discord.CommandGuilds; !slices.Equal(got, []string{"111", "222"}) {
		t.Errorf("command_guilds = %v, want [111 222]", got)
	}
	cfg, _, _ = Parse(nil)
	if len(cfg.Platforms.Discord.CommandGuilds) != 0 {
		t.Error("slash commands are registered per guild by default")
	}
}
