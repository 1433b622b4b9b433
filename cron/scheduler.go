package cron

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/agent"
)

// Runner runs one agent turn; *agent.Agent is one.
type Runner interface {
	Run(ctx context.Context, prompt string, o agent.Options) (*agent.Result, error)
}

// ToolName is the agent tool that manages jobs from a chat. Jobs run
// without it and without the messaging tools, as in Hermes.
const ToolName = "cronjob"

// jobDisabledTools are left out of every job's agent run.
var jobDisabledTools = []string{ToolName, "send_message", "clarify"}

// Config wires a Scheduler.
type Config struct {
	Jobs  *Jobs
	Agent Runner
	// Deliverer sends results; nil means nothing can be delivered (every
	// delivery is recorded as failed).
	Deliverer herald.Deliverer
	// Homes maps each configured platform to its home channel ("" when
	// none is set); "all" and bare-platform targets use it.
	Homes map[herald.Platform]string
	// Home is $HERALD_HOME; output goes to Home/cron/output.
	Home string
	// MaxParallel bounds the jobs running at once (default 4).
	MaxParallel int
	// Wrap frames delivered results (cron.wrap_response, default on).
	Wrap bool
	// Tick is the longest wait between two looks at the store, so that
	// jobs added from the CLI are seen (default 60 s).
	Tick time.Duration
	// ScriptTimeout bounds a job's script (default 5 min); JobTimeout a
	// whole run (default 30 min).
	ScriptTimeout time.Duration
	JobTimeout    time.Duration
	Redactor      *herald.Redactor
	Log           *slog.Logger
	// Leader, when set, lets this process schedule only while it leads
	// (several gateway replicas on one database, leader.go); nil: always.
	Leader Leader
}

// Scheduler claims due jobs from the store and runs them.
type Scheduler struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}
	sem  chan struct{}
	wg   sync.WaitGroup
}

// New returns a Scheduler; nothing runs until Run.
func New(cfg Config) *Scheduler {
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = 4
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Minute
	}
	if cfg.ScriptTimeout <= 0 {
		cfg.ScriptTimeout = 5 * time.Minute
	}
	if cfg.JobTimeout <= 0 {
		cfg.JobTimeout = 30 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Scheduler{cfg: cfg, log: cfg.Log, wake: make(chan struct{}, 1), sem: make(chan struct{}, cfg.MaxParallel)}
}

