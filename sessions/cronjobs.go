package sessions

// cronjobs.go: the cron_jobs table, for the cron package's job store. The
// rows and their transactions live here, beside the rest of herald's SQL;
// what a schedule means (the next slot, a missed one) stays with cron,
// which hands it in as functions called inside the transaction.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// CronJob is one row of cron_jobs. Zero times stand for NULL.
type CronJob struct {
	ID, Name, Prompt, Script                    string
	ScheduleKind, ScheduleExpr, ScheduleDisplay string
	// RepeatTimes is how many runs the job gets; 0 means forever.
	RepeatTimes, RepeatCompleted int
	Enabled                      bool
	State, Deliver               string
	// Origin is the chat the job was created from, as JSON ("" for none).
	Origin                                   string
	CreatedAt, NextRunAt, LastRunAt          time.Time
	LastStatus, LastError, LastDeliveryError string
	RunningSince                             time.Time
}

// CronRun is the outcome of one run, as MarkCronRun records it.
type CronRun struct {
	Status, Error, DeliveryError string
	At                           time.Time
}

// Cron job states the store itself sets.
const (
	cronScheduled = "scheduled"
	cronPaused    = "paused"
	cronCompleted = "completed"
	cronError     = "error"
)

// ErrCronJobRunning is returned (wrapped) by ClaimCronJobNow for a job
// that is running already.
var ErrCronJobRunning = errors.New("cron job is running already")

const cronJobColumns = `id, name, prompt, script, schedule_kind, schedule_expr, schedule_display, repeat_times, repeat_completed,
	enabled, state, deliver, origin, created_at, next_run_at, last_run_at, last_status, last_error, last_delivery_error, running_since`

func scanCronJob(r interface{ Scan(...any) error }) (CronJob, error) {
	var (
		j                           CronJob
		repeat, next, last, running sql.NullInt64
		created                     int64
		enabled                     int
	)
	err := r.Scan(&j.ID, &j.Name, &j.Prompt, &j.Script, &j.ScheduleKind, &j.ScheduleExpr, &j.ScheduleDisplay, &repeat, &j.RepeatCompleted,
		&enabled, &j.State, &j.Deliver, &j.Origin, &created, &next, &last, &j.LastStatus, &j.LastError, &j.LastDeliveryError, &running)
	if err != nil {
		return CronJob{}, err
	}
	j.RepeatTimes = int(repeat.Int64)
	j.Enabled = enabled != 0
	j.CreatedAt = fromMS(created)
	j.NextRunAt, j.LastRunAt, j.RunningSince = fromNullTime(next), fromNullTime(last), fromNullTime(running)
	return j, nil
}

