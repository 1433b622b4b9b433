package replica

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/cron"
	"github.com/heraldgw/herald/sessions"
	"github.com/heraldgw/herald/sessions/pgtest"
)

// cronRun is one job run: which replica's model was asked what.
type cronRun struct{ replica, prompt string }

// cronModel tells runs of every prompt it gets and answers like echo.
type cronModel struct {
	name string
	runs chan<- cronRun
}

func (m cronModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == openai.ChatMessageRoleUser {
			m.runs <- cronRun{m.name, req.Messages[i].Content}
			break
		}
	}
	return agent.Echo{}.Complete(ctx, req)
}

// Three replicas run cron on one job store: over 50 ticks, a job added
// each tick runs once, on the leader only; when the leader dies (its
// context cancelled, its connection gone) another replica leads within a
// tick and the jobs go on running once.
func TestCronRunsOnceOnTheLeader(t *testing.T) {
	url := pgtest.URL(t)
	st, err := sessions.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// jobs added a minute in the past with a one-minute delay are due now
	adder := cron.NewJobs(st, time.UTC, func() time.Time { return time.Now().Add(-time.Minute) })
	const tick = 50 * time.Millisecond
	runs := make(chan cronRun, 200)
	coords := map[string]*Coordinator{}
	kills := map[string]context.CancelFunc{}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	for i := range 3 {
		name := fmt.Sprintf("r%d", i)
		db, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		life, kill := context.WithCancel(context.Background())
		defer kill()
		cfg := testConfig
		cfg.ID = name
		c, err := Open(life, db, cfg)
		if err != nil {
			t.Fatal(err)
		}
		coords[name], kills[name] = c, kill
		s := cron.New(cron.Config{Jobs: cron.NewJobs(st, time.UTC, nil), Tick: tick, Leader: c.Leader(),
			Agent: &agent.Agent{Model: cronModel{name, runs}, Tools: agent.NewTools()}})
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Run(ctx)
		}()
	}
	leaders := func() (out []string) {
		for name, c := range coords {
			if c.leading.Load() {
				out = append(out, name)
			}
		}
		return out
	}
	var by []string
	killed := ""
	for i := range 50 {
		if i == 25 {
			killed = by[len(by)-1]
			kills[killed]()
		}
		prompt := fmt.Sprintf("job %d", i)
		if _, err := adder.Add(ctx, cron.NewJob{Prompt: prompt, Schedule: "1m"}); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-runs:
			if r.prompt != prompt {
				t.Fatalf("ran %q, want %q", r.prompt, prompt)
			}
			by = append(by, r.replica)
		case <-time.After(time.Minute):
			t.Fatalf("job %d did not run", i)
		}
		if l := leaders(); len(l) > 1 {
			t.Fatalf("several leaders: %v", l)
		}
	}
	cancel()
	wg.Wait()
	close(runs)
	for r := range runs {
		t.Errorf("a run more: %+v", r)
	}
	// the job added as the leader is killed may still be claimed by it
	// (it was mid-tick); from the next tick on the new leader runs them
	next := by[len(by)-1]
	for i, r := range by {
		ok := r == by[0]
		switch {
		case next == killed:
			ok = false
		case i >= 27:
			ok = r == next
		case i >= 25:
			ok = r == next || r == killed
		}
		if !ok {
			t.Fatalf("runs by %v: want one leader before the kill (of %s) and another after", by, killed)
		}
	}
}
