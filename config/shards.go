package config

// shards.go reads and checks Discord's sharding settings. A replica that
// starts with a bad shard would connect as the wrong shard, or as all of
// them, and answer servers another replica answers too: so a bad value
// stops herald at start, naming where it was set, instead of being
// replaced by a default as other out-of-range values are.

import (
	"fmt"
	"strconv"
	"strings"
)

const (
	shardIDKey    = "platforms.discord.shard_id"
	shardCountKey = "platforms.discord.shard_count"
)

// applyShardEnv reads DISCORD_SHARD_ID and DISCORD_SHARD_COUNT (get as in
// applyEnv); a value that is not a whole number is an error naming the
// variable.
func applyShardEnv(c *Config, get func(string) (string, Source)) error {
	for _, v := range []struct {
		name, key string
		dst       *int
	}{
		{"DISCORD_SHARD_ID", shardIDKey, &c.Platforms.Discord.ShardID},
		{"DISCORD_SHARD_COUNT", shardCountKey, &c.Platforms.Discord.ShardCount},
	} {
		s, src := get(v.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return src.error(fmt.Sprintf("%s: %q is not a whole number", v.key, s))
		}
		*v.dst = n
		c.setSource(v.key, src)
	}
	return nil
}

// checkShards wants 0 <= shard_id < shard_count, and shard_count set
// whenever shard_id is.
func checkShards(c *Config) error {
	dc := c.Platforms.Discord
	countSet := !c.Source(shardCountKey).IsDefault()
	switch {
	case countSet && dc.ShardCount < 1:
		return c.Source(shardCountKey).error(fmt.Sprintf("%s: %d is not a number of shards (1 or more)", shardCountKey, dc.ShardCount))
	case dc.ShardID < 0:
		return c.Source(shardIDKey).error(fmt.Sprintf("%s: %d is negative (want 0 <= shard_id < shard_count)", shardIDKey, dc.ShardID))
	case dc.ShardCount == 0 && dc.ShardID != 0:
		return c.Source(shardIDKey).error(fmt.Sprintf("%s: %d needs %s (want 0 <= shard_id < shard_count)", shardIDKey, dc.ShardID, shardCountKey))
	case dc.ShardCount > 0 && dc.ShardID >= dc.ShardCount:
		return c.Source(shardIDKey).error(fmt.Sprintf("%s: %d is not below %s %d (want 0 <= shard_id < shard_count)", shardIDKey, dc.ShardID, shardCountKey, dc.ShardCount))
	}
	return nil
}