// queryCronJobs runs q (selecting cronJobColumns) and scans every row.
func queryCronJobs(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]CronJob, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CronJob
	for rows.Next() {
		j, err := scanCronJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// AddCronJob stores a new job, enabled and scheduled.
func (s *Store) AddCronJob(ctx context.Context, j CronJob) error {
	err := s.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO cron_jobs (id, name, prompt, script, schedule_kind, schedule_expr, schedule_display,
			repeat_times, enabled, state, deliver, origin, created_at, next_run_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)`,
			j.ID, j.Name, j.Prompt, j.Script, j.ScheduleKind, j.ScheduleExpr, j.ScheduleDisplay,
			nullPositive(j.RepeatTimes), cronScheduled, j.Deliver, j.Origin, ms(j.CreatedAt), nullTime(j.NextRunAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("sessions: add cron job: %w", err)
	}
	return nil
}

// CronJobsByID returns the job whose id is id, or else the jobs whose id
// starts with it: at most two, the exact match first.
func (s *Store) CronJobsByID(ctx context.Context, id string) ([]CronJob, error) {
	out, err := queryCronJobs(ctx, s.rdb, `SELECT `+cronJobColumns+` FROM cron_jobs WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id = ? DESC, id LIMIT 2`,
		id, escapeLike(id)+"%", id)
	if err != nil {
		return nil, fmt.Errorf("sessions: read cron job %s: %w", id, err)
	}
	return out, nil
}

// CronJobs returns the jobs, soonest first; all includes paused,
// completed and disabled ones.
func (s *Store) CronJobs(ctx context.Context, all bool) ([]CronJob, error) {
	q := `SELECT ` + cronJobColumns + ` FROM cron_jobs`
	if !all {
		q += ` WHERE enabled = 1 AND state NOT IN ('paused', 'completed')`
	}
	q += ` ORDER BY next_run_at IS NULL, next_run_at, created_at`
	out, err := queryCronJobs(ctx, s.rdb, q)
	if err != nil {
		return nil, fmt.Errorf("sessions: list cron jobs: %w", err)
	}
	return out, nil
}

// DeleteCronJob removes a job.
func (s *Store) DeleteCronJob(ctx context.Context, id string) error {
	return s.cronExec(ctx, "remove cron job "+id, `DELETE FROM cron_jobs WHERE id = ?`, id)
}

// PauseCronJob stops a job from being claimed until ResumeCronJob.
func (s *Store) PauseCronJob(ctx context.Context, id string) error {
	return s.cronExec(ctx, "pause cron job "+id, `UPDATE cron_jobs SET state = ? WHERE id = ?`, cronPaused, id)
}

// ResumeCronJob schedules a job again, enabled, with its next run at next
// (zero: none).
func (s *Store) ResumeCronJob(ctx context.Context, id string, next time.Time) error {
	return s.cronExec(ctx, "resume cron job "+id, `UPDATE cron_jobs SET state = ?, enabled = 1, next_run_at = ? WHERE id = ?`,
		cronScheduled, nullTime(next), id)
}

func (s *Store) cronExec(ctx context.Context, what, q string, args ...any) error {
	err := s.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(q, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("sessions: %s: %w", what, err)
	}
	return nil
}

// CronSlot says what becomes of a due job's slot: the job's next slot
// (zero: none), and whether the slot was missed (it is skipped, not run).
type CronSlot struct {
	Next   time.Time
	Missed bool
}

// CronClaim is a job taken for one run, with the slot it was due at.
type CronClaim struct {
	CronJob
	Slot time.Time
}

// ClaimCronJobs takes up to limit due jobs for running at now, in one
// transaction: for each, slot (cron's reading of its schedule) gives the
// next slot; a missed slot only moves next_run_at on, a due one also sets
// running_since, so that no other claim — this process's, another
// replica's, or a restarted one's — runs the same slot again. A running
// job is neither claimed nor moved on: the SELECT leaves it out, and the
// UPDATE's guards hold should a concurrent claim have changed it since.
// claimed and missed come back with next_run_at (and running_since) as
// stored.
func (s *Store) ClaimCronJobs(ctx context.Context, now time.Time, limit int, slot func(CronJob) CronSlot) (claimed []CronClaim, missed []CronJob, err error) {
	err = s.Write(ctx, func(tx *sql.Tx) error {
		claimed, missed = nil, nil
		due, err := queryCronJobs(ctx, tx, `SELECT `+cronJobColumns+` FROM cron_jobs
			WHERE enabled = 1 AND state = ? AND running_since IS NULL AND next_run_at IS NOT NULL AND next_run_at <= ?
			ORDER BY next_run_at LIMIT ?`, cronScheduled, ms(now), limit)
		if err != nil {
			return err
		}
		for _, j := range due {
			at := j.NextRunAt
			sl := slot(j)
			if sl.Missed {
				if _, err := tx.Exec(`UPDATE cron_jobs SET next_run_at = ? WHERE id = ? AND next_run_at = ?`, nullTime(sl.Next), j.ID, ms(at)); err != nil {
					return err
				}
				j.NextRunAt = sl.Next
				missed = append(missed, j)
				continue
			}
			res, err := tx.Exec(`UPDATE cron_jobs SET next_run_at = ?, running_since = ? WHERE id = ? AND next_run_at = ? AND running_since IS NULL`,
				nullTime(sl.Next), ms(now), j.ID, ms(at))
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				continue
			}
			j.NextRunAt, j.RunningSince = sl.Next, now
			claimed = append(claimed, CronClaim{CronJob: j, Slot: at})
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("sessions: claim due cron jobs: %w", err)
	}
	return claimed, missed, nil
}

// ClaimCronJobNow marks a job running since now for a run outside its
// schedule; clearNext also clears its next run (a once job's run by hand
// is its one run). It fails with ErrCronJobRunning if the job runs
// already.
func (s *Store) ClaimCronJobNow(ctx context.Context, id string, now time.Time, clearNext bool) error {
	err := s.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.Exec(`UPDATE cron_jobs SET running_since = ?, next_run_at = CASE WHEN ? THEN NULL ELSE next_run_at END
			WHERE id = ? AND running_since IS NULL`, ms(now), clearNext, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("%w: %s", ErrCronJobRunning, id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sessions: claim cron job %s: %w", id, err)
	}
	return nil
}

// MarkCronRun records a finished run of a job (Hermes' mark_job_run):
// last_run_at, last_status, last_error, last_delivery_error (overwritten
// every run, so a good delivery clears an old failure), and the repeat
// count. A job that has used up its repeats is removed (removed reports
// it); a recurring job left without a next run goes to state error (it is
// not disabled), a once job to completed. A paused job stays paused.
func (s *Store) MarkCronRun(ctx context.Context, id string, recurring bool, r CronRun) (removed bool, err error) {
	err = s.Write(ctx, func(tx *sql.Tx) error {
		removed = false
		var times, next sql.NullInt64
		var done int
		err := tx.QueryRow(`SELECT repeat_times, repeat_completed, next_run_at FROM cron_jobs WHERE id = ?`, id).Scan(&times, &done, &next)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // removed while it ran
		}
		if err != nil {
			return err
		}
		done++
		if times.Valid && times.Int64 > 0 && int64(done) >= times.Int64 {
			removed = true
			_, err := tx.Exec(`DELETE FROM cron_jobs WHERE id = ?`, id)
			return err
		}
		state, enabled := cronScheduled, 1
		switch {
		case recurring && !next.Valid:
			state = cronError
		case !recurring && !next.Valid:
			state, enabled = cronCompleted, 0
		}
		_, err = tx.Exec(`UPDATE cron_jobs SET repeat_completed = ?, last_run_at = ?, last_status = ?, last_error = ?, last_delivery_error = ?,
			running_since = NULL, state = CASE WHEN state = 'paused' THEN state ELSE ? END, enabled = ? WHERE id = ?`,
			done, ms(r.At), r.Status, r.Error, r.DeliveryError, state, enabled, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sessions: record the run of cron job %s: %w", id, err)
	}
	return removed, nil
}

// SettleInterruptedCronRuns settles the jobs left running by a process
// that stopped in the middle of a run: their slot was already moved on,
// so it is not run again; the run is recorded as status with the error
// settle gives, and settle says whether the job is recurring (a once job
// with no next run is disabled, in state error). It returns the jobs as
// they were found.
func (s *Store) SettleInterruptedCronRuns(ctx context.Context, status string, settle func(CronJob) (msg string, recurring bool)) ([]CronJob, error) {
	var out []CronJob
	err := s.Write(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = queryCronJobs(ctx, tx, `SELECT `+cronJobColumns+` FROM cron_jobs WHERE running_since IS NOT NULL`)
		if err != nil {
			return err
		}
		for _, j := range out {
			msg, recurring := settle(j)
			state, enabled := cronScheduled, 1
			if !recurring && j.NextRunAt.IsZero() {
				state, enabled = cronError, 0
			}
			if _, err := tx.Exec(`UPDATE cron_jobs SET running_since = NULL, last_run_at = running_since, last_status = ?, last_error = ?,
				state = CASE WHEN state = 'paused' THEN state ELSE ? END, enabled = ? WHERE id = ?`,
				status, msg, state, enabled, j.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sessions: settle interrupted cron runs: %w", err)
	}
	return out, nil
}

// NextCronDue is the earliest next run among the jobs that may be claimed
// (zero if none).
func (s *Store) NextCronDue(ctx context.Context) (time.Time, error) {
	var v sql.NullInt64
	err := s.rdb.QueryRowContext(ctx, `SELECT MIN(next_run_at) FROM cron_jobs WHERE enabled = 1 AND state = ? AND running_since IS NULL`, cronScheduled).Scan(&v)
	if err != nil {
		return time.Time{}, fmt.Errorf("sessions: next cron job due: %w", err)
	}
	return fromNullTime(v), nil
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func fromNullTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMS(v.Int64)
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return ms(t)
}

func nullPositive(n int) any {
	if n <= 0 {
		return nil
	}
	return n
}
