package gateway

// pace.go: flood control. Every message and edit to a chat takes a slot
// from the chat's pacer: slots are spaced by the adapter's declared pace
// (adapters.Pacer: Telegram about one a second per chat and twenty a
// minute per group, Slack one a second per channel), and where the
// platform also limits the bot as a whole (Telegram about thirty a
// second over all chats) a slot is only given when the bot's window has
// room too. A 429's retry-after closes the chat until it has passed, for
// sends and streamed edits alike, so the gateway never hammers a chat the
// platform asked it to leave alone.

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
	// bots are the slots taken over all chats of a platform whose
	// adapter declares a BotPerSecond
	bots map[herald.Platform]*window
}

type chatPace struct {
	next    time.Time // the earliest the next slot may be
	blocked time.Time // the platform's retry-after ends
	recent  window    // slots of the last minute (PerMinute only)
	notice  time.Time // the last failure notice
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
// unless onlyNow is set and the slot is later than now. The slot is also
// one the bot's window has room for: the chat's constraints only ever
// push a slot later, so the first time from the chat's slot on that the
// bot's window takes suits both.
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
		c.recent = c.recent.since(now.Add(-time.Minute))
		at = c.recent.earliest(at, pc.PerMinute, time.Minute)
	}
	var bot *window
	if pc.BotPerSecond > 0 {
		bot = p.bot(to.Platform)
		*bot = bot.since(now.Add(-time.Second))
		at = bot.earliest(at, pc.BotPerSecond, time.Second)
	}
	if onlyNow && at.After(now) {
		return at, false
	}
	if pc.PerMinute > 0 {
		c.recent = c.recent.insert(at)
	}
	if bot != nil {
		*bot = bot.insert(at)
	}
	c.next = at.Add(pc.Every)
	return at, true
}

// bot returns the platform's window over all its chats; call with p.mu
// held.
func (p *pacer) bot(platform herald.Platform) *window {
	if p.bots == nil {
		p.bots = map[herald.Platform]*window{}
	}
	w := p.bots[platform]
	if w == nil {
		w = &window{}
		p.bots[platform] = w
	}
	return w
}

// window is the slots taken under a limit of n slots in any span, in
// time order. Slots may be taken ahead of time and out of order (each
// chat takes its own next slot, which may lie in the future).
type window []time.Time

// since drops the slots before from; called with from = now - span, it
// drops only slots that no span holding a new slot (now or later) holds.
func (w window) since(from time.Time) window {
	i := 0
	for i < len(w) && w[i].Before(from) {
		i++
	}
	return w[i:]
}

// earliest is the first time from t on at which a slot keeps every span
// to at most n slots. A time stops fitting only where a taken slot comes
// within span ahead of it and starts fitting again where one falls more
// than span behind, so the answer is t or a taken slot plus span.
func (w window) earliest(t time.Time, n int, span time.Duration) time.Time {
	if w.fits(t, n, span) {
		return t
	}
	for _, s := range w {
		if c := s.Add(span); c.After(t) && w.fits(c, n, span) {
			return c
		}
	}
	return later(t, w[len(w)-1].Add(span))
}

// fits reports whether a slot at t keeps every span to at most n slots:
// with t among them, no n+1 slots in a row lie within less than span.
func (w window) fits(t time.Time, n int, span time.Duration) bool {
	if len(w) < n {
		return true
	}
	pos := w.pos(t)
	at := func(i int) time.Time {
		switch {
		case i < pos:
			return w[i]
		case i == pos:
			return t
		default:
			return w[i-1]
		}
	}
	for i := max(0, pos-n); i <= pos && i+n <= len(w); i++ {
		if at(i+n).Sub(at(i)) < span {
			return false
		}
	}
	return true
}

// pos is where t goes to keep w in order (after equal times).
func (w window) pos(t time.Time) int {
	i := len(w)
	for i > 0 && w[i-1].After(t) {
		i--
	}
	return i
}

// insert adds t in order.
func (w window) insert(t time.Time) window {
	i := w.pos(t)
	w = append(w, time.Time{})
	copy(w[i+1:], w[i:])
	w[i] = t
	return w
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