// Wake makes the scheduler look at the store now (a job was added).
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run schedules until ctx ends, then waits for running jobs (whose
// context is cancelled with it) and returns. Runs left unfinished by an
// earlier process are recorded as interrupted first, never repeated.
func (s *Scheduler) Run(ctx context.Context) error {
	defer s.wg.Wait()
	if s.cfg.Leader != nil {
		return s.runLed(ctx)
	}
	s.schedule(ctx)
	return nil
}

// schedule is Run's loop: it settles interrupted runs, then claims and
// starts due jobs until ctx ends.
func (s *Scheduler) schedule(ctx context.Context) {
	now := time.Now()
	if jobs, err := s.cfg.Jobs.recoverInterrupted(ctx, now); err != nil {
		s.log.Error("cron: settling interrupted runs failed", "err", err)
	} else {
		for _, j := range jobs {
			s.log.Warn("cron job was interrupted by a restart; not running that slot again", "job", j.ID, "name", j.Name)
		}
	}
	s.log.Info("cron scheduler started", "max_parallel", s.cfg.MaxParallel)
	for {
		started := s.tick(ctx)
		wait := s.cfg.Tick
		if len(s.sem) == cap(s.sem) {
			// every slot is busy: a finishing job wakes the loop
		} else if next, err := s.cfg.Jobs.nextDue(ctx); err == nil && !next.IsZero() {
			if d := time.Until(next); d < wait {
				wait = max(d, 0)
			}
			if wait == 0 && started == 0 {
				// due but not claimable right now (another scheduler has
				// it): look again shortly rather than spin
				wait = time.Second
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// tick claims as many due jobs as there are free slots, starts them, and
// returns how many it started.
func (s *Scheduler) tick(ctx context.Context) int {
	free := s.cfg.MaxParallel - len(s.sem)
	if free <= 0 {
		return 0
	}
	now := time.Now()
	jobs, skipped, err := s.cfg.Jobs.claim(ctx, now, free)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("cron: claiming due jobs failed", "err", err)
		}
		return 0
	}
	for _, j := range skipped {
		s.log.Warn("cron job missed its run (the gateway was down, or its previous run outlasted the slot's grace); skipped to the next one", "job", j.ID, "name", j.Name, "next_run_at", j.NextRunAt.Format(time.RFC3339))
	}
	for _, c := range jobs {
		s.sem <- struct{}{}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.sem; s.Wake() }()
			s.runClaimed(ctx, c.job)
		}()
	}
	return len(jobs)
}

// Outcome is what one run did.
type Outcome struct {
	Job        *Job
	Response   string
	Err        error
	Silent     bool
	OutputPath string
	// Delivered lists the targets reached; DeliveryError joins the
	// failures ("" when no delivery failed).
	Delivered     []string
	DeliveryError string
	// Queued lists the targets whose text waits in the gateway's
	// outbound queue, each with the time it may go ("telegram:42 until
	// 2026-12-03T08:00:00Z"); MaybeSent those whose send timed out after
	// it was written. Neither is sent again.
	Queued    []string
	MaybeSent []string
	// Removed is set when the run used up the job's repeats.
	Removed bool
}

// Status is the run's status as recorded: error, delivery_failed,
// queued, maybe_sent or ok, the first that applies.
func (o *Outcome) Status() string {
	switch {
	case o.Err != nil:
		return StatusError
	case o.DeliveryError != "":
		return StatusDeliveryFailed
	case len(o.Queued) > 0:
		return StatusQueued
	case len(o.MaybeSent) > 0:
		return StatusMaybeSent
	}
	return StatusOK
}

// deliveryText is what is recorded as the run's last_delivery_error: the
// failures, what is queued and what may have been sent.
func (o *Outcome) deliveryText() string {
	var parts []string
	if o.DeliveryError != "" {
		parts = append(parts, o.DeliveryError)
	}
	if len(o.Queued) > 0 {
		parts = append(parts, "queued for later (the platform asked to wait): "+strings.Join(o.Queued, ", "))
	}
	if len(o.MaybeSent) > 0 {
		parts = append(parts, "may have been sent (timed out after it was written; not sent again): "+strings.Join(o.MaybeSent, ", "))
	}
	return strings.Join(parts, "; ")
}

// RunNow runs a job at once, outside its schedule (herald cron run), and
// waits for it. Its next scheduled run is unchanged.
func (s *Scheduler) RunNow(ctx context.Context, id string) (*Outcome, error) {
	job, err := s.cfg.Jobs.claimNow(ctx, id, time.Now())
	if err != nil {
		return nil, err
	}
	s.wg.Add(1)
	defer s.wg.Done()
	return s.runClaimed(ctx, job), nil
}

func (s *Scheduler) runClaimed(ctx context.Context, job *Job) *Outcome {
	start := time.Now()
	log := s.log.With("job", job.ID, "name", job.Name)
	log.Info("cron job running")
	jctx, cancel := context.WithTimeout(ctx, s.cfg.JobTimeout)
	out := s.execute(jctx, job, start)
	cancel()
	if ctx.Err() == nil {
		s.deliver(ctx, job, out)
	} else if !out.Silent {
		out.DeliveryError = "not delivered: the gateway was stopping"
	}
	rec := RunRecord{Status: out.Status(), DeliveryError: out.deliveryText(), At: start}
	if out.Err != nil {
		rec.Error = s.redact(out.Err.Error())
	}
	mctx, mcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	removed, err := s.cfg.Jobs.mark(mctx, job, rec)
	mcancel()
	out.Removed = removed
	if err != nil {
		log.Error("cron: recording the run failed", "err", err)
	}
	switch {
	case out.Err != nil:
		log.Error("cron job failed", "err", rec.Error, "took", time.Since(start).Round(time.Millisecond))
	case out.DeliveryError != "":
		log.Warn("cron job ran but delivery failed", "err", out.DeliveryError, "took", time.Since(start).Round(time.Millisecond))
	case rec.Status != StatusOK:
		log.Warn("cron job done; its delivery is not known to be done", "status", rec.Status, "delivery", rec.DeliveryError, "delivered", strings.Join(out.Delivered, ","), "took", time.Since(start).Round(time.Millisecond))
	default:
		log.Info("cron job done", "silent", out.Silent, "delivered", strings.Join(out.Delivered, ","), "took", time.Since(start).Round(time.Millisecond))
	}
	return out
}

// execute runs the job's script and agent under a recover boundary and
// saves the output.
func (s *Scheduler) execute(ctx context.Context, job *Job, start time.Time) (out *Outcome) {
	out = &Outcome{Job: job}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("cron job panicked", "job", job.ID, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			out.Err = fmt.Errorf("the job crashed: %v", p)
			out.Response, out.Silent = "", false
		}
		out.OutputPath = s.saveOutput(job, start, out)
	}()
	if _, err := Load(job.Schedule.Kind, job.Schedule.Expr, job.Schedule.Display); err != nil {
		out.Err = err
		return out
	}
	prompt := job.Prompt
	if job.Script != "" {
		stdout, err := s.runScript(ctx, job.Script)
		if err != nil {
			out.Err = err
			return out
		}
		if !wakeAgent(stdout) {
			out.Response, out.Silent = stdout, true
			return out
		}
		if strings.TrimSpace(prompt) == "" {
			out.Response = strings.TrimSpace(stdout)
			out.Silent = out.Response == "" || IsSilent(out.Response)
			return out
		}
		prompt = "Output of this job's script:\n```\n" + strings.TrimSpace(stdout) + "\n```\n\n" + prompt
	}
	if s.cfg.Agent == nil {
		out.Err = errors.New("no agent is configured to run prompts")
		return out
	}
	res, err := s.cfg.Agent.Run(ctx, prompt, agent.Options{
		Turn: agent.Turn{
			SessionID: "cron_" + job.ID + "_" + start.UTC().Format("20060102_150405"),
			Platform:  "cron", Surface: "cron",
		},
		DisabledTools: jobDisabledTools,
	})
	if err != nil {
		if errors.Is(err, agent.ErrNoResponse) {
			err = errors.New("Agent completed but produced empty response (model error, timeout, or misconfiguration)")
		}
		out.Err = err
		return out
	}
	out.Response = res.FinalResponse
	if strings.TrimSpace(out.Response) == "" {
		out.Err = errors.New("Agent completed but produced empty response (model error, timeout, or misconfiguration)")
		return out
	}
	out.Silent = IsSilent(out.Response)
	return out
}

