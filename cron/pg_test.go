package cron

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/sessions"
	"github.com/heraldgw/herald/sessions/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The scheduler's side of the job store on PostgreSQL, where replicas
// claim from one table: a due slot is claimed by exactly one of several
// stores claiming at once, its run is recorded, and a run left by a
// replica that died is settled, not repeated.
func TestClaimOnPostgres(t *testing.T) {
	u := pgtest.URL(t)
	ctx := t.Context()
	stores := make([]*Jobs, 3)
	for i := range stores {
		st, err := sessions.OpenURL(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores[i] = NewJobs(st, time.UTC, nil)
	}
	jobs := stores[0]
	job, err := jobs.Add(ctx, NewJob{Prompt: "tick", Schedule: "every 1h"})
	if err != nil {
		t.Fatal(err)
	}
	due := job.NextRunAt
	if next, err := jobs.nextDue(ctx); err != nil || !next.Equal(due) {
		t.Fatalf("next due %v, %v; want %v", next, err, due)
	}
	at := due.Add(time.Second)
	var wg sync.WaitGroup
	claims := make([][]claimed, len(stores))
	for i, js := range stores {
		wg.Go(func() {
			var err error
			if claims[i], _, err = js.claim(ctx, at, 4); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var got []claimed
	for _, c := range claims {
		got = append(got, c...)
	}
	if len(got) != 1 || !got[0].due.Equal(due) {
		t.Fatalf("claimed %+v; want the one slot once", got)
	}
	if removed, err := jobs.mark(ctx, got[0].job, RunRecord{Status: StatusOK, At: at}); err != nil || removed {
		t.Fatalf("mark: %v %v", removed, err)
	}
	after, _ := jobs.Get(ctx, job.ID)
	if after.LastStatus != StatusOK || after.RepeatCompleted != 1 || !after.RunningSince.IsZero() || !after.NextRunAt.Equal(due.Add(time.Hour)) {
		t.Fatalf("after the run: %+v", after)
	}
	// the next slot claimed by a replica that dies before recording it
	if c, _, err := stores[1].claim(ctx, due.Add(time.Hour+time.Second), 4); err != nil || len(c) != 1 {
		t.Fatalf("second claim: %+v %v", c, err)
	}
	settled, err := jobs.recoverInterrupted(ctx, time.Now())
	if err != nil || len(settled) != 1 || settled[0].LastStatus != StatusError {
		t.Fatalf("settled %+v, %v", settled, err)
	}
	if c, _, _ := jobs.claim(ctx, due.Add(time.Hour+time.Second), 4); len(c) != 0 {
		t.Fatalf("the interrupted slot was claimed again: %+v", c)
	}
}
