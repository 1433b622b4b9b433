package telegram_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
)

// downModel fails every completion.
type downModel struct{}

func (downModel) Complete(context.Context, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return openai.ChatCompletionResponse{}, errors.New("model down")
}

// withReactions swaps the gateway's telegram adapter for one with
// processing reactions on.
func withReactions(srv *telegramtest.Server) func(*gateway.Config) {
	return func(c *gateway.Config) {
		c.Adapters = []adapters.Adapter{newAdapter(srv, func(tc *telegram.Config) {
			tc.Store, tc.Redactor, tc.Reactions = c.Store.(telegram.OffsetStore), c.Redactor, true
		})}
	}
}

func reactionsOn(t *testing.T, srv *telegramtest.Server, n int) []telegramtest.Call {
	t.Helper()
	calls, err := srv.WaitCalls(ctxT(t), "setMessageReaction", n)
	if err != nil {
		t.Fatalf("waiting for %d reactions: %v (got %+v)", n, err, srv.Calls("setMessageReaction"))
	}
	return calls
}

func TestReactionsWhileWorkingThenDone(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), agent.Echo{}, withReactions(srv))
	in := srv.DM(42, "alice", "react to me")
	calls := reactionsOn(t, srv, 2)
	want := []string{telegram.WorkingReaction, telegram.DoneReaction}
	for i, c := range calls {
		if c.ChatID != "42" || c.MessageID != strconv.Itoa(in.MessageID) || c.Reaction != want[i] {
			t.Errorf("reaction %d = %+v, want %s on message %d in chat 42", i, c, want[i], in.MessageID)
		}
	}
	// the done reaction comes after the reply
	if len(srv.Calls("sendMessage")) != 1 {
		t.Errorf("replies before the done reaction = %d, want 1", len(srv.Calls("sendMessage")))
	}
	if got := srv.Calls("setMessageReaction"); len(got) != 2 {
		t.Errorf("reaction calls = %d, want 2", len(got))
	}
}

func TestReactionsFailedTurn(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), downModel{}, withReactions(srv))
	srv.DM(42, "alice", "this will fail")
	calls := reactionsOn(t, srv, 2)
	if calls[0].Reaction != telegram.WorkingReaction || calls[1].Reaction != telegram.FailedReaction {
		t.Errorf("reactions = %q then %q, want %q then %q", calls[0].Reaction, calls[1].Reaction, telegram.WorkingReaction, telegram.FailedReaction)
	}
}

func TestReactionsOffByDefault(t *testing.T) {
	srv := newFake(t)
	g := startGateway(t, srv, t.TempDir(), agent.Echo{})
	srv.DM(42, "alice", "no reactions please")
	if _, err := srv.WaitCalls(ctxT(t), "sendMessage", 1); err != nil {
		t.Fatal(err)
	}
	g.stop() // every receipt resolved and followed up
	if got := srv.Calls("setMessageReaction"); len(got) != 0 {
		t.Errorf("reactions with reactions off: %+v", got)
	}
}

func TestReactionFailureKeepsTheReply(t *testing.T) {
	srv := newFake(t)
	srv.Fail("setMessageReaction", 5, telegramtest.Failure{Code: 400, Description: "Bad Request: REACTION_INVALID"})
	startGateway(t, srv, t.TempDir(), agent.Echo{}, withReactions(srv))
	srv.DM(42, "alice", "still answered")
	if _, err := srv.WaitCalls(ctxT(t), "sendMessage", 1); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(ctxT(t), func() bool { return srv.Attempts("setMessageReaction") == 2 }); err != nil {
		t.Fatalf("reaction attempts = %d, want 2: %v", srv.Attempts("setMessageReaction"), err)
	}
}
