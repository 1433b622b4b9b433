package hooks

import (
	"context"
	"sync"
	"time"
)

// deadlineCtx is a context with a deadline whose timer is made only if a
// callback asks for Done. Most interceptors return in nanoseconds and never
// look, so the common path costs no timer and no goroutine; a callback that
// does wait on Done gets an ordinary, correct context.
type deadlineCtx struct {
	parent   context.Context
	deadline time.Time

	mu    sync.Mutex
	done  chan struct{}
	err   error
	timer *time.Timer
	stop  func() bool
}

func newDeadline(parent context.Context, d time.Duration) *deadlineCtx {
	dl := time.Now().Add(d)
	if pd, ok := parent.Deadline(); ok && pd.Before(dl) {
		dl = pd
	}
	return &deadlineCtx{parent: parent, deadline: dl}
}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *deadlineCtx) Value(key any) any           { return c.parent.Value(key) }

func (c *deadlineCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	c.done = make(chan struct{})
	if c.err != nil {
		close(c.done)
		return c.done
	}
	if err := c.parent.Err(); err != nil {
		c.err = err
		close(c.done)
		return c.done
	}
	left := time.Until(c.deadline)
	if left <= 0 {
		c.err = context.DeadlineExceeded
		close(c.done)
		return c.done
	}
	c.timer = time.AfterFunc(left, func() { c.cancel(context.DeadlineExceeded) })
	c.stop = context.AfterFunc(c.parent, func() { c.cancel(c.parent.Err()) })
	return c.done
}

func (c *deadlineCtx) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
}

func (c *deadlineCtx) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// release frees the timer once the call is over; the context then reads as
// canceled to anything that kept it.
func (c *deadlineCtx) release() {
	c.mu.Lock()
	t, stop := c.timer, c.stop
	c.mu.Unlock()
	if t != nil {
		t.Stop()
	}
	if stop != nil {
		stop()
	}
	c.cancel(context.Canceled)
}

var _ context.Context = (*deadlineCtx)(nil)
