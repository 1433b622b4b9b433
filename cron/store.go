package cron

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/sessions"
)

// State values of a job, with Hermes' names.
const (
	StateScheduled = "scheduled"
	StatePaused    = "paused"
	StateCompleted = "completed"
	StateError     = "error"
)

// Status values of a job's last run. Queued and maybe_sent are runs that
// worked and whose delivery did not fail but is not known to be done: the
// text waits in the gateway's outbound queue (a long rate limit) and goes
// when the platform allows, or a send timed out after it was written and
// may be in the chat. Neither is sent again.
const (
	StatusOK             = "ok"
	StatusError          = "error"
	StatusDeliveryFailed = "delivery_failed"
	StatusQueued         = "queued"
	StatusMaybeSent      = "maybe_sent"
)

// Job is one scheduled job as stored in state.db (table cron_jobs).
type Job struct {
	ID       string
	Name     string
	Prompt   string
	Script   string
	Schedule Schedule
	// RepeatTimes is how many runs the job gets; 0 means forever.
	RepeatTimes     int
	RepeatCompleted int
	Enabled         bool
	State           string
	// Deliver is where output goes: local, origin, a platform, a
	// platform:chat_id[:thread_id], a comma list of those, or all.
	Deliver string
	// Origin is the chat the job was created from (zero for the CLI).
	Origin    herald.Target
	CreatedAt time.Time
	NextRunAt time.Time // zero: none
	LastRunAt time.Time // zero: never
	// LastStatus is "", ok, error, delivery_failed, queued or maybe_sent.
	LastStatus string
	// LastDeliveryError is what went wrong with the last run's delivery,
	// or for a queued or maybe_sent run what is not known to be done.
	LastError         string
	LastDeliveryError string
	RunningSince      time.Time // zero: not running
}

// Store is what the job store needs of herald's state store: the rows of
// cron_jobs and the transactions over them. *sessions.Store is one, on
// SQLite or on PostgreSQL; what a schedule means stays here and is handed
// in as functions.
type Store interface {
	AddCronJob(ctx context.Context, j sessions.CronJob) error
	CronJobsByID(ctx context.Context, id string) ([]sessions.CronJob, error)
	CronJobs(ctx context.Context, all bool) ([]sessions.CronJob, error)
	DeleteCronJob(ctx context.Context, id string) error
	PauseCronJob(ctx context.Context, id string) error
	ResumeCronJob(ctx context.Context, id string, next time.Time) error
	ClaimCronJobs(ctx context.Context, now time.Time, limit int, slot func(sessions.CronJob) sessions.CronSlot) (claimed []sessions.CronClaim, missed []sessions.CronJob, err error)
	ClaimCronJobNow(ctx context.Context, id string, now time.Time, clearNext bool) error
	MarkCronRun(ctx context.Context, id string, recurring bool, r sessions.CronRun) (removed bool, err error)
	SettleInterruptedCronRuns(ctx context.Context, status string, settle func(sessions.CronJob) (msg string, recurring bool)) ([]sessions.CronJob, error)
	NextCronDue(ctx context.Context) (time.Time, error)
}

var _ Store = (*sessions.Store)(nil)

// Jobs is the job store on herald's state database. CLI commands and the
// gateway's scheduler share it: a change made by one is seen by the other
// at its next read.
type Jobs struct {
	st  Store
	loc *time.Location
	now func() time.Time
}

// NewJobs returns the job store. loc is the zone of schedules that name
// none (nil: time.Local); now may be nil (time.Now).
func NewJobs(st Store, loc *time.Location, now func() time.Time) *Jobs {
	if loc == nil {
		loc = time.Local
	}
	if now == nil {
		now = time.Now
	}
	return &Jobs{st: st, loc: loc, now: now}
}

// Location is the zone schedules without their own are read in.
func (j *Jobs) Location() *time.Location { return j.loc }

// ErrNotFound is returned for an unknown job id.
var ErrNotFound = errors.New("no such cron job")

// NewJob describes a job to add.
type NewJob struct {
	Name     string
	Prompt   string
	Script   string
	Schedule string
	// Repeat: 0 means the default (1 for once schedules, forever for
	// recurring ones); a negative value means forever.
	Repeat  int
	Deliver string
	Origin  herald.Target
}

