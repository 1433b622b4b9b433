package replica

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/heraldgw/herald/sessions/pgtest"
)

// Leaderships of different names are taken independently, each by one
// replica at a time: a replica that leads cron does not thereby lead
// "telegram-polling", a second replica waits for a name held, and takes
// it once its holder's life ends; /healthz's status lists what each leads.
func TestLeaderForTakesOneLockPerName(t *testing.T) {
	url := pgtest.URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	coords := make([]*Coordinator, 2)
	kills := make([]context.CancelFunc, 2)
	for i := range coords {
		coords[i], kills[i] = openLeaderCoord(t, url, fmt.Sprintf("r%d", i))
	}
	if a, b := lockKey("telegram-polling"), lockKey(CronLeader); a == b || b != cronLockKey || a == migrateLockKey {
		t.Fatalf("lock keys: telegram-polling %x, cron %x", a, b)
	}
	if coords[0].LeaderFor("telegram-polling") != coords[0].LeaderFor("telegram-polling") {
		t.Fatal("LeaderFor gave two elections for one name")
	}
	const every = 20 * time.Millisecond
	// r0 leads cron, r1 telegram-polling: the names do not exclude each
	// other
	if _, err := coords[0].Leader().Lead(ctx, every); err != nil {
		t.Fatal(err)
	}
	if _, err := coords[1].LeaderFor("telegram-polling").Lead(ctx, every); err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]string{{CronLeader}, {"telegram-polling"}} {
		st := coords[i].Status(ctx)
		if !slices.Equal(st.Leads, want) || st.CronLeader != (i == 0) {
			t.Fatalf("r%d status %+v, want leads %v", i, st, want)
		}
	}
	// r0 waits for telegram-polling while r1 holds it; r1 dies and r0
	// takes it
	got := make(chan error, 1)
	var lost <-chan struct{}
	go func() {
		var err error
		lost, err = coords[0].LeaderFor("telegram-polling").Lead(ctx, every)
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("r0 took telegram-polling while r1 held it (err %v)", err)
	case <-time.After(10 * every):
	}
	kills[1]()
	if err := <-got; err != nil {
		t.Fatalf("r0 did not take telegram-polling after r1 died: %v", err)
	}
	if st := coords[0].Status(ctx); !slices.Equal(st.Leads, []string{CronLeader, "telegram-polling"}) {
		t.Fatalf("r0 status %+v", st)
	}
	select {
	case <-lost:
		t.Fatal("r0 lost telegram-polling at once")
	default:
	}
}

// openLeaderCoord opens replica name's Coordinator on url, alive until
// kill (or the test's end), for tests of leaderships. REPLICA_DEBUG=1
// logs it to stderr.
func openLeaderCoord(t *testing.T, url, name string) (c *Coordinator, kill context.CancelFunc) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	life, kill := context.WithCancel(context.Background())
	t.Cleanup(kill)
	cfg := testConfig
	cfg.ID = name
	// the leader's connection check may take up to a lease: long enough
	// that a loaded machine does not drop a live leader
	cfg.LeaseTTL, cfg.RenewEvery = 20*time.Second, time.Second
	if os.Getenv("REPLICA_DEBUG") != "" {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil)).With("test", name)
	}
	if c, err = Open(life, db, cfg); err != nil {
		t.Fatal(err)
	}
	return c, kill
}
