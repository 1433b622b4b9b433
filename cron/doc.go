// Package cron is herald's scheduled jobs: a prompt (or a script, or
// both) that runs on a schedule and delivers its output to chats.
//
// Schedules are parsed by Parse: "30m"/"2h"/"1d" (once, after that delay),
// "every 30m", five-field cron expressions (robfig/cron/v3, with an
// optional CRON_TZ= prefix) and ISO timestamps (once); nothing repeats more
// often than once a minute (@every 10s is refused like every 10s), and a
// length beyond about 290 years is refused rather than wrapped around into
// another. robfig/cron is used only to parse and compute next times; the
// loop is herald's own, because the source of truth is the cron_jobs table
// of the state store (state.db, or the PostgreSQL several replicas share),
// which the CLI edits while the gateway runs. The job store reaches that
// table through Store (satisfied by *sessions.Store), whose SQL lives in
// package sessions; what a schedule means stays here.
//
// Promises:
//
//   - At most once per slot. A scheduler claims a due job in one write
//     transaction that advances its next_run_at (or clears it, for a once
//     job) and marks it running, before anything runs. Two schedulers on
//     one database claim a slot once; a crash after the claim loses that
//     run rather than repeating it (the next start records it as an
//     interrupted error). A once job run by hand (RunNow) is claimed the
//     same way: that run is its one run.
//   - One run of a job at a time. A job that is still running is not
//     claimed again, by its schedule or by RunNow; a slot that falls due
//     meanwhile waits for the run to end and is then treated like any late
//     slot (below). A running job keeps no other due job waiting beyond
//     the parallel limit.
//   - Missed runs are skipped. A recurring slot more than its grace late
//     (half the period, between 2 minutes and 2 hours) is fast-forwarded to
//     the next future slot without running, so a gateway that was down, or
//     a job that outlasted its period, does not fire a burst; a slot within
//     its grace runs late, once.
//   - Bounded parallelism: at most Config.MaxParallel jobs run at once;
//     the rest wait, unclaimed, for a free slot.
//   - Failure is contained. Each run has a recover boundary, a timeout and
//     its own context; a panicking job is recorded as an error and the
//     scheduler goes on.
//   - Each run saves its output under $HERALD_HOME/cron/output/<job>/ and
//     is recorded (last_run_at, last_status
//     ok|error|delivery_failed|queued|maybe_sent, last_error,
//     last_delivery_error). A delivery the gateway queued for later or
//     that may have gone through is recorded as such, never sent again.
//     A successful reply containing
//     [SILENT] is not delivered; a failure is always delivered, as
//     "⚠️ Cron job '<name>' failed:" and the error.
//   - Jobs run without the cron and messaging tools, and with no approver,
//     so dangerous commands are denied.
//
// Blocking: Run blocks until its context ends and then waits for running
// jobs, whose contexts end with it. RunNow blocks for one run.
package cron