// Add validates and stores a new job and returns it.
func (j *Jobs) Add(ctx context.Context, n NewJob) (*Job, error) {
	now := j.now()
	sc, err := Parse(n.Schedule, now, j.loc)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(n.Prompt) == "" && strings.TrimSpace(n.Script) == "" {
		return nil, errors.New("a cron job needs a prompt or a script")
	}
	deliver := strings.TrimSpace(n.Deliver)
	if deliver == "" {
		deliver = "local"
		if n.Origin.Platform != "" {
			deliver = "origin"
		}
	}
	if err := checkDeliver(deliver); err != nil {
		return nil, err
	}
	repeat := n.Repeat
	switch {
	case repeat < 0:
		repeat = 0
	case repeat == 0 && !sc.Recurring():
		repeat = 1
	}
	name := strings.TrimSpace(n.Name)
	if name == "" {
		name = firstChars(strings.Join(strings.Fields(firstNonEmpty(n.Prompt, n.Script)), " "), 50)
	}
	next := sc.First(now, j.loc)
	if next.IsZero() {
		return nil, fmt.Errorf("%w: %q never runs", ErrSchedule, n.Schedule)
	}
	job := &Job{
		ID: newID(), Name: name, Prompt: n.Prompt, Script: n.Script, Schedule: sc, RepeatTimes: repeat,
		Enabled: true, State: StateScheduled, Deliver: deliver, Origin: n.Origin, CreatedAt: now, NextRunAt: next,
	}
	var origin string
	if n.Origin.Platform != "" {
		b, _ := json.Marshal(n.Origin)
		origin = string(b)
	}
	err = j.st.AddCronJob(ctx, sessions.CronJob{
		ID: job.ID, Name: job.Name, Prompt: job.Prompt, Script: job.Script,
		ScheduleKind: string(sc.Kind), ScheduleExpr: sc.Expr, ScheduleDisplay: sc.Display,
		RepeatTimes: repeat, Deliver: deliver, Origin: origin, CreatedAt: now, NextRunAt: next,
	})
	if err != nil {
		return nil, fmt.Errorf("cron: add job: %w", err)
	}
	return job, nil
}

// fromRow reads a stored row as a Job.
func fromRow(r sessions.CronJob) *Job {
	job := &Job{
		ID: r.ID, Name: r.Name, Prompt: r.Prompt, Script: r.Script, RepeatTimes: r.RepeatTimes, RepeatCompleted: r.RepeatCompleted,
		Enabled: r.Enabled, State: r.State, Deliver: r.Deliver, CreatedAt: r.CreatedAt, NextRunAt: r.NextRunAt, LastRunAt: r.LastRunAt,
		LastStatus: r.LastStatus, LastError: r.LastError, LastDeliveryError: r.LastDeliveryError, RunningSince: r.RunningSince,
	}
	kind := Kind(r.ScheduleKind)
	job.Schedule, _ = Load(kind, r.ScheduleExpr, r.ScheduleDisplay) // a broken row still lists; running it records the error
	job.Schedule.Kind, job.Schedule.Expr, job.Schedule.Display = kind, r.ScheduleExpr, r.ScheduleDisplay
	if r.Origin != "" {
		json.Unmarshal([]byte(r.Origin), &job.Origin)
	}
	return job
}

func fromRows(rows []sessions.CronJob) []*Job {
	out := make([]*Job, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r)
	}
	return out
}

// Get returns one job by id (or by a unique prefix of its id).
func (j *Jobs) Get(ctx context.Context, id string) (*Job, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return nil, ErrNotFound
	}
	rows, err := j.st.CronJobsByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("cron: get job: %w", err)
	}
	found := fromRows(rows)
	switch {
	case len(found) == 0:
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	case found[0].ID == id || len(found) == 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("cron: %q matches more than one job; give more of the id", id)
}

// List returns the jobs, soonest first; all includes paused, completed
// and disabled ones.
func (j *Jobs) List(ctx context.Context, all bool) ([]*Job, error) {
	rows, err := j.st.CronJobs(ctx, all)
	if err != nil {
		return nil, fmt.Errorf("cron: list jobs: %w", err)
	}
	return fromRows(rows), nil
}

// Remove deletes a job.
func (j *Jobs) Remove(ctx context.Context, id string) (*Job, error) {
	job, err := j.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := j.st.DeleteCronJob(ctx, job.ID); err != nil {
		return nil, fmt.Errorf("cron: remove job: %w", err)
	}
	return job, nil
}

// Pause stops a job from running until Resume.
func (j *Jobs) Pause(ctx context.Context, id string) (*Job, error) {
	job, err := j.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := j.st.PauseCronJob(ctx, job.ID); err != nil {
		return nil, fmt.Errorf("cron: pause job: %w", err)
	}
	job.State = StatePaused
	return job, nil
}

// Resume lets a paused job run again; its next run is computed from now,
// so runs that fell in the pause are not made up.
func (j *Jobs) Resume(ctx context.Context, id string) (*Job, error) {
	job, err := j.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	now := j.now()
	next := job.NextRunAt
	if job.Schedule.Recurring() {
		next = job.Schedule.Next(now, j.loc)
	}
	if err := j.st.ResumeCronJob(ctx, job.ID, next); err != nil {
		return nil, fmt.Errorf("cron: resume job: %w", err)
	}
	job.State, job.Enabled, job.NextRunAt = StateScheduled, true, next
	return job, nil
}

// claimed is a job taken by a scheduler for one run, with the slot time
// it was due at.
type claimed struct {
	job    *Job
	due    time.Time
	manual bool
}

