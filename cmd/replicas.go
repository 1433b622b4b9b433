package cmd

// replicas.go: a gateway that is one of several replicas. When
// HERALD_DATABASE_URL names a PostgreSQL database, the gateway coordinates
// through it (package replica): chat leases and queues, inbound dedup,
// approvals and the cron leader. HERALD_REPLICA_ID, HERALD_REPLICA_LEASE_TTL
// and HERALD_REPLICA_POLL tune it (docs/scale.md).

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

// openReplica opens the replica's coordination when HERALD_DATABASE_URL
// is a postgres:// URL; nil, and a no-op close, otherwise. The Coordinator
// lives until close.
func openReplica(a *app) (coord *replica.Coordinator, close func(), err error) {
	url := strings.TrimSpace(a.e.getenv("HERALD_DATABASE_URL"))
	if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
		return nil, func() {}, nil
	}
	cfg := replica.Config{ID: a.e.getenv("HERALD_REPLICA_ID"), Log: a.log.With("component", "replica")}
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
