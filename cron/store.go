package cron

import (
	"context"
	"crypto/rand"
	"database/sql"
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

// Store is what the job store needs of herald's state store: write
// transactions that have committed when Write returns, and a read pool.
// *sessions.Store is one, on SQLite or on PostgreSQL; the SQL here is
// written to read the same on both (? placeholders, which the PostgreSQL
// store rebinds, and no engine-only syntax), and the store suite
// (sessions/storetest) runs it on both.
type Store interface {
	// Write runs fn in a transaction; on PostgreSQL fn may run more than
	// once, so it sets what it reports from scratch.
	Write(ctx context.Context, fn func(*sql.Tx) error) error
	DB() *sql.DB
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
	err = j.st.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO cron_jobs (id, name, prompt, script, schedule_kind, schedule_expr, schedule_display,
			repeat_times, enabled, state, deliver, origin, created_at, next_run_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`,
			job.ID, job.Name, job.Prompt, job.Script, string(sc.Kind), sc.Expr, sc.Display,
			nullInt(repeat), StateScheduled, deliver, origin, ms(now), ms(next))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cron: add job: %w", err)
	}
	return job, nil
}

const jobColumns = `id, name, prompt, script, schedule_kind, schedule_expr, schedule_display, repeat_times, repeat_completed,
	enabled, state, deliver, origin, created_at, next_run_at, last_run_at, last_status, last_error, last_delivery_error, running_since`

type scanner interface{ Scan(...any) error }

func scanJob(r scanner) (*Job, error) {
	var (
		job                         Job
		kind, expr, display, origin string
		repeat, next, last, running sql.NullInt64
		created                     int64
		enabled                     int
	)
	err := r.Scan(&job.ID, &job.Name, &job.Prompt, &job.Script, &kind, &expr, &display, &repeat, &job.RepeatCompleted,
		&enabled, &job.State, &job.Deliver, &origin, &created, &next, &last, &job.LastStatus, &job.LastError, &job.LastDeliveryError, &running)
	if err != nil {
		return nil, err
	}
	job.Schedule, _ = Load(Kind(kind), expr, display) // a broken row still lists; running it records the error
	job.Schedule.Kind, job.Schedule.Expr, job.Schedule.Display = Kind(kind), expr, display
	job.RepeatTimes = int(repeat.Int64)
	job.Enabled = enabled != 0
	if origin != "" {
		json.Unmarshal([]byte(origin), &job.Origin)
	}
	job.CreatedAt = fromMS(created)
	job.NextRunAt = fromNull(next)
	job.LastRunAt = fromNull(last)
	job.RunningSince = fromNull(running)
	return &job, nil
}

// Get returns one job by id (or by a unique prefix of its id).
func (j *Jobs) Get(ctx context.Context, id string) (*Job, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return nil, ErrNotFound
	}
	rows, err := j.st.DB().QueryContext(ctx, `SELECT `+jobColumns+` FROM cron_jobs WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id = ? DESC LIMIT 2`,
		id, escapeLike(id)+"%", id)
	if err != nil {
		return nil, fmt.Errorf("cron: get job: %w", err)
	}
	defer rows.Close()
	var found []*Job
	for rows.Next() {
		job, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("cron: get job: %w", err)
		}
		found = append(found, job)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cron: get job: %w", err)
	}
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
	q := `SELECT ` + jobColumns + ` FROM cron_jobs`
	if !all {
		q += ` WHERE enabled = 1 AND state NOT IN ('paused', 'completed')`
	}
	q += ` ORDER BY next_run_at IS NULL, next_run_at, created_at`
	rows, err := j.st.DB().QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("cron: list jobs: %w", err)
	}
	defer rows.Close()
	var out []*Job
	for rows.Next() {
		job, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("cron: list jobs: %w", err)
		}
		out = append(out, job)
	}
	return out, rows.Err()
}

// Remove deletes a job.
func (j *Jobs) Remove(ctx context.Context, id string) (*Job, error) {
	job, err := j.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	err = j.st.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`DELETE FROM cron_jobs WHERE id = ?`, job.ID)
		return err
	})
	if err != nil {
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
	err = j.st.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE cron_jobs SET state = ? WHERE id = ?`, StatePaused, job.ID)
		return err
	})
	if err != nil {
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
	err = j.st.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE cron_jobs SET state = ?, enabled = 1, next_run_at = ? WHERE id = ?`, StateScheduled, nullTime(next), job.ID)
		return err
	})
	if err != nil {
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
	err = j.st.Write(ctx, func(tx *sql.Tx) error {
		out, skipped = out[:0], skipped[:0]
		rows, err := tx.Query(`SELECT `+jobColumns+` FROM cron_jobs
			WHERE enabled = 1 AND state = ? AND running_since IS NULL AND next_run_at IS NOT NULL AND next_run_at <= ?
			ORDER BY next_run_at LIMIT ?`, StateScheduled, ms(now), limit)
		if err != nil {
			return err
		}
		var due []*Job
		for rows.Next() {
			job, err := scanJob(rows)
			if err != nil {
				rows.Close()
				return err
			}
			due = append(due, job)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, job := range due {
			slot := job.NextRunAt
			var next time.Time
			if job.Schedule.Recurring() {
				next = job.Schedule.After(slot, now, j.loc)
				if now.Sub(slot) > grace(job.Schedule, now, j.loc) {
					// missed while nobody was running: skip, do not burst
					if _, err := tx.Exec(`UPDATE cron_jobs SET next_run_at = ? WHERE id = ? AND next_run_at = ?`, nullTime(next), job.ID, ms(slot)); err != nil {
						return err
					}
					job.NextRunAt = next
					skipped = append(skipped, job)
					continue
				}
			}
			res, err := tx.Exec(`UPDATE cron_jobs SET next_run_at = ?, running_since = ? WHERE id = ? AND next_run_at = ? AND running_since IS NULL`,
				nullTime(next), ms(now), job.ID, ms(slot))
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				continue
			}
			job.NextRunAt, job.RunningSince = next, now
			out = append(out, claimed{job: job, due: slot})
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cron: claim due jobs: %w", err)
	}
	return out, skipped, nil
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
	err = j.st.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE cron_jobs SET running_since = ?, next_run_at = CASE WHEN ? THEN NULL ELSE next_run_at END
			WHERE id = ? AND running_since IS NULL`, ms(now), once, job.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("cron job %s is running already", job.ID)
		}
		return nil
	})
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
	status := r.Status
	err = j.st.Write(ctx, func(tx *sql.Tx) error {
		removed = false
		var times sql.NullInt64
		var done int
		var next sql.NullInt64
		err := tx.QueryRow(`SELECT repeat_times, repeat_completed, next_run_at FROM cron_jobs WHERE id = ?`, job.ID).Scan(&times, &done, &next)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // removed while it ran
		}
		if err != nil {
			return err
		}
		done++
		if times.Valid && times.Int64 > 0 && int64(done) >= times.Int64 {
			removed = true
			_, err := tx.Exec(`DELETE FROM cron_jobs WHERE id = ?`, job.ID)
			return err
		}
		state := StateScheduled
		enabled := 1
		if job.Schedule.Recurring() {
			if !next.Valid {
				state = StateError
			}
		} else if !next.Valid {
			state, enabled = StateCompleted, 0
		}
		_, err = tx.Exec(`UPDATE cron_jobs SET repeat_completed = ?, last_run_at = ?, last_status = ?, last_error = ?, last_delivery_error = ?,
			running_since = NULL, state = CASE WHEN state = 'paused' THEN state ELSE ? END, enabled = ? WHERE id = ?`,
			done, ms(r.At), status, r.Error, r.DeliveryError, state, enabled, job.ID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("cron: record run of %s: %w", job.ID, err)
	}
	return removed, nil
}

