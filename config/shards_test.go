package config

import (
	"os"
	"path/filepath"
	"testing"
)

// platforms.discord.shard_id and shard_count (or DISCORD_SHARD_ID and
// DISCORD_SHARD_COUNT) are read; a bad pair stops herald with an error
// naming where the offending value was set.
func TestDiscordShards(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		env        map[string]string
		id, count  int
		err        string
	}{
		{name: "unset"},
		{name: "file", file: "platforms:\n  discord:\n    shard_id: 2\n    shard_count: 3\n", id: 2, count: 3},
		{name: "environment", env: map[string]string{"DISCORD_SHARD_ID": "1", "DISCORD_SHARD_COUNT": "4"}, id: 1, count: 4},
		{name: "environment wins", file: "platforms:\n  discord:\n    shard_id: 0\n    shard_count: 2\n", env: map[string]string{"DISCORD_SHARD_ID": "1"}, id: 1, count: 2},
		{name: "one shard", file: "platforms:\n  discord:\n    shard_count: 1\n", count: 1},
		{name: "id not below count", file: "platforms:\n  discord:\n    shard_count: 2\n    shard_id: 2\n",
			err: "config.yaml:4:15: platforms.discord.shard_id: 2 is not below platforms.discord.shard_count 2 (want 0 <= shard_id < shard_count)"},
		{name: "negative id", file: "platforms:\n  discord:\n    shard_id: -1\n    shard_count: 2\n",
			err: "config.yaml:3:15: platforms.discord.shard_id: -1 is negative (want 0 <= shard_id < shard_count)"},
		{name: "id without count", file: "platforms:\n  discord:\n    shard_id: 1\n",
			err: "config.yaml:3:15: platforms.discord.shard_id: 1 needs platforms.discord.shard_count (want 0 <= shard_id < shard_count)"},
		{name: "zero count", file: "platforms:\n  discord:\n    shard_count: 0\n",
			err: "config.yaml:3:18: platforms.discord.shard_count: 0 is not a number of shards (1 or more)"},
		{name: "not a number in the file", file: "platforms:\n  discord:\n    shard_id: one\n",
			err: "config.yaml:3: cannot unmarshal !!str `one` into int"},
		{name: "not a number in the environment", env: map[string]string{"DISCORD_SHARD_COUNT": "two"},
			err: `environment (DISCORD_SHARD_COUNT): platforms.discord.shard_count: "two" is not a whole number`},
		{name: "environment id past the file's count", file: "platforms:\n  discord:\n    shard_count: 2\n", env: map[string]string{"DISCORD_SHARD_ID": "5"},
			err: "environment (DISCORD_SHARD_ID): platforms.discord.shard_id: 5 is not below platforms.discord.shard_count 2 (want 0 <= shard_id < shard_count)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, _, err := Load(home, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Load error = %v\nwant %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if dc := cfg.Platforms.Discord; dc.ShardID != tc.id || dc.ShardCount != tc.count {
				t.Errorf("shard %d of %d, want %d of %d", dc.ShardID, dc.ShardCount, tc.id, tc.count)
			}
		})
	}
	// Parse (no environment) checks the pair too
	if _, _, err := Parse([]byte("platforms:\n  discord:\n    shard_id: 3\n    shard_count: 3\n")); err == nil {
		t.Error("Parse took shard_id 3 of 3")
	}
}
