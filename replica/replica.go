package replica

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/heraldgw/herald/gateway"
)

// Defaults of Config.
const (
	DefaultLeaseTTL  = 30 * time.Second
	DefaultPollEvery = 2 * time.Second
	DefaultClaimKeep = 7 * 24 * time.Hour
)

// Config configures a Coordinator. The zero value is usable.
type Config struct {
	// ID names this replica in leases and /healthz; it must be unique
	// among the replicas and may not contain "|" (default: host name,
	// process id and a random suffix).
	ID string
	// LeaseTTL is how long a chat's lease lasts unless renewed (default
	// 30 s): a replica that dies loses its chats after it.
	LeaseTTL time.Duration
	// RenewEvery is how often this replica renews its leases (default a
	// third of LeaseTTL).
	RenewEvery time.Duration
	// PollEvery is how often the database is read for what a lost
	// notification would have said: chats whose lease expired with
	// messages queued, answers to approvals waiting here (default 2 s).
	PollEvery time.Duration
	// ClaimKeep is how long an inbound message id stays claimed (default
	// 7 days, as the inbound journal keeps its rows).
	ClaimKeep time.Duration
	Log       *slog.Logger
}

// Coordinator implements gateway.Coordinator on PostgreSQL, and elects
// leaders: cron's (Leader), and others by name (LeaderFor). It lives as long as the context given to Open: once that ends
// it does nothing more and answers every call with ErrStopped, leaving
// its leases to expire, as a replica that died would.
type Coordinator struct {
	db   *sql.DB
	cfg  Config
	log  *slog.Logger
	life context.Context

	mu      sync.Mutex
	leaders map[string]*Leader                   // by name (LeaderFor)
	waiters map[string]chan gateway.SharedAnswer // approval token → its waiter
	// pollNow wakes the poll loop (a LISTEN connection was made again:
	// what was said meanwhile is read from the tables)
	pollNow chan struct{}
}

var _ gateway.Coordinator = (*Coordinator)(nil)

// ErrStopped is returned once the Coordinator's context ended.
var ErrStopped = errors.New("replica: stopped")

// Notification channels.
const (
	chanChat     = "herald_chat_wake" // "<replica>|<chat key>"
	chanApproval = "herald_approval"  // "<token>"
)

// Pool sizes Open sets on db: every message takes a few short statements,
// and a pool that keeps only database/sql's default two idle connections
// opens a new server connection for most of them under load.
const (
	maxOpenConns = 32
	maxIdleConns = 16
)

// Open migrates the coordination tables of db (a database/sql handle on
// the "pgx" driver; within a minute) and returns the replica's
// Coordinator, alive until life ends.
func Open(life context.Context, db *sql.DB, cfg Config) (*Coordinator, error) {
	if cfg.ID == "" {
		host, _ := os.Hostname()
		cfg.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), strings.ToLower(rand.Text()[:6]))
	}
	if strings.Contains(cfg.ID, "|") {
		return nil, fmt.Errorf("replica: id %q may not contain \"|\"", cfg.ID)
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.RenewEvery <= 0 {
		cfg.RenewEvery = cfg.LeaseTTL / 3
	}
	if cfg.RenewEvery >= cfg.LeaseTTL {
		return nil, fmt.Errorf("replica: renew_every (%s) must be shorter than lease_ttl (%s)", cfg.RenewEvery, cfg.LeaseTTL)
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = DefaultPollEvery
	}
	if cfg.ClaimKeep <= 0 {
		cfg.ClaimKeep = DefaultClaimKeep
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	db.SetMaxOpenConns(maxOpenConns)
	db.SetMaxIdleConns(maxIdleConns)
	mctx, cancel := context.WithTimeout(life, time.Minute)
	defer cancel()
	if err := migrate(mctx, db); err != nil {
		return nil, err
	}
	return &Coordinator{db: db, cfg: cfg, log: cfg.Log.With("replica", cfg.ID), life: life,
		waiters: map[string]chan gateway.SharedAnswer{}, leaders: map[string]*Leader{}, pollNow: make(chan struct{}, 1)}, nil
}

// PollEvery is Config.PollEvery: how often a waiting replica tries for a
// leadership other than cron's.
func (c *Coordinator) PollEvery() time.Duration { return c.cfg.PollEvery }

// ID is the replica's id.
func (c *Coordinator) ID() string { return c.cfg.ID }

// scope is ctx, also ended when the Coordinator's life ends; err is
// ErrStopped when it has.
func (c *Coordinator) scope(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if c.life.Err() != nil {
		return ctx, func() {}, ErrStopped
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.life, cancel)
	return ctx, func() { stop(); cancel() }, nil
}

// ttl is the lease time in milliseconds, for SQL.
func (c *Coordinator) ttl() int64 { return c.cfg.LeaseTTL.Milliseconds() }

// Run renews this replica's leases, listens for wakes and approval
// answers, and polls for what a lost notification would have said, until
// ctx (or the Coordinator's life) ends.
func (c *Coordinator) Run(ctx context.Context, wake func(key string)) error {
	ctx, cancel, err := c.scope(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		c.listenLoop(ctx, wake)
	}()
	go func() {
		defer wg.Done()
		c.renewLoop(ctx)
	}()
	go func() {
		defer wg.Done()
		c.every(ctx, c.cfg.PollEvery, c.pollNow, func(ctx context.Context) { c.poll(ctx, wake) })
	}()
	wg.Wait()
	return nil
}

// every runs fn every d, and when kick fires, until ctx ends.
func (c *Coordinator) every(ctx context.Context, d time.Duration, kick <-chan struct{}, fn func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
		fn(ctx)
	}
}