// maxScriptOutput bounds what a script's stdout may add to a prompt.
const maxScriptOutput = 64 << 10

func (s *Scheduler) runScript(ctx context.Context, script string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ScriptTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	c.Dir = s.cfg.Home
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &limited{b: &stdout, n: maxScriptOutput}, &limited{b: &stderr, n: 8 << 10}
	c.WaitDelay = 2 * time.Second
	if err := c.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return "", fmt.Errorf("script timed out after %s", s.cfg.ScriptTimeout)
		}
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return "", fmt.Errorf("script failed: %v: %s", err, s.redact(msg))
		}
		return "", fmt.Errorf("script failed: %v", err)
	}
	return s.redact(stdout.String()), nil
}

// wakeAgent reads the wake gate: a last non-empty stdout line that is the
// JSON object {"wakeAgent": false} skips the agent.
func wakeAgent(stdout string) bool {
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if !strings.HasPrefix(last, "{") {
		return true
	}
	var gate struct {
		WakeAgent *bool `json:"wakeAgent"`
	}
	if err := json.Unmarshal([]byte(last), &gate); err != nil || gate.WakeAgent == nil {
		return true
	}
	return *gate.WakeAgent
}

// saveOutput writes Home/cron/output/<job>/<YYYY-MM-DD_HH-MM-SS>.md.
func (s *Scheduler) saveOutput(job *Job, start time.Time, out *Outcome) string {
	if s.cfg.Home == "" {
		return ""
	}
	dir := filepath.Join(s.cfg.Home, "cron", "output", job.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.log.Error("cron: saving output failed", "job", job.ID, "err", err)
		return ""
	}
	loc := s.cfg.Jobs.Location()
	var b strings.Builder
	fmt.Fprintf(&b, "# Cron Job: %s\n\n", job.Name)
	fmt.Fprintf(&b, "**Job ID:** %s\n**Run Time:** %s\n**Schedule:** %s\n", job.ID, start.In(loc).Format("2006-01-02 15:04:05 MST"), job.Schedule.Display)
	if out.Err != nil {
		fmt.Fprintf(&b, "**Status:** error\n")
	} else {
		fmt.Fprintf(&b, "**Status:** ok\n")
	}
	if job.Script != "" {
		fmt.Fprintf(&b, "\n## Script\n\n```\n%s\n```\n", job.Script)
	}
	if job.Prompt != "" {
		fmt.Fprintf(&b, "\n## Prompt\n\n%s\n", job.Prompt)
	}
	if out.Err != nil {
		fmt.Fprintf(&b, "\n## Error\n\n%s\n", s.redact(out.Err.Error()))
	} else {
		fmt.Fprintf(&b, "\n## Response\n\n%s\n", out.Response)
	}
	name := start.In(loc).Format("2006-01-02_15-04-05")
	p := filepath.Join(dir, name+".md")
	for i := 2; ; i++ {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			break
		}
		p = filepath.Join(dir, fmt.Sprintf("%s_%d.md", name, i))
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		s.log.Error("cron: saving output failed", "job", job.ID, "err", err)
		return ""
	}
	return p
}

