package gateway

// pace.go: per-chat flood control. Every message and edit to a chat takes
// a slot from the chat's pacer: slots are spaced by the adapter's declared
// pace (adapters.Pacer: Telegram about one a second per chat and twenty a
// minute per group, Slack one a second per channel), and a 429's
// retry-after closes the chat until it has passed, for sends and streamed
// edits alike, so the gateway never hammers a chat the platform asked it
// to leave alone.

import (
	"context"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// noticeEvery is the least time between two delivery-failure notices to
// one chat.
const noticeEvery = time.Minute

type pacer struct {
	mu    sync.Mutex
	chats map[herald.Target]*chatPace
}

type chatPace struct {
	next    time.Time   // the earliest the next slot may be
	blocked time.Time   // the platform's retry-after ends
	recent  []time.Time // slots of the last minute (PerMinute only)
	notice  time.Time   // the last failure notice
	// queued: the chat has messages in the outbound queue; later ones
	// join them there, so that they go out in order
	queued bool
}

// paceKey is the chat a target posts to: threads share their chat's pace.
func paceKey(to herald.Target) herald.Target {
	return herald.Target{Platform: to.Platform, ChatID: to.ChatID}
}

func paceOf(a adapters.Adapter, to herald.Target) adapters.Pace {
	if p, ok := a.(adapters.Pacer); ok {
		return p.Pace(to)
	}
	return adapters.Pace{}
}

// chat returns to's state, creating it; call with p.mu held. Idle chats
// are forgotten once the map grows.
func (p *pacer) chat(to herald.Target, now time.Time) *chatPace {
	if p.chats == nil {
		p.chats = map[herald.Target]*chatPace{}
	}
	k := paceKey(to)
	c := p.chats[k]
	if c == nil {
		if len(p.chats) >= 4096 {
			for k, c := range p.chats {
				if c.idle(now) {
					delete(p.chats, k)
				}
			}
		}
		c = &chatPace{}
		p.chats[k] = c
	}
	return c
}

func (c *chatPace) idle(now time.Time) bool {
	last := c.next
	if n := len(c.recent); n > 0 {
		last = later(last, c.recent[n-1].Add(time.Minute))
	}
	return !c.queued && !later(last, c.blocked, c.notice.Add(noticeEvery)).After(now)
}

func later(t time.Time, ts ...time.Time) time.Time {
	for _, u := range ts {
		if u.After(t) {
			t = u
		}
	}
	return t
}

// slot returns when the chat's next slot is, and takes it (reports true)
// unless onlyNow is set and the slot is later than now.
func (p *pacer) slot(pc adapters.Pace, to herald.Target, onlyNow bool) (time.Time, bool) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.chats[paceKey(to)]
	if c == nil && pc == (adapters.Pace{}) {
		return now, true
	}
	if c == nil {
		c = p.chat(to, now)
	}
	at := later(now, c.next, c.blocked)
	if pc.PerMinute > 0 {
		keep := c.recent[:0]
		for _, t := range c.recent {
			if t.Add(time.Minute).After(now) {
				keep = append(keep, t)
			}
		}
		c.recent = keep
		if n := len(c.recent); n >= pc.PerMinute {
			at = later(at, c.recent[n-pc.PerMinute].Add(time.Minute))
		}
	}
	if onlyNow && at.After(now) {
		return at, false
	}
	if pc.PerMinute > 0 {
		c.recent = append(c.recent, at)
	}
	c.next = at.Add(pc.Every)
	return at, true
}

// wait takes the chat's next slot and waits for it. A retry-after that
// arrives meanwhile is waited for too.
func (p *pacer) wait(ctx context.Context, a adapters.Adapter, to herald.Target) error {
	pc := paceOf(a, to)
	for {
		at, _ := p.slot(pc, to, false)
		if err := sleepCtx(ctx, time.Until(at)); err != nil {
			return err
		}
		if p.blockedFor(to) <= 0 {
			return nil
		}
	}
}

// tryTake takes the chat's slot only if it is free now.
func (p *pacer) tryTake(a adapters.Adapter, to herald.Target) bool {
	_, ok := p.slot(paceOf(a, to), to, true)
	return ok
}

// block closes the chat for d (a 429's retry-after).
func (p *pacer) block(to herald.Target, d time.Duration) {
	p.blockUntil(to, time.Now().Add(d))
}

func (p *pacer) blockUntil(to herald.Target, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.chat(to, time.Now())
	c.blocked = later(c.blocked, until)
}

// setQueued marks whether the chat has messages in the outbound queue.
func (p *pacer) setQueued(to herald.Target, q bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.chat(to, time.Now()).queued = q
}

// queuedUntil reports whether the chat has messages in the outbound
// queue, and when its retry-after ends.
func (p *pacer) queuedUntil(to herald.Target) (bool, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.chats[paceKey(to)]
	if c == nil {
		return false, time.Time{}
	}
	return c.queued, c.blocked
}

// blockedFor is how long the chat stays closed by a retry-after.
func (p *pacer) blockedFor(to herald.Target) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.chats[paceKey(to)]
	if c == nil {
		return 0
	}
	return time.Until(c.blocked)
}

// noticeDue reports whether a failure notice may go to the chat now (at
// most one per noticeEvery), and counts it when it may.
func (p *pacer) noticeDue(to herald.Target) bool {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.chat(to, now)
	if !c.notice.IsZero() && now.Before(c.notice.Add(noticeEvery)) {
		return false
	}
	c.notice = now
	return true
}

// sleepCtx waits d, or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
