package gateway

// lifecycle.go: session ends the user did not ask for — the reset policy's
// expiry sweep and shutdown — and the tracker that lets Run wait for every
// goroutine the Runner starts.

import (
	"context"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// tracker counts running intake and turn goroutines; after close, add
// refuses, so wait cannot miss a late starter.
type tracker struct {
	mu     sync.Mutex
	n      int
	closed bool
	idle   chan struct{} // closed when n drops to 0 after close
}

func (t *tracker) add() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.n++
	return true
}

func (t *tracker) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n--
	if t.n == 0 && t.closed && t.idle != nil {
		close(t.idle)
		t.idle = nil
	}
}

// close refuses new work and returns a channel closed once none runs.
func (t *tracker) close() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	ch := make(chan struct{})
	if t.n == 0 {
		close(ch)
		return ch
	}
	if t.idle == nil {
		t.idle = ch
	}
	return t.idle
}

// notifyReset reports whether users on p are told about automatic resets.
func (r *Runner) notifyReset(p herald.Platform) bool {
	return r.cfg.ResetNotify == nil || *r.cfg.ResetNotify
}

// expire finalizes a session the reset policy ended and marks it ended.
func (r *Runner) expire(ctx context.Context, key string, s *sessions.Session, reason string) {
	id := s.ID
	r.hooks.Emit(hooks.OnSessionFinalizeHook, &hooks.SessionFinalized{SessionID: &id, Platform: sessions.KeyPlatform(key), Claude: r.claudeSession(&id)})
	if err := r.store.EndSession(context.WithoutCancel(ctx), id, reason, r.cfg.Now()); err != nil {
		r.log.Error("could not end an expired session", "session_id", id, "err", err)
	}
	r.dropMedia(id)
	r.log.Info("session expired", "session_id", id, "session_key", key, "reason", reason)
}

// sweepLoop finalizes expired sessions every SweepInterval until ctx ends.
func (r *Runner) sweepLoop(ctx context.Context) {
	t := time.NewTicker(r.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.sweep(ctx)
			r.tidy(ctx)
		}
	}
}

// sweep finalizes every idle chat's session that the policy says has
// expired and returns how many it ended. A chat with a running turn or
// unread messages is left for its next message to reset.
func (r *Runner) sweep(ctx context.Context) int {
	now := r.cfg.Now()
	r.mu.Lock()
	chats := make([]*chat, 0, len(r.chats))
	for _, c := range r.chats {
		chats = append(chats, c)
	}
	r.mu.Unlock()
	n := 0
	for _, c := range chats {
		c.mu.Lock()
		s := c.sess
		var reason string
		ok := false
		if s != nil && c.running == nil && !c.intaking {
			reason, ok = r.cfg.Reset.Expired(c.lastActive, now)
		}
		if ok {
			c.autoReset = ""
			if len(c.history) > 0 {
				c.autoReset = reason
			}
			c.sess, c.history, c.freshReset, c.resumable = nil, nil, false, false
		}
		c.mu.Unlock()
		if ok {
			r.expire(ctx, c.key, s, reason)
			n++
		}
	}
	return n
}

// finalizeRunning fires on_session_finalize (platform "gateway") for every
// session with a running turn, as Hermes does at shutdown.
func (r *Runner) finalizeRunning() {
	r.mu.Lock()
	chats := make([]*chat, 0, len(r.chats))
	for _, c := range r.chats {
		chats = append(chats, c)
	}
	r.mu.Unlock()
	for _, c := range chats {
		c.mu.Lock()
		running := c.running != nil
		ts := c.turnSess
		c.mu.Unlock()
		if running && ts != nil {
			id := ts.ID
			r.hooks.Emit(hooks.OnSessionFinalizeHook, &hooks.SessionFinalized{SessionID: &id, Platform: "gateway", Claude: r.claudeSession(&id)})
		}
	}
}

// claudeSession is what Claude-dialect hooks read about a session the
// gateway ends (its transcript; SessionEnd's reason is on the payload).
func (r *Runner) claudeSession(id *string) hooks.Claude {
	if id == nil || r.cfg.Agent == nil {
		return hooks.Claude{}
	}
	return r.cfg.Agent.ClaudeSession(*id)
}

// transcriptKeep is how long a session transcript is kept after its last
// line (Claude Code keeps its own 30 days).
const transcriptKeep = 30 * 24 * time.Hour

// pruneTranscripts deletes the transcripts not written for transcriptKeep.
func (r *Runner) pruneTranscripts() {
	if r.cfg.Agent == nil {
		return
	}
	n, err := r.cfg.Agent.PruneTranscripts(time.Now().Add(-transcriptKeep))
	if err != nil {
		r.log.Error("could not prune session transcripts", "err", err)
	}
	if n > 0 {
		r.log.Debug("session transcripts pruned", "files", n)
	}
}
