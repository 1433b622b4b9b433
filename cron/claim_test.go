package cron

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/sessions"
)

// claimAndDie is another process that claims with claim and dies before
// the run ends: its store is closed with the job marked running.
func (e *testEnv) claimAndDie(claim func(*Jobs) error) {
	e.t.Helper()
	stA, err := sessions.Open(e.st.Path())
	if err != nil {
		e.t.Fatal(err)
	}
	defer stA.Close()
	if err := claim(NewJobs(stA, time.UTC, nil)); err != nil {
		e.t.Fatalf("claim: %v", err)
	}
}

// claimOne claims the one job that is due.
func claimOne(jobs *Jobs) error {
	claimed, _, err := jobs.claim(context.Background(), time.Now(), 4)
	if err == nil && len(claimed) != 1 {
		err = fmt.Errorf("claimed %d jobs, want 1", len(claimed))
	}
	return err
}

// A once job claimed by a process that then dies is not run again by the
// next one, whether the scheduler claimed it at its time or it was started
// by hand (herald cron run) before: either run is the job's one run. The
// interrupted run is recorded as an error.
func TestOnceJobNotRepeatedAfterCrash(t *testing.T) {
	for _, tc := range []struct {
		name  string
		claim func(e *testEnv, j *Job) func(*Jobs) error
	}{
		{"scheduled", func(e *testEnv, j *Job) func(*Jobs) error {
			time.Sleep(30 * time.Minute)
			return claimOne
		}},
		{"by hand", func(e *testEnv, j *Job) func(*Jobs) error {
			return func(jobs *Jobs) error {
				_, err := jobs.claimNow(context.Background(), j.ID, time.Now())
				return err
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				j := e.add(NewJob{Name: "once", Prompt: "once", Schedule: "30m", Deliver: "telegram:1"})
				e.claimAndDie(tc.claim(e, j))
				if got := e.get(j.ID); !got.NextRunAt.IsZero() {
					t.Fatalf("a claimed once job still has next_run_at %s", got.NextRunAt)
				}
				time.Sleep(10 * time.Minute)

				// the next process runs for a day: the once job never runs
				_, stop := e.start(e.config())
				time.Sleep(24 * time.Hour)
				stop()
				if n := len(e.model.callsFor("once")); n != 0 {
					t.Fatalf("the interrupted once job ran again (%d runs)", n)
				}
				got := e.get(j.ID)
				if got.LastStatus != StatusError || !strings.Contains(got.LastError, "interrupted") || got.Enabled || !got.NextRunAt.IsZero() {
					t.Fatalf("interrupted once job: status %q error %q enabled %v next %v", got.LastStatus, got.LastError, got.Enabled, got.NextRunAt)
				}
			})
		})
	}
}

// slowModel answers after d of (virtual) time and records how many runs
// of each prompt overlapped at most.
type slowModel struct {
	mu      sync.Mutex
	d       map[string]time.Duration
	running map[string]int
	peak    map[string]int
}

func (e *testEnv) slow(d map[string]time.Duration) *slowModel {
	m := &slowModel{d: d, running: map[string]int{}, peak: map[string]int{}}
	e.model.answer = func(req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		p := lastUser(req)
		m.mu.Lock()
		m.running[p]++
		m.peak[p] = max(m.peak[p], m.running[p])
		m.mu.Unlock()
		time.Sleep(m.d[p])
		m.mu.Lock()
		m.running[p]--
		m.mu.Unlock()
		return text("done " + p), nil
	}
	return m
}

// A recurring job whose run takes longer than its period never runs
// twice at once. A slot that fell due while the previous run was going
// runs when that run ends if it is still within its grace (half the
// period, at least 2 minutes), and is skipped as missed otherwise, as in
// Hermes: never two at once, never a burst of make-up runs.
func TestJobOutlastingItsPeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		m := e.slow(map[string]time.Duration{"long": 12 * time.Minute})
		e.add(NewJob{Prompt: "long", Schedule: "every 10m"})
		cfg := e.config()
		cfg.Tick = time.Minute // the scheduler looks every minute, as Hermes' ticker does
		_, stop := e.start(cfg)
		time.Sleep(90*time.Minute + 30*time.Second)
		stop()
		if m.peak["long"] != 1 {
			t.Errorf("%d runs of the job overlapped, want 1", m.peak["long"])
		}
		// 00:10 runs till 00:22; the 00:20 slot is 2 min late (grace 5 min)
		// and runs then, till 00:34; the 00:30 slot runs 4 min late, till
		// 00:46; the 00:40 slot is 6 min late: skipped; 00:50 on time …
		want := "01-01 00:10 01-01 00:22 01-01 00:34 01-01 00:50 01-01 01:02 01-01 01:14 01-01 01:30"
		if got := strings.Join(times(e.model.callsFor("long")), " "); got != want {
			t.Errorf("runs at [%s], want [%s]", got, want)
		}
	})
}

// A job that is still running does not take the free slot from another
// job that falls due meanwhile.
func TestRunningJobDoesNotHoldUpOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.slow(map[string]time.Duration{"long": 25 * time.Minute, "other": time.Minute})
		e.add(NewJob{Prompt: "long", Schedule: "every 10m"})
		e.add(NewJob{Prompt: "other", Schedule: "25m"})
		cfg := e.config()
		cfg.MaxParallel = 2
		_, stop := e.start(cfg)
		time.Sleep(40 * time.Minute)
		stop()
		// long runs 00:10–00:35 and its 00:20 slot is due all that time;
		// other is due at 00:25 and takes the second slot on time
		calls := e.model.callsFor("other")
		if want := time.Date(2000, 1, 1, 0, 25, 0, 0, time.UTC); len(calls) != 1 || !calls[0].at.Equal(want) {
			var at []string
			for _, c := range calls {
				at = append(at, c.at.UTC().Format(time.TimeOnly))
			}
			t.Fatalf("the other job ran at %v, want once at %s", at, want.Format(time.TimeOnly))
		}
	})
}

// herald cron run on a job whose scheduled run is going is refused, not
// started beside it.
func TestRunNowWhileRunningIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		m := e.slow(map[string]time.Duration{"long": 30 * time.Minute})
		j := e.add(NewJob{Prompt: "long", Schedule: "every 1h"})
		s, stop := e.start(e.config())
		time.Sleep(time.Hour + time.Minute)
		if !e.get(j.ID).RunningSince.Equal(time.Date(2000, 1, 1, 1, 0, 0, 0, time.UTC)) {
			t.Fatalf("the job is not running at 01:01: %+v", e.get(j.ID))
		}
		if _, err := s.RunNow(context.Background(), j.ID); err == nil || !strings.Contains(err.Error(), "running already") {
			t.Fatalf("RunNow during a run: %v", err)
		}
		stop()
		if m.peak["long"] != 1 || len(e.model.callsFor("long")) != 1 {
			t.Fatalf("runs %d, overlapping %d", len(e.model.callsFor("long")), m.peak["long"])
		}
	})
}
