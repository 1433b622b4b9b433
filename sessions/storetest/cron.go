package storetest

// cron.go: cron's job store on the backend: jobs added, listed, paused,
// resumed and removed, and a run claimed by hand recorded, as the CLI and
// the scheduler do them.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/cron"
)

// answering is a model that answers every job's prompt at once.
type answering struct{}

func (answering) Run(ctx context.Context, prompt string, o agent.Options) (*agent.Result, error) {
	return &agent.Result{FinalResponse: "done: " + prompt, Completed: true}, nil
}

func testCron(t *testing.T, fresh Fresh) {
	o := fresh(t)
	st := open(t, o)
	ctx := t.Context()
	jobs := cron.NewJobs(st, time.UTC, nil)
	once, err := jobs.Add(ctx, cron.NewJob{Name: "once", Prompt: "say once", Schedule: "30m"})
	if err != nil {
		t.Fatal(err)
	}
	every, err := jobs.Add(ctx, cron.NewJob{Prompt: "say hourly", Schedule: "every 1h", Deliver: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := jobs.Get(ctx, every.ID[:6]); err != nil || got.ID != every.ID || got.Name != "say hourly" || got.RepeatTimes != 0 {
		t.Fatalf("get by prefix: %+v %v", got, err)
	}
	if _, err := jobs.Get(ctx, "nope"); !errors.Is(err, cron.ErrNotFound) {
		t.Fatalf("get unknown: %v", err)
	}
	if _, err := jobs.Pause(ctx, once.ID); err != nil {
		t.Fatal(err)
	}
	if list, err := jobs.List(ctx, false); err != nil || len(list) != 1 || list[0].ID != every.ID {
		t.Fatalf("runnable jobs: %+v %v", list, err)
	}
	if list, err := jobs.List(ctx, true); err != nil || len(list) != 2 {
		t.Fatalf("all jobs: %+v %v", list, err)
	}
	if j, err := jobs.Resume(ctx, once.ID); err != nil || j.State != cron.StateScheduled {
		t.Fatalf("resume: %+v %v", j, err)
	}

	sched := cron.New(cron.Config{Jobs: jobs, Agent: answering{}, Home: t.TempDir()})
	// two runs by hand at once: one claims the job, the other is told it
	// runs already (or runs after the first finished)
	var wg sync.WaitGroup
	outs := make([]*cron.Outcome, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { outs[i], errs[i] = sched.RunNow(ctx, every.ID) })
	}
	wg.Wait()
	ran := 0
	for i := range 2 {
		if errs[i] == nil {
			ran++
			if outs[i].Err != nil {
				t.Fatalf("run: %v", outs[i].Err)
			}
		}
	}
	if ran == 0 {
		t.Fatalf("no run happened: %v", errs)
	}
	got, err := jobs.Get(ctx, every.ID)
	if err != nil || got.RepeatCompleted != ran || got.LastRunAt.IsZero() || !got.RunningSince.IsZero() || got.LastStatus == "" {
		t.Fatalf("after %d runs: %+v %v", ran, got, err)
	}
	if !got.NextRunAt.Equal(every.NextRunAt) {
		t.Fatalf("a run by hand moved the schedule: %v, was %v", got.NextRunAt, every.NextRunAt)
	}
	// a once job's run by hand is its one run: it is gone after it
	if out, err := sched.RunNow(ctx, once.ID); err != nil || !out.Removed {
		t.Fatalf("once job run: %+v %v", out, err)
	}
	st.Close()
	st = open(t, o)
	jobs = cron.NewJobs(st, time.UTC, nil)
	if list, err := jobs.List(ctx, true); err != nil || len(list) != 1 || list[0].ID != every.ID {
		t.Fatalf("after reopen: %+v %v", list, err)
	}
	if _, err := jobs.Remove(ctx, every.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := jobs.List(ctx, true); len(list) != 0 {
		t.Fatalf("after remove: %+v", list)
	}
}
