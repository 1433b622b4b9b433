package gateway

import (
	"context"
	"slices"

	"github.com/heraldgw/herald/adapters"
)

// authorize decides whether j's sender may talk to the agent. It resolves
// j's receipt itself when the answer is no.
func (r *Runner) authorize(ctx context.Context, c *chat, j *job) bool {
	src := j.msg.Source
	pa := r.cfg.Auth[src.Platform]
	if len(pa.AllowedUsers) == 0 && pa.TrustAll {
		return true
	}
	if r.cfg.AllowAllUsers || slices.Contains(pa.AllowedUsers, "*") || slices.Contains(pa.AllowedUsers, src.UserID) {
		return true
	}
	r.log.Warn("message from an unauthorized user ignored", "platform", src.Platform, "user_id", src.UserID, "chat_type", src.ChatType)
	j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped})
	return false
}