// renewLoop renews this replica's leases every RenewEvery on a connection
// of its own, so that a pool busy with messages never delays a renewal
// past a lease's expiry; a failed connection is made again at the next
// renewal.
func (c *Coordinator) renewLoop(ctx context.Context) {
	for ctx.Err() == nil {
		err := onOwnConn(ctx, c.db, func(pc *pgx.Conn) error {
			t := time.NewTicker(c.cfg.RenewEvery)
			defer t.Stop()
			for {
				if err := c.renew(ctx, pc); err != nil {
					return err
				}
				select {
				case <-ctx.Done():
					return nil
				case <-t.C:
				}
			}
		})
		if ctx.Err() != nil {
			return
		}
		c.log.Error("could not renew chat leases; they expire unless renewed in time", "err", err)
		if !pause(ctx, c.cfg.RenewEvery) {
			return
		}
	}
}

// pause waits d; false when ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// renew extends every lease this replica holds (one past its expiry that
// no other replica took is still this one's); a renewal slower than a
// lease has failed.
func (c *Coordinator) renew(ctx context.Context, pc *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.LeaseTTL)
	defer cancel()
	_, err := pc.Exec(ctx, `UPDATE herald_chat_leases SET expires_at = now() + $2 * interval '1 millisecond' WHERE owner = $1`, c.cfg.ID, c.ttl())
	return err
}

// poll wakes the chats this replica may take (queued messages with no
// live lease, or with this replica's lease but not taken), reads answers
// to the approvals waiting here, and prunes old inbound claims.
func (c *Coordinator) poll(ctx context.Context, wake func(key string)) {
	rows, err := c.db.QueryContext(ctx, `SELECT DISTINCT q.chat_key FROM herald_chat_queue q
		LEFT JOIN herald_chat_leases l ON l.chat_key = q.chat_key
		WHERE l.chat_key IS NULL OR l.expires_at <= now() OR (l.owner = $1 AND q.taken_by IS DISTINCT FROM $1)
		LIMIT 1000`, c.cfg.ID)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("could not poll for waiting chats", "err", err)
		}
		return
	}
	var keys []string
	for rows.Next() {
		var k string
		if rows.Scan(&k) == nil {
			keys = append(keys, k)
		}
	}
	rows.Close()
	for _, k := range keys {
		wake(k)
	}
	c.pollApprovals(ctx)
	if _, err := c.db.ExecContext(ctx, `DELETE FROM herald_inbound_claims WHERE claimed_at < now() - $1 * interval '1 millisecond'`,
		c.cfg.ClaimKeep.Milliseconds()); err != nil && ctx.Err() == nil {
		c.log.Warn("could not prune inbound claims", "err", err)
	}
}

// listenLoop keeps a LISTEN connection open, reconnecting after
// PollEvery; each new connection is followed by a poll, for what was said
// while there was none.
func (c *Coordinator) listenLoop(ctx context.Context, wake func(key string)) {
	for ctx.Err() == nil {
		err := c.listen(ctx, wake)
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("lost the notification connection; polling until it is back", "err", err)
		if !pause(ctx, c.cfg.PollEvery) {
			return
		}
	}
}

func (c *Coordinator) listen(ctx context.Context, wake func(key string)) error {
	return onOwnConn(ctx, c.db, func(pc *pgx.Conn) error {
		for _, ch := range []string{chanChat, chanApproval} {
			if _, err := pc.Exec(ctx, "LISTEN "+ch); err != nil {
				return err
			}
		}
		select {
		case c.pollNow <- struct{}{}:
		default:
		}
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				return err
			}
			switch n.Channel {
			case chanChat:
				if owner, key, ok := strings.Cut(n.Payload, "|"); ok && owner == c.cfg.ID {
					wake(key)
				}
			case chanApproval:
				c.approvalAnswered(ctx, n.Payload)
			}
		}
	})
}

// onOwnConn runs fn on a connection of db's that is closed afterwards
// rather than returned to the pool: a LISTEN, or an advisory lock, ends
// with it.
func onOwnConn(ctx context.Context, db *sql.DB, fn func(pc *pgx.Conn) error) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var fnErr error
	conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			fnErr = fmt.Errorf("replica: the database is not opened with the pgx driver (%T)", dc)
			return driver.ErrBadConn
		}
		fnErr = fn(sc.Conn())
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		sc.Conn().Close(cctx)
		cancel()
		return driver.ErrBadConn // discard it
	})
	return fnErr
}

// Status is what /healthz reports.
func (c *Coordinator) Status(ctx context.Context) gateway.ReplicaStatus {
	st := gateway.ReplicaStatus{ID: c.cfg.ID, CronLeader: c.Leader().Leading(), Leads: c.leads()}
	ctx, cancel, err := c.scope(ctx)
	defer cancel()
	if err == nil {
		err = c.db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE owner = $1), count(*) FROM herald_chat_leases WHERE expires_at > now()`,
			c.cfg.ID).Scan(&st.Leases, &st.AllLeases)
	}
	if err != nil {
		st.Error = err.Error()
	}
	return st
}
