package config

import "testing"

func TestTelegramAndDiscordReactions(t *testing.T) {
	cfg, warns, err := Parse([]byte("platforms:\n  telegram:\n    reactions: true\n  discord:\n    reactions: true\n"))
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse = %v, %v", warns, err)
	}
	if !On(cfg.Platforms.Telegram.Reactions, false) || !On(cfg.Platforms.Discord.Reactions, false) {
		t.Error("reactions: true did not turn processing reactions on")
	}
	cfg, _, _ = Parse(nil)
	if On(cfg.Platforms.Telegram.Reactions, false) || On(cfg.Platforms.Discord.Reactions, false) {
		t.Error("processing reactions are on by default")
	}
}
