package hooks

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// deadlineCtx is a context with a deadline whose channel and timer are
// made only if a callback asks for Done. Most interceptors return in
// nanoseconds and never look, so the common path costs no timer, no
// goroutine, no lock and few bytes (Call keeps several in one
// allocation); a callback that does wait on Done gets an ordinary, correct
// context. After release it reads as canceled to anything that kept it.
type deadlineCtx struct {
	parent context.Context
	// dl is the deadline as a monoNow reading.
	dl time.Duration
	// released is set once the call is over; slow once Done was asked.
	// Both are read without a lock: release stores released before it
	// loads slow, Done stores slow before it loads released, so a Done
	// racing with release still ends up closed.
	released atomic.Bool
	slow     atomic.Pointer[deadlineSlow]
}

type deadlineSlow struct {
	mu    sync.Mutex
	done  chan struct{}
	err   error
	timer *time.Timer
	stop  func() bool
}

func newDeadline(parent context.Context, d time.Duration) *deadlineCtx {
	c := new(deadlineCtx)
	c.init(parent, monoNow(), d)
	return c
}

// init prepares c for a call starting at now (a monoNow reading).
func (c *deadlineCtx) init(parent context.Context, now, d time.Duration) {
	c.initWith(parent, parentDeadline(parent), now, d)
}

// initWith is init with the parent's deadline already read (as a monoNow
// reading; noDeadline if none), so a Call reads it once for all its
// subscribers.
func (c *deadlineCtx) initWith(parent context.Context, pdl, now, d time.Duration) {
	c.parent, c.dl = parent, min(now+d, pdl)
}

const noDeadline = time.Duration(1<<63 - 1)

func parentDeadline(parent context.Context) time.Duration {
	if pd, ok := parent.Deadline(); ok {
		return pd.Sub(clockBase)
	}
	return noDeadline
}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return clockBase.Add(c.dl), true }
func (c *deadlineCtx) Value(key any) any           { return c.parent.Value(key) }

func (c *deadlineCtx) Done() <-chan struct{} {
	s := c.slow.Load()
	if s == nil {
		fresh := &deadlineSlow{}
		if c.slow.CompareAndSwap(nil, fresh) {
			s = fresh
		} else {
			s = c.slow.Load()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done != nil {
		return s.done
	}
	s.done = make(chan struct{})
	switch {
	case c.released.Load():
		s.err = context.Canceled
	case c.parent.Err() != nil:
		s.err = c.parent.Err()
	case monoNow() >= c.dl:
		s.err = context.DeadlineExceeded
	}
	if s.err != nil {
		close(s.done)
		return s.done
	}
	s.timer = time.AfterFunc(c.dl-monoNow(), func() { c.cancel(context.DeadlineExceeded) })
	s.stop = context.AfterFunc(c.parent, func() { c.cancel(c.parent.Err()) })
	return s.done
}

func (c *deadlineCtx) cancel(err error) {
	s := c.slow.Load()
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = err
	if s.done != nil {
		close(s.done)
	}
}

func (c *deadlineCtx) Err() error {
	if s := c.slow.Load(); s != nil {
		s.mu.Lock()
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	if c.released.Load() {
		return context.Canceled
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if monoNow() >= c.dl {
		return context.DeadlineExceeded
	}
	return nil
}

// release ends the call: the timer, if any, is stopped and the context
// reads as canceled from now on.
func (c *deadlineCtx) release() {
	c.released.Store(true)
	s := c.slow.Load()
	if s == nil {
		return
	}
	s.mu.Lock()
	t, stop := s.timer, s.stop
	s.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	if stop != nil {
		stop()
	}
	c.cancel(context.Canceled)
}

var _ context.Context = (*deadlineCtx)(nil)

// coarseClock is a monotonic clock read in a couple of nanoseconds: a
// goroutine refreshes it every millisecond while the registry is busy and
// stops after 100 ms without a reading, so an idle gateway has no ticker.
// The hot paths (Emit, and Call's timing of Go callbacks, whose timeouts
// are seconds) read it instead of the system clock, which costs tens of
// nanoseconds per reading.
type coarseClock struct {
	now  atomic.Int64 // a monoNow reading at most a tick old, while live
	live atomic.Bool
	used atomic.Bool
	mu   sync.Mutex // serialises start and stop
	wg   sync.WaitGroup
	quit chan struct{} // closed by stopClock; nil while the clock may run
}

const coarseTick = time.Millisecond

func (c *coarseClock) read() time.Duration {
	if c.live.Load() {
		n := c.now.Load()
		if !c.used.Load() {
			c.used.Store(true)
		}
		return time.Duration(n)
	}
	return c.start()
}

func (c *coarseClock) start() time.Duration {
	now := monoNow()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.quit != nil {
		select {
		case <-c.quit:
			return now // the registry is closed: no ticker any more
		default:
		}
	}
	if c.live.Load() {
		return now
	}
	if c.quit == nil {
		c.quit = make(chan struct{})
	}
	c.now.Store(int64(now))
	c.used.Store(true)
	c.live.Store(true)
	quit := c.quit
	c.wg.Add(1)
	go c.tick(quit)
	return now
}

func (c *coarseClock) tick(quit chan struct{}) {
	defer c.wg.Done()
	t := time.NewTicker(coarseTick)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-quit:
			c.live.Store(false)
			return
		case <-t.C:
		}
		c.now.Store(int64(monoNow()))
		if n%100 == 0 && !c.used.Swap(false) {
			c.mu.Lock()
			c.live.Store(false)
			c.mu.Unlock()
			return
		}
	}
}

// stopClock stops the ticker for good and waits for it.
func (c *coarseClock) stopClock() {
	c.mu.Lock()
	if c.quit == nil {
		c.quit = make(chan struct{})
	}
	select {
	case <-c.quit:
	default:
		close(c.quit)
	}
	c.mu.Unlock()
	c.wg.Wait()
}