// deliver sends the result (or the failure notice) to the job's targets.
// A successful [SILENT] reply is not delivered; a failure always is.
func (s *Scheduler) deliver(ctx context.Context, job *Job, out *Outcome) {
	var content string
	switch {
	case out.Err != nil:
		content = FailureText(job.Name, s.redact(out.Err.Error()))
	case out.Silent:
		return
	default:
		content = out.Response
	}
	if s.cfg.Wrap {
		content = Wrap(job, content)
	}
	targets, errs := resolveTargets(job, s.cfg.Homes)
	for _, t := range targets {
		if s.cfg.Deliverer == nil {
			errs = append(errs, fmt.Errorf("%s: no gateway to deliver through", t))
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		err := s.cfg.Deliverer.Deliver(dctx, t, content)
		cancel()
		var queued *herald.QueuedError
		switch {
		case err == nil:
			out.Delivered = append(out.Delivered, t.String())
		case errors.As(err, &queued):
			out.Queued = append(out.Queued, t.String()+" until "+queued.Until.UTC().Format(time.RFC3339))
		case errors.Is(err, herald.ErrMaybeSent):
			out.MaybeSent = append(out.MaybeSent, t.String())
		default:
			errs = append(errs, fmt.Errorf("%s: %w", t, err))
		}
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		out.DeliveryError = s.redact(strings.Join(msgs, "; "))
	}
}

func (s *Scheduler) redact(v string) string { return s.cfg.Redactor.Redact(v) }

// limited keeps the first n bytes written and discards the rest.
type limited struct {
	b *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		if len(p) > room {
			l.b.Write(p[:room])
		} else {
			l.b.Write(p)
		}
	}
	return len(p), nil
}
