package discord

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald/adapters"
)

// HandleInteraction handles i as Run does an INTERACTION_CREATE, for
// tests that run without a gateway connection (under synctest, where an
// open websocket would keep the clock from moving).
func (a *Adapter) HandleInteraction(ctx context.Context, sink adapters.Sink, i *discordgo.Interaction) {
	ev := inbound{s: a.rest, i: i}
	if i.Type == discordgo.InteractionApplicationCommand {
		ev.deferred = a.deferSlash(ctx, i)
	}
	a.interaction(ctx, sink, ev)
}

// WaitFollowers waits for the goroutines following slash commands'
// receipts.
func (a *Adapter) WaitFollowers() { a.watchers.Wait() }