// claim takes every due job for running. In the same transaction it
// advances each one's next_run_at (or clears it for a once job) and sets
// running_since, so that no other claim — in this process, another
// process, or this one after a crash — runs the same slot again. A
// recurring job whose slot is older than its grace (the gateway was down)
// is fast-forwarded to its next future slot without running. A job that is
// running is neither claimed nor fast-forwarded: the SELECT leaves it out
// (so it cannot take a free slot from a job that is due), and the UPDATE's
// own guards are a second line should the two ever stop sharing one
// transaction.
func (j *Jobs) claim(ctx context.Context, now time.Time, limit int) (out []claimed, skipped []*Job, err error) {
	taken, missed, err := j.st.ClaimCronJobs(ctx, now, limit, func(r sessions.CronJob) sessions.CronSlot {
		sc := fromRow(r).Schedule
		if !sc.Recurring() {
			return sessions.CronSlot{}
		}
		slot := r.NextRunAt
		// missed while nobody was running: skip, do not burst
		return sessions.CronSlot{Next: sc.After(slot, now, j.loc), Missed: now.Sub(slot) > grace(sc, now, j.loc)}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cron: claim due jobs: %w", err)
	}
	for _, c := range taken {
		out = append(out, claimed{job: fromRow(c.CronJob), due: c.Slot})
	}
	return out, fromRows(missed), nil
}

// claimNow takes one job for a run outside its schedule (herald cron run).
// A recurring job keeps its next_run_at; a once job's run by hand is its
// one run, so its next_run_at is cleared as a scheduled claim would, and a
// crash during the run does not leave it to run again later. It fails if
// the job is running already.
func (j *Jobs) claimNow(ctx context.Context, id string, now time.Time) (*Job, error) {
	job, err := j.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	once := !job.Schedule.Recurring()
	err = j.st.ClaimCronJobNow(ctx, job.ID, now, once)
	if err != nil {
		return nil, fmt.Errorf("cron: run job: %w", err)
	}
	job.RunningSince = now
	if once {
		job.NextRunAt = time.Time{}
	}
	return job, nil
}

// RunRecord is the outcome of one run, as mark records it.
type RunRecord struct {
	// Status is one of the Status values (Outcome.Status).
	Status string
	Error  string
	// DeliveryError is the delivery failure, or what a queued or
	// maybe_sent delivery left open.
	DeliveryError string
	// Manual runs (herald cron run) count like scheduled ones.
	At time.Time
}

// mark records a finished run (Hermes' mark_job_run): last_run_at,
// last_status, last_error, last_delivery_error (overwritten every run, so
// a good delivery clears an old failure), and the repeat count. A job that
// has used up its repeats is removed; a recurring job whose next run
// cannot be computed goes to state error (it is not disabled).
func (j *Jobs) mark(ctx context.Context, job *Job, r RunRecord) (removed bool, err error) {
	removed, err = j.st.MarkCronRun(ctx, job.ID, job.Schedule.Recurring(), sessions.CronRun{Status: r.Status, Error: r.Error, DeliveryError: r.DeliveryError, At: r.At})
	if err != nil {
		return false, fmt.Errorf("cron: record run of %s: %w", job.ID, err)
	}
	return removed, nil
}

// recoverInterrupted settles jobs left running by a gateway that stopped
// in the middle of a run: the slot was already advanced, so it is not
// fired again; the run is recorded as an error.
func (j *Jobs) recoverInterrupted(ctx context.Context, now time.Time) ([]*Job, error) {
	message := func(r sessions.CronJob) string {
		return fmt.Sprintf("interrupted: the gateway stopped while this job was running (since %s); the run is not repeated",
			r.RunningSince.In(j.loc).Format(time.RFC3339))
	}
	rows, err := j.st.SettleInterruptedCronRuns(ctx, StatusError, func(r sessions.CronJob) (string, bool) {
		return message(r), fromRow(r).Schedule.Recurring()
	})
	if err != nil {
		return nil, fmt.Errorf("cron: settle interrupted runs: %w", err)
	}
	out := fromRows(rows)
	for i, job := range out {
		job.LastStatus, job.LastError = StatusError, message(rows[i])
	}
	return out, nil
}

// nextDue is the earliest next_run_at among runnable jobs (zero if none).
func (j *Jobs) nextDue(ctx context.Context) (time.Time, error) {
	return j.st.NextCronDue(ctx)
}

// grace is how late a recurring slot may start and still run: half the
// period, at least 2 minutes and at most 2 hours. Later than that the run
// counts as missed.
func grace(s Schedule, now time.Time, loc *time.Location) time.Duration {
	g := s.Period(now, loc) / 2
	return min(max(g, 2*time.Minute), 2*time.Hour)
}

func checkDeliver(s string) error {
	for _, tok := range strings.Split(s, ",") {
		tok = strings.TrimSpace(tok)
		switch strings.ToLower(tok) {
		case "local", "origin", "all":
			continue
		}
		if _, err := herald.ParseTarget(tok); err != nil {
			return fmt.Errorf("cron: deliver %q: %w", s, err)
		}
	}
	return nil
}

func newID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func firstChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}
