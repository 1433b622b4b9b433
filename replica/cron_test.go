package replica

import (
	"context"
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
	ended := map[string]chan struct{}{} // closed when the replica's scheduler returned
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	for i := range 3 {
		name := fmt.Sprintf("r%d", i)
		c, kill := openLeaderCoord(t, url, name)
		coords[name], kills[name] = c, kill
		s := cron.New(cron.Config{Jobs: cron.NewJobs(st, time.UTC, nil), Tick: tick, Leader: c.Leader(), Log: c.cfg.Log,
			Agent: &agent.Agent{Model: cronModel{name, runs}, Tools: agent.NewTools()}})
		ended[name] = make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(ended[name])
			s.Run(ctx)
		}()
	}
	leaders := func() (out []string) {
		for name, c := range coords {
			if c.Leader().Leading() {
				out = append(out, name)
			}
		}
		return out
	}
	var by []string
	killed := ""
	var killedAt time.Time
	for i := range 50 {
		if i == 25 {
			// the leader dies between two jobs (a job it had claimed as
			// it died would be lost, not run again: at most once)
			killed = by[len(by)-1]
			kills[killed]()
			<-ended[killed]
			killedAt = time.Now()
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
			if i == 25 {
				t.Logf("the next leader ran a job %s (%.1f ticks) after the leader died", time.Since(killedAt).Round(time.Millisecond), float64(time.Since(killedAt))/float64(tick))
			}
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
	next := by[len(by)-1]
	for i, r := range by {
		if i < 25 && r != by[0] || i >= 25 && (r == killed || r != next) {
			t.Fatalf("runs by %v: want one leader before the kill (of %s) and another after", by, killed)
		}
	}
}
