package config

import "testing"

func TestSlackReactions(t *testing.T) {
	cfg, warns, err := Parse([]byte("platforms:\n  slack:\n    reactions: true\n"))
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse = %v, %v", warns, err)
	}
	if !On(cfg.Platforms.Slack.Reactions, false) {
		t.Error("platforms.slack.reactions: true did not turn processing reactions on")
	}
	cfg, _, _ = Parse(nil)
	if On(cfg.Platforms.Slack.Reactions, false) {
		t.Error("processing reactions are on by default")
	}
}

func TestSlackSlashReplies(t *testing.T) {
	cfg, warns, err := Parse([]byte("platforms:\n  slack:\n    slash_replies: ephemeral\n"))
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse = %v, %v", warns, err)
	}
	if got := cfg.Platforms.Slack.SlashReplies; got != "ephemeral" {
		t.Errorf("platforms.slack.slash_replies = %q, want ephemeral", got)
	}
}