// recover settles jobs left running by a gateway that stopped in the middle
// of a run: the slot was already advanced, so it is not fired again; the
// run is recorded as an error.
func (j *Jobs) recoverInterrupted(ctx context.Context, now time.Time) ([]*Job, error) {
	var out []*Job
	err := j.st.Write(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.Query(`SELECT ` + jobColumns + ` FROM cron_jobs WHERE running_since IS NOT NULL`)
		if err != nil {
			return err
		}
		for rows.Next() {
			job, err := scanJob(rows)
			if err != nil {
				rows.Close()
				return err
			}
			out = append(out, job)
		}
		rows.Close()
		for _, job := range out {
			msg := fmt.Sprintf("interrupted: the gateway stopped while this job was running (since %s); the run is not repeated",
				job.RunningSince.In(j.loc).Format(time.RFC3339))
			state, enabled := StateScheduled, 1
			if !job.Schedule.Recurring() && job.NextRunAt.IsZero() {
				state, enabled = StateError, 0
			}
			if _, err := tx.Exec(`UPDATE cron_jobs SET running_since = NULL, last_run_at = running_since, last_status = ?, last_error = ?,
				state = CASE WHEN state = 'paused' THEN state ELSE ? END, enabled = ? WHERE id = ?`,
				StatusError, msg, state, enabled, job.ID); err != nil {
				return err
			}
			job.LastStatus, job.LastError = StatusError, msg
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("cron: settle interrupted runs: %w", err)
	}
	return out, nil
}

// nextDue is the earliest next_run_at among runnable jobs (zero if none).
func (j *Jobs) nextDue(ctx context.Context) (time.Time, error) {
	var v sql.NullInt64
	err := j.st.DB().QueryRowContext(ctx, `SELECT MIN(next_run_at) FROM cron_jobs WHERE enabled = 1 AND state = ? AND running_since IS NULL`, StateScheduled).Scan(&v)
	if err != nil {
		return time.Time{}, err
	}
	return fromNull(v), nil
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

func escapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v) }

func fromNull(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64)
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func nullInt(n int) any {
	if n <= 0 {
		return nil
	}
	return n
}
