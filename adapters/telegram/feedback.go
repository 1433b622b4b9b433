package telegram

// feedback.go shows processing reactions (Config.Reactions): 👀 on a
// message while its turn runs, then 👍 when herald answered or 👎 when
// the turn failed. Telegram's setMessageReaction replaces the bot's
// reaction, so each phase is one call; the emoji are from the set Telegram
// allows bots. A reaction that fails is logged at debug and never
// affects the reply.

import (
	"context"
	"encoding/json"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/heraldgw/herald/adapters"
)

// Processing reactions.
const (
	WorkingReaction = "👀"
	DoneReaction    = "👍"
	FailedReaction  = "👎"
)

var phaseReaction = map[adapters.Phase]string{
	adapters.PhaseWorking: WorkingReaction,
	adapters.PhaseDone:    DoneReaction,
	adapters.PhaseFailed:  FailedReaction,
}

// react sets the bot's reaction on message id in chat (none for
// PhaseCleared).
func (a *Adapter) react(ctx context.Context, chat, id string, p adapters.Phase) {
	set := []map[string]string{} // PhaseCleared: no reaction
	if e, ok := phaseReaction[p]; ok {
		set = append(set, map[string]string{"type": "emoji", "emoji": e})
	}
	reaction, _ := json.Marshal(set)
	params := tgbotapi.Params{}
	params["chat_id"] = a.current(chat)
	params["message_id"] = id
	params["reaction"] = string(reaction)
	if _, err := a.bot(ctx).MakeRequest("setMessageReaction", params); err != nil {
		a.log.Debug("telegram reaction failed", "chat", chat, "message", id, "err", a.classify("setMessageReaction in "+chat, err))
	}
}
