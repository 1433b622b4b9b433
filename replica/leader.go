package replica

// leader.go: leaders, one replica at a time for a purpose. The replica
// whose own connection holds the purpose's session-level advisory lock
// leads it: cron (cronLockKey) runs the scheduler, "telegram-polling"
// long-polls Telegram. The lock goes with the connection, so a replica that
// dies (or whose connection breaks) loses it, and another's next try,
// within one interval, takes it.

import (
	"context"
	"hash/fnv"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// CronLeader is the name of the cron scheduler's leadership.
const CronLeader = "cron"

// Leader elects the replica that leads one purpose (cron.Leader).
type Leader struct {
	c       *Coordinator
	name    string
	key     int64
	leading atomic.Bool
}

// Leader returns the cron leader election of this replica.
func (c *Coordinator) Leader() *Leader { return c.LeaderFor(CronLeader) }

// LeaderFor returns this replica's election for the purpose name, the
// same one for every call with that name. Its lock key is derived from
// the name; cron's is cronLockKey.
func (c *Coordinator) LeaderFor(name string) *Leader {
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok := c.leaders[name]; ok {
		return l
	}
	l := &Leader{c: c, name: name, key: lockKey(name)}
	c.leaders[name] = l
	return l
}

// lockKey is the advisory lock key of the leadership name.
func lockKey(name string) int64 {
	if name == CronLeader {
		return cronLockKey
	}
	h := fnv.New64a()
	h.Write([]byte("herald leader " + name))
	return int64(h.Sum64())
}

// Leading reports whether this replica leads now.
func (l *Leader) Leading() bool { return l.leading.Load() }

// leads lists the leaderships this replica holds, sorted.
func (c *Coordinator) leads() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for name, l := range c.leaders {
		if l.leading.Load() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Lead tries for the lock every interval until it gets it or ctx ends;
// lost is closed when leadership ends: ctx ended, the connection failed
// its check (one every interval) or the Coordinator stopped.
func (l *Leader) Lead(ctx context.Context, every time.Duration) (<-chan struct{}, error) {
	for {
		lost, ok, err := l.try(ctx, every)
		if err != nil {
			return nil, err
		}
		if ok {
			return lost, nil
		}
		wctx, cancel, err := l.c.scope(ctx)
		if err != nil {
			return nil, err
		}
		waited := pause(wctx, every)
		cancel()
		if !waited {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, ErrStopped
		}
	}
}

// try takes the lock once; when it does, a goroutine holds it on its own
// connection until leadership ends, then closes lost.
func (l *Leader) try(ctx context.Context, every time.Duration) (lost chan struct{}, ok bool, err error) {
	hctx, cancel, err := l.c.scope(ctx)
	if err != nil {
		return nil, false, err
	}
	won := make(chan bool, 1)
	lost = make(chan struct{})
	go func() {
		defer close(lost)
		defer cancel()
		sent := false
		err := onOwnConn(hctx, l.c.db, func(pc *pgx.Conn) error {
			var got bool
			if err := pc.QueryRow(hctx, `SELECT pg_try_advisory_lock($1)`, l.key).Scan(&got); err != nil || !got {
				return err
			}
			l.leading.Store(true)
			defer l.leading.Store(false)
			sent = true
			won <- true
			l.c.log.Info("leading", "lead", l.name)
			return l.hold(hctx, pc, every)
		})
		if !sent {
			won <- false
			return
		}
		if hctx.Err() == nil {
			l.c.log.Warn("lost the leadership", "lead", l.name, "err", err)
		}
	}()
	if <-won {
		return lost, true, nil
	}
	<-lost
	return nil, false, nil
}

// hold checks the connection every interval until it fails or ctx ends. A
// check may take up to LeaseTTL: a slow answer is not a lost connection
// (the lock is lost only with the connection, and then the server frees it
// at once for the next replica's try).
func (l *Leader) hold(ctx context.Context, pc *pgx.Conn, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, l.c.cfg.LeaseTTL)
		_, err := pc.Exec(pctx, "SELECT 1")
		cancel()
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
}
