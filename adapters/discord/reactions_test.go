package discord_test

import (
	"context"
	"errors"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/discord"
	"github.com/heraldgw/herald/adapters/discord/discordtest"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
)

// downModel fails every completion.
type downModel struct{}

func (downModel) Complete(context.Context, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return openai.ChatCompletionResponse{}, errors.New("model down")
}

// withReactions swaps the gateway's discord adapter for one with
// processing reactions on.
func withReactions(srv *discordtest.Server) func(*gateway.Config) {
	return func(c *gateway.Config) {
		c.Adapters = []adapters.Adapter{discord.New(discord.Config{Token: "tok", APIBase: srv.APIBase(), Reactions: true})}
	}
}

func TestReactionsWhileWorkingThenDone(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	startGateway(t, srv, agent.Echo{}, withReactions(srv))
	id := srv.Inject(srv.DM(alice, "react to me"))
	got, err := srv.WaitReactions(waitCtx(t), 3)
	if err != nil {
		t.Fatalf("reactions %+v: %v", got, err)
	}
	want := []discordtest.Reaction{
		{Op: "add", ChannelID: "dm-42", MessageID: id, Emoji: discord.WorkingReaction},
		{Op: "remove", ChannelID: "dm-42", MessageID: id, Emoji: discord.WorkingReaction},
		{Op: "add", ChannelID: "dm-42", MessageID: id, Emoji: discord.DoneReaction},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reaction %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	// the done reaction comes after the reply
	if n := len(srv.Sent()); n != 1 {
		t.Errorf("replies = %d, want 1", n)
	}
}

func TestReactionsFailedTurn(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	startGateway(t, srv, downModel{}, withReactions(srv))
	srv.Inject(srv.DM(alice, "this will fail"))
	got, err := srv.WaitReactions(waitCtx(t), 3)
	if err != nil {
		t.Fatalf("reactions %+v: %v", got, err)
	}
	if got[0].Emoji != discord.WorkingReaction || got[1].Op != "remove" || got[2].Op != "add" || got[2].Emoji != discord.FailedReaction {
		t.Errorf("reactions = %+v, want 👀, its removal, then %s", got, discord.FailedReaction)
	}
}

func TestReactionsOffByDefault(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	t.Run("answer", func(t *testing.T) {
		startGateway(t, srv, agent.Echo{})
		ask(t, srv, alice, "no reactions please", 1)
	}) // the gateway has stopped: every receipt resolved
	if got := srv.Reactions(); len(got) != 0 {
		t.Errorf("reactions with reactions off: %+v", got)
	}
}

func TestReactionFailureKeepsTheReply(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close)
	srv.FailReactions(10)
	startGateway(t, srv, agent.Echo{}, withReactions(srv))
	ask(t, srv, alice, "still answered", 1)
	if got, err := srv.WaitReactions(waitCtx(t), 3); err != nil {
		t.Fatalf("reaction attempts %+v: %v", got, err)
	}
	if got := replies(srv, "dm-42"); len(got) != 1 || got[0] != agent.EchoPrefix+"still answered" {
		t.Errorf("replies = %q", got)
	}
}
