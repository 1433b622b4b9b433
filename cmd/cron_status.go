package cmd

// cron_status.go: herald cron status — whether the scheduler runs (it
// runs inside the gateway, so: whether a gateway runs on this home) and,
// for every job, paused and finished ones too, its next run, its last run
// and how that went.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/heraldgw/herald/cron"
)

func (e *env) cronStatus(ctx context.Context, args []string) error {
	fs := e.flags("cron status")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("usage: herald cron status")
	}
	jobs, home, closeFn, err := e.openJobs()
	if err != nil {
		return err
	}
	defer closeFn()
	list, err := jobs.List(ctx, true)
	if err != nil {
		return err
	}
	w := e.stdout
	switch pid := runningGateway(home); pid {
	case 0:
		fmt.Fprintf(w, "Scheduler: not running (no gateway on %s), so jobs will not fire. Start it with: herald gateway\n", home)
	case -1:
		fmt.Fprintln(w, "Scheduler: running (in the gateway)")
	default:
		fmt.Fprintf(w, "Scheduler: running (in the gateway, pid %d)\n", pid)
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "No scheduled jobs.")
		return nil
	}
	fmt.Fprintln(w)
	// the jobs that will run, soonest first (List's order), then the rest
	idle := func(j *cron.Job) bool {
		switch jobBadge(j) {
		case "paused", "completed", "disabled":
			return true
		}
		return false
	}
	slices.SortStableFunc(list, func(a, b *cron.Job) int {
		return cmp.Compare(b2i(idle(a)), b2i(idle(b)))
	})
	loc := jobs.Location()
	at := func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.In(loc).Format(timeLayout)
	}
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tNAME\tSTATE\tSCHEDULE\tNEXT RUN\tLAST RUN\tLAST STATUS")
	for _, j := range list {
		state := jobBadge(j)
		if !j.RunningSince.IsZero() {
			state = "running since " + j.RunningSince.In(loc).Format("15:04")
		}
		next := at(j.NextRunAt)
		if idle(j) {
			next = "—" // it will not run until resumed
		}
		status := j.LastStatus
		if status == "" {
			status = "—"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, oneLine(j.Name), state, j.Schedule.Display,
			next, at(j.LastRunAt), status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, j := range list {
		switch {
		case j.LastStatus == cron.StatusError && j.LastError != "":
			fmt.Fprintf(w, "⚠ %s: %s\n", j.ID, oneLine(j.LastError))
		case j.LastDeliveryError != "":
			fmt.Fprintf(w, "⚠ %s: delivery: %s\n", j.ID, oneLine(j.LastDeliveryError))
		}
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
