package gateway

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/cron"
)

// runCronJob runs a job delivering to fake:c1 through b's Deliver, once,
// and returns the outcome and the job as recorded after the run.
func runCronJob(t *testing.T, b *bubble) (*cron.Outcome, *cron.Job) {
	t.Helper()
	ctx := context.Background()
	jobs := cron.NewJobs(b.store, time.UTC, nil)
	j, err := jobs.Add(ctx, cron.NewJob{Name: "report", Prompt: "the nightly report", Schedule: "every 1h", Deliver: "fake:c1"})
	if err != nil {
		t.Fatal(err)
	}
	s := cron.New(cron.Config{Jobs: jobs, Agent: &agent.Agent{Model: agent.Echo{}, Tools: agent.NewTools(), Hooks: b.reg},
		Deliverer: b.runner, Home: t.TempDir()})
	out, err := s.RunNow(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	after, err := jobs.Get(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	return out, after
}

// A cron result the platform holds back beyond the retry cap is recorded
// as queued, with the time it may go, not as ok: it is delivered after the
// wait, once, and the job does not send it again.
func TestCronDeliveryQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake", fail: limitedFirst(150 * time.Second)}
		b := newBubble(t, ad, nil)
		defer b.stop()
		start := time.Now()
		out, job := runCronJob(t, b)
		until := start.Add(150 * time.Second).UTC().Format(time.RFC3339)
		if job.LastStatus != cron.StatusQueued || !strings.Contains(job.LastDeliveryError, "fake:c1 until "+until) {
			t.Fatalf("recorded %q: %q", job.LastStatus, job.LastDeliveryError)
		}
		if len(out.Delivered) != 0 || len(out.Queued) != 1 {
			t.Fatalf("delivered %q, queued %q", out.Delivered, out.Queued)
		}
		deliveredAfter(t, ad, start, 150*time.Second, echo+"the nightly report")
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if got := ad.texts(); len(got) != 1 {
			t.Fatalf("sent %d times", len(got))
		}
	})
}

// A cron result whose send timed out after it was written is recorded as
// maybe_sent, and not sent again.
func TestCronDeliveryMaybeSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake", fail: func(n int, out adapters.Outgoing) error {
			return &adapters.MaybeSentError{Err: context.DeadlineExceeded}
		}}
		b := newBubble(t, ad, nil)
		defer b.stop()
		out, job := runCronJob(t, b)
		if job.LastStatus != cron.StatusMaybeSent || !strings.Contains(job.LastDeliveryError, "may have been sent") || !strings.Contains(job.LastDeliveryError, "fake:c1") {
			t.Fatalf("recorded %q: %q", job.LastStatus, job.LastDeliveryError)
		}
		if len(out.Delivered) != 0 || len(out.MaybeSent) != 1 {
			t.Fatalf("delivered %q, maybe sent %q", out.Delivered, out.MaybeSent)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		ad.mu.Lock()
		calls := ad.calls
		ad.mu.Unlock()
		if calls != 1 {
			t.Fatalf("%d send attempts", calls)
		}
	})
}
