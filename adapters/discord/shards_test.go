package discord_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/discord"
	"github.com/heraldgw/herald/adapters/discord/discordtest"
)

// ShardID and ShardCount reach the IDENTIFY as "shard": [id, count].
// Without them, or with one shard, discordgo sends no shard at all (its
// Session defaults to shard 0 of 1 and adds the field only for more
// than one), which Discord reads as the one connection for everything.
func TestShardIdentify(t *testing.T) {
	for _, tc := range []struct {
		name      string
		id, count int
		want      []int // nil: no "shard" key
	}{
		{name: "unset"},
		{name: "one shard", count: 1},
		{name: "second of three", id: 1, count: 3, want: []int{1, 3}},
		{name: "first of two", id: 0, count: 2, want: []int{0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := discordtest.New()
			t.Cleanup(srv.Close)
			rec := &recorder{ch: make(chan herald.Message, 1)}
			run(t, srv, discord.Config{ShardID: tc.id, ShardCount: tc.count}, rec)
			var ident map[string]json.RawMessage
			if err := json.Unmarshal(srv.LastIdentify(), &ident); err != nil {
				t.Fatal(err)
			}
			raw, ok := ident["shard"]
			if tc.want == nil {
				if ok {
					t.Errorf("IDENTIFY carries shard %s, want none", raw)
				}
				return
			}
			var got []int
			json.Unmarshal(raw, &got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("IDENTIFY shard = %s, want %v", raw, tc.want)
			}
		})
	}
}

// A shard outside 0 <= id < count stops Run with a fatal error before
// it connects (discordgo would refuse each Open alike, retried forever).
func TestShardOutOfRange(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	for _, c := range [][2]int{{2, 2}, {-1, 2}} {
		a := discord.New(discord.Config{Token: "tok", APIBase: srv.APIBase(), ShardID: c[0], ShardCount: c[1]})
		err := a.Run(context.Background(), &recorder{ch: make(chan herald.Message, 1)})
		if !adapters.IsFatal(err) || !strings.Contains(err.Error(), "shard") {
			t.Errorf("shard %d of %d: Run = %v, want a fatal error naming the shard", c[0], c[1], err)
		}
	}
	if n := srv.Identifies(); n != 0 {
		t.Errorf("%d IDENTIFYs, want none", n)
	}
}
