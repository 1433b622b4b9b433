package gateway

// evict.go: bounds on per-chat state. A chat's intake and queue have caps
// (over them the user is told and the message is not taken); a chat
// nothing is left in is freed as soon as its intake ends (strangers
// refused by auth leave no state), and the sweep frees idle chats.

import (
	"context"
	"time"

	"github.com/heraldgw/herald/adapters"
)

// idleEvict is how long a chat with an open session stays in memory
// without a message; after it the next message reloads the session from
// the store. A chat owing its user a reset notice (or made by /new) is
// kept for keepNotice, since the notice lives only in memory.
const (
	idleEvict  = 24 * time.Hour
	keepNotice = 7 * 24 * time.Hour
)

// TooManyText tells the user a message was not taken because too many
// are waiting in the chat.
const TooManyText = "Too many messages are waiting in this chat, so this one was not taken. Please wait for the answers, then send it again."

// tooMany tells the user j was not taken and resolves its receipt once
// told.
func (r *Runner) tooMany(j *job) {
	told := r.background(func() {
		r.reply(j, TooManyText)
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped})
	})
	if !told { // the gateway has stopped
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped, Err: errShuttingDown})
	}
}

// busy reports whether the chat has work in hand; call with c.mu held.
func (c *chat) busy() bool {
	return c.running != nil || c.intaking || len(c.intake) > 0 || len(c.queue) > 0 ||
		c.approval != nil || c.idle != nil || c.hookMsg != ""
}

// unused reports whether the chat holds nothing worth keeping: never
// loaded and with no pending state; call with c.mu held.
func (c *chat) unused() bool {
	return !c.busy() && !c.loaded && c.sess == nil && !c.freshReset && c.autoReset == ""
}

// evict frees c if keep still says so under both locks.
func (r *Runner) evict(c *chat, free func(*chat) bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.evicted || r.chats[c.key] != c || !free(c) {
		return false
	}
	delete(r.chats, c.key)
	c.evicted = true
	return true
}

// idleAt reports whether the sweep may free c at now: nothing in hand,
// and either no open session (its next message starts one anyway) or
// none used for idleEvict. Call with c.mu held.
func (c *chat) idleAt(now time.Time) bool {
	if c.busy() {
		return false
	}
	if c.freshReset || c.autoReset != "" {
		return now.Sub(c.lastActive) >= keepNotice
	}
	return c.sess == nil || now.Sub(c.lastActive) >= idleEvict
}

// evictIdle frees every chat idleAt says may go and returns how many.
func (r *Runner) evictIdle() int {
	now := r.cfg.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for key, c := range r.chats {
		c.mu.Lock()
		if c.idleAt(now) {
			delete(r.chats, key)
			c.evicted = true
			n++
		}
		c.mu.Unlock()
	}
	if n > len(r.chats) {
		// a Go map keeps its peak size: copy what is left into a new one
		kept := make(map[string]*chat, len(r.chats))
		for key, c := range r.chats {
			kept[key] = c
		}
		r.chats = kept
	}
	return n
}

// tidy is the sweep's upkeep: idle chats freed, the journal and old
// session transcripts pruned, the media of ended sessions removed.
func (r *Runner) tidy(ctx context.Context) {
	if n := r.evictIdle(); n > 0 {
		r.log.Debug("idle chats freed", "chats", n)
	}
	r.pruneInbox(ctx)
	r.pruneTranscripts()
	r.tidyMedia(ctx)
}
