package cmd

// replicas.go: a gateway that is one of several replicas. When its store
// is PostgreSQL (store: in config.yaml, or HERALD_DATABASE_URL), the
// gateway coordinates through that database (package replica): chat leases
// and queues, inbound dedup, approvals, the cron leader and Telegram's
// long-polling leader (platform_telegram.go), under the
// store's replica id (replica_id:, HERALD_REPLICA_ID).
// HERALD_REPLICA_LEASE_TTL and HERALD_REPLICA_POLL tune it (docs/scale.md).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/heraldgw/herald/replica"
)

// openReplica opens the replica's coordination when the store is
// PostgreSQL; nil, and a no-op close, on SQLite. The Coordinator lives
// until close.
func openReplica(a *app) (coord *replica.Coordinator, close func(), err error) {
	url := strings.TrimSpace(a.cfg.Store)
	if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
		return nil, func() {}, nil
	}
	cfg := replica.Config{ID: a.store.ReplicaID(), Log: a.log.With("component", "replica")}
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"HERALD_REPLICA_LEASE_TTL", &cfg.LeaseTTL}, {"HERALD_REPLICA_POLL", &cfg.PollEvery}} {
		if v := strings.TrimSpace(a.e.getenv(d.name)); v != "" {
			if *d.to, err = time.ParseDuration(v); err != nil || *d.to <= 0 {
				return nil, nil, &exitError{code: 2, msg: fmt.Sprintf("%s=%q is not a positive duration (say 30s)", d.name, v)}
			}
		}
	}
	if u, perr := neturl.Parse(url); perr == nil {
		if pw, ok := u.User.Password(); ok {
			a.redactor.Add(pw)
		}
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, nil, errors.New(a.redactor.Redact(fmt.Sprintf("replica database: %v", err)))
	}
	life, end := context.WithCancel(context.Background())
	coord, err = replica.Open(life, db, cfg)
	if err != nil {
		end()
		db.Close()
		return nil, nil, errors.New(a.redactor.Redact(fmt.Sprintf("replica database: %v", err)))
	}
	a.log.Info("coordinating with other replicas through PostgreSQL", "replica", coord.ID())
	return coord, func() { end(); db.Close() }, nil
}
