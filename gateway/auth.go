package gateway

// auth.go: who may talk to the agent — per-platform allowlists ("*"
// allowed), GATEWAY_ALLOW_ALL_USERS, pairings approved in the store (read
// on every check, so `herald pairing approve` applies to a running
// gateway) — and the pairing reply unknown users get in a DM.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/sessions"
)

// Unauthorized-DM behaviours.
const (
	DMPair   = "pair"
	DMIgnore = "ignore"
)

// PairingText is sent with a new pairing code (platform, code, platform,
// code).
const PairingText = "Hi~ I don't recognize you yet!\n\nHere's your pairing code: `%s`\n\nAsk the bot owner to approve you with:\nherald pairing approve %s %s"

// PairingBusyText is sent when no code can be issued right now.
const PairingBusyText = "Too many pairing requests right now~ Please try again later!"

// authorized reports whether src's user may talk to the agent.
func (r *Runner) authorized(ctx context.Context, src herald.Source) bool {
	pa := r.cfg.Auth[src.Platform]
	if pa.TrustAll && len(pa.AllowedUsers) == 0 {
		return true
	}
	if r.cfg.AllowAllUsers || slices.Contains(pa.AllowedUsers, "*") || slices.Contains(pa.AllowedUsers, src.UserID) {
		return true
	}
	ok, err := r.store.Paired(ctx, string(src.Platform), src.UserID)
	if err != nil {
		r.log.Error("pairing store unavailable; user treated as unknown", "platform", src.Platform, "err", err)
	}
	return ok
}

// dmMode is the platform's unauthorized_dm behaviour.
func (r *Runner) dmMode(p herald.Platform) string {
	pa := r.cfg.Auth[p]
	mode := strings.ToLower(strings.TrimSpace(pa.UnauthorizedDM))
	if mode == "" {
		mode = strings.ToLower(strings.TrimSpace(r.cfg.UnauthorizedDM))
	}
	switch mode {
	case DMPair, DMIgnore:
		return mode
	}
	if len(pa.AllowedUsers) > 0 {
		return DMIgnore
	}
	return DMPair
}

// authorize decides whether j's sender may go on. When not, it answers an
// unknown user in a DM with a pairing code (once per PairingInterval) if
// the platform pairs, and resolves j's receipt.
func (r *Runner) authorize(ctx context.Context, j *job) bool {
	src := j.msg.Source
	if r.authorized(ctx, src) || r.cfg.Auth[src.Platform].roleAllowed(&j.msg) {
		return true
	}
	r.log.Warn("message from an unauthorized user", "platform", src.Platform, "user_id", src.UserID, "chat_type", src.ChatType)
	defer j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped})
	if src.ChatType != herald.ChatDM || r.dmMode(src.Platform) != DMPair {
		return false
	}
	req, err := r.store.RequestPairing(ctx, string(src.Platform), src.UserID, src.UserName, src.ChatID, r.cfg.Now())
	switch {
	case err == nil:
		r.log.Info("pairing code issued", "platform", src.Platform, "user_id", src.UserID)
		r.reply(j, fmt.Sprintf(PairingText, req.Code, src.Platform, req.Code))
	case errors.Is(err, sessions.ErrPairingRateLimited):
		// said once already: stay quiet
	case errors.Is(err, sessions.ErrTooManyPairings), errors.Is(err, sessions.ErrPairingLocked):
		r.reply(j, PairingBusyText)
	default:
		r.log.Error("pairing failed", "platform", src.Platform, "err", err)
	}
	return false
}
