package discordtest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/discord"
	"github.com/heraldgw/herald/adapters/discord/discordtest"
)

type sink chan herald.Message

func (s sink) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	s <- m
	return adapters.Resolved(adapters.Outcome{Status: adapters.StatusDone})
}

// The fake with herald's Discord adapter: a DM comes in, a reply goes out.
func Example() {
	srv := discordtest.New()
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	ad := discord.New(discord.Config{Token: "test-token", APIBase: srv.APIBase()})
	in := make(sink, 1)
	done := make(chan error, 1)
	runCtx, stop := context.WithCancel(ctx)
	go func() { done <- ad.Run(runCtx, in) }()
	defer func() { stop(); <-done }()

	srv.Inject(srv.DM(&discordgo.User{ID: "42", Username: "alice"}, "hello"))
	var m herald.Message
	select {
	case m = <-in:
	case <-ctx.Done():
		fmt.Println("no message arrived")
		return
	}
	fmt.Println(m.Source.ChatType, m.Source.UserName, m.Text)

	ad.Send(ctx, m.Source.Target(), adapters.Outgoing{Text: "hi alice"})
	sent, _ := srv.WaitSent(ctx, 1)
	fmt.Println(sent[0].ChannelID, sent[0].Content)
	// Output:
	// dm alice hello
	// dm-42 hi alice
}
