package discord

// feedback.go shows processing reactions (Config.Reactions): 👀 on a
// message while its turn runs, then, with 👀 taken off, ✅ when herald
// answered or ❌ when the turn failed. A reaction that fails is logged
// at debug and never affects the reply.

import (
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald/adapters"
)

// Processing reactions.
const (
	WorkingReaction = "👀"
	DoneReaction    = "✅"
	FailedReaction  = "❌"
)

// react shows the reaction for phase p on message id in channel ch; past
// PhaseWorking the working reaction comes off first.
func (a *Adapter) react(ctx context.Context, ch, id string, p adapters.Phase) {
	if p != adapters.PhaseWorking {
		if err := a.rest.MessageReactionRemove(ch, id, WorkingReaction, "@me", discordgo.WithContext(ctx)); err != nil {
			a.log.Debug("discord reaction not removed", "channel", ch, "message", id, "err", classify(ctx, "remove reaction in "+ch, err))
		}
	}
	emoji, ok := map[adapters.Phase]string{adapters.PhaseWorking: WorkingReaction, adapters.PhaseDone: DoneReaction, adapters.PhaseFailed: FailedReaction}[p]
	if !ok {
		return // PhaseCleared: the working reaction is off
	}
	if err := a.rest.MessageReactionAdd(ch, id, emoji, discordgo.WithContext(ctx)); err != nil {
		a.log.Debug("discord reaction failed", "channel", ch, "message", id, "err", classify(ctx, "react in "+ch, err))
	}
}
