package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/cron"
)

// herald cron: the job store is edited directly (the gateway sees changes
// at its next tick); `cron run` asks the running gateway, which can
// deliver, and runs the job here only when none runs.

func init() {
	registerCommand(command{name: "cron", synopsis: "cron <subcommand>", summary: "list, add, rm, pause, resume and run scheduled jobs", subcommands: []string{"list", "add", "rm", "pause", "resume", "run", "status"},
		run: func(ctx context.Context, e *env, args []string) error { return e.cron(ctx, args) }})
	gatewayHooks = append(gatewayHooks, startCron)
	chatHooks = append(chatHooks, func(ctx context.Context, a *app, g *gatewayParts) (func(), error) {
		a.agent.Tools.Add(&cron.Tool{Jobs: cron.NewJobs(a.store, nil, nil)})
		return nil, nil
	})
}

const cronUsage = `usage:
  herald cron list [--all]
  herald cron add <schedule> <prompt> [--name NAME] [--deliver TARGET] [--repeat N] [--script CMD]
  herald cron rm <id>
  herald cron pause <id>
  herald cron resume <id>
  herald cron run <id>
  herald cron status

schedules: 30m, 2h, 1d (once, after that delay); "every 30m"; "0 9 * * *" (cron, optionally
"CRON_TZ=Europe/Paris 0 9 * * *"); 2026-12-24T18:00 (once).
deliver: local (save only), origin, a platform (its home channel), platform:chat_id[:thread_id],
a comma list, or all.`

func (e *env) cron(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("%s", cronUsage)
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "list", "ls":
		return e.cronList(ctx, rest)
	case "add", "create":
		return e.cronAdd(ctx, rest)
	case "rm", "remove", "delete":
		return e.cronEdit(ctx, "rm", rest)
	case "pause", "resume":
		return e.cronEdit(ctx, sub, rest)
	case "run":
		return e.cronRun(ctx, rest)
	case "status":
		return e.cronStatus(ctx, rest)
	}
	return usagef("unknown cron command %q\n%s", sub, cronUsage)
}

// openJobs opens the state store for the job store.
func (e *env) openJobs() (*cron.Jobs, string, func(), error) {
	cfg, err := e.loadConfigWarned()
	if err != nil {
		return nil, "", nil, err
	}
	st, err := openStore(cfg)
	if err != nil {
		return nil, "", nil, err
	}
	return cron.NewJobs(st, nil, nil), cfg.Home, func() { st.Close() }, nil
}

func (e *env) cronList(ctx context.Context, args []string) error {
	fs := e.flags("cron list")
	all := fs.Bool("all", false, "include paused, completed and disabled jobs")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	jobs, home, closeFn, err := e.openJobs()
	if err != nil {
		return err
	}
	defer closeFn()
	list, err := jobs.List(ctx, *all)
	if err != nil {
		return err
	}
	w := e.stdout
	if len(list) == 0 {
		fmt.Fprintln(w, "No scheduled jobs.")
		if !*all {
			fmt.Fprintln(w, "Create one with: herald cron add \"every 1h\" \"check the deploy log\"")
		}
	} else {
		fmt.Fprintln(w, "┌─────────────────────────────────────────────────────────────────────────┐")
		fmt.Fprintln(w, "│                         Scheduled Jobs                                  │")
		fmt.Fprintln(w, "└─────────────────────────────────────────────────────────────────────────┘")
		fmt.Fprintln(w)
		for _, j := range list {
			writeJob(w, j, jobs)
			fmt.Fprintln(w)
		}
	}
	gatewayWarning(w, home)
	return nil
}

func jobBadge(j *cron.Job) string {
	switch {
	case j.State == cron.StatePaused:
		return "paused"
	case j.State == cron.StateCompleted:
		return "completed"
	case j.State == cron.StateError:
		return "error"
	case !j.Enabled:
		return "disabled"
	}
	return "active"
}

const timeLayout = "2006-01-02 15:04"

func writeJob(w io.Writer, j *cron.Job, jobs *cron.Jobs) {
	loc := jobs.Location()
	fmt.Fprintf(w, "  %s [%s]\n", j.ID, jobBadge(j))
	fmt.Fprintf(w, "    Name:      %s\n", j.Name)
	fmt.Fprintf(w, "    Schedule:  %s\n", j.Schedule.Display)
	fmt.Fprintf(w, "    Repeat:    %s\n", cron.RepeatText(j))
	next := "—"
	if !j.NextRunAt.IsZero() {
		next = j.NextRunAt.In(loc).Format(timeLayout)
	}
	fmt.Fprintf(w, "    Next run:  %s\n", next)
	fmt.Fprintf(w, "    Deliver:   %s\n", j.Deliver)
	if j.Script != "" {
		fmt.Fprintf(w, "    Script:    %s\n", j.Script)
	}
	if !j.LastRunAt.IsZero() {
		status := j.LastStatus
		if j.LastStatus == cron.StatusError && j.LastError != "" {
			status += ": " + oneLine(j.LastError)
		}
		fmt.Fprintf(w, "    Last run:  %s  %s\n", j.LastRunAt.In(loc).Format(timeLayout), status)
	}
	switch {
	case j.LastDeliveryError == "":
	case j.LastStatus == cron.StatusQueued || j.LastStatus == cron.StatusMaybeSent:
		fmt.Fprintf(w, "    Delivery:  %s\n", oneLine(j.LastDeliveryError))
	default:
		fmt.Fprintf(w, "    ⚠ Delivery failed: %s\n", oneLine(j.LastDeliveryError))
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// gatewayWarning says so when no gateway runs to fire the jobs.
func gatewayWarning(w io.Writer, home string) {
	if runningGateway(home) != 0 {
		return
	}
	fmt.Fprintln(w, "⚠ The gateway is not running, so jobs will not fire. Start it with: herald gateway")
}

func (e *env) cronAdd(ctx context.Context, args []string) error {
	fs := e.flags("cron add")
	name := fs.String("name", "", "a short name (default: the start of the prompt)")
	deliver := fs.String("deliver", "", "where output goes (default local)")
	repeat := fs.Int("repeat", 0, "how many runs (default 1 for once schedules, forever for recurring ones)")
	script := fs.String("script", "", "a shell command to run first; its output is given to the prompt")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) < 2 && *script == "" {
		return usagef("usage: herald cron add <schedule> <prompt> [--name NAME] [--deliver TARGET] [--repeat N] [--script CMD]")
	}
	jobs, home, closeFn, err := e.openJobs()
	if err != nil {
		return err
	}
	defer closeFn()
	job, err := jobs.Add(ctx, cron.NewJob{
		Name: *name, Prompt: strings.Join(pos[1:], " "), Script: *script, Schedule: pos[0], Repeat: *repeat, Deliver: *deliver,
	})
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	fmt.Fprintf(e.stdout, "Created job: %s\n", job.ID)
	writeJob(e.stdout, job, jobs)
	gatewayWarning(e.stdout, home)
	return nil
}

func (e *env) cronEdit(ctx context.Context, op string, args []string) error {
	fs := e.flags("cron " + op)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: herald cron %s <id>", op)
	}
	jobs, _, closeFn, err := e.openJobs()
	if err != nil {
		return err
	}
	defer closeFn()
	var job *cron.Job
	switch op {
	case "rm":
		job, err = jobs.Remove(ctx, pos[0])
	case "pause":
		job, err = jobs.Pause(ctx, pos[0])
	case "resume":
		job, err = jobs.Resume(ctx, pos[0])
	}
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	switch op {
	case "rm":
		fmt.Fprintf(e.stdout, "Removed job: %s (%s)\n", job.ID, job.Name)
	case "pause":
		fmt.Fprintf(e.stdout, "Paused job: %s (%s)\n", job.ID, job.Name)
	case "resume":
		next := "—"
		if !job.NextRunAt.IsZero() {
			next = job.NextRunAt.In(jobs.Location()).Format(timeLayout)
		}
		fmt.Fprintf(e.stdout, "Resumed job: %s (%s), next run: %s\n", job.ID, job.Name, next)
	}
	return nil
}

// runView is the JSON of POST /v1/cron/run.
type runView struct {
	JobID         string   `json:"job_id"`
	Name          string   `json:"name"`
	Status        string   `json:"status"`
	Response      string   `json:"response,omitempty"`
	Error         string   `json:"error,omitempty"`
	Silent        bool     `json:"silent,omitempty"`
	Output        string   `json:"output,omitempty"`
	Delivered     []string `json:"delivered,omitempty"`
	DeliveryError string   `json:"delivery_error,omitempty"`
	Queued        []string `json:"queued,omitempty"`
	MaybeSent     []string `json:"maybe_sent,omitempty"`
}

func viewOf(o *cron.Outcome, red *herald.Redactor) runView {
	v := runView{JobID: o.Job.ID, Name: o.Job.Name, Response: o.Response, Silent: o.Silent, Output: o.OutputPath,
		Delivered: o.Delivered, DeliveryError: o.DeliveryError, Queued: o.Queued, MaybeSent: o.MaybeSent, Status: o.Status()}
	if o.Err != nil {
		v.Error = red.Redact(o.Err.Error())
	}
	return v
}

func (e *env) cronRun(ctx context.Context, args []string) error {
	fs := e.flags("cron run")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: herald cron run <id>")
	}
	cfg, err := e.loadConfigWarned()
	if err != nil {
		return err
	}
	var v runView
	if runningGateway(cfg.Home) != 0 {
		if err := callGateway(ctx, cfg.Home, "/v1/cron/run", map[string]string{"job_id": pos[0]}, &v); err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
	} else {
		fmt.Fprintln(e.stderr, "herald: no gateway is running, so the job runs here and nothing can be delivered (its output is still saved).")
		a, err := e.newApp(appOptions{quiet: true})
		if err != nil {
			return err
		}
		defer a.close()
		sched := cron.New(cron.Config{Jobs: cron.NewJobs(a.store, nil, nil), Agent: a.agent, Home: a.home, Wrap: config.On(a.cfg.Cron.WrapResponse, true),
			Redactor: a.redactor, Log: a.log.With("component", "cron")})
		o, err := sched.RunNow(ctx, pos[0])
		if err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
		v = viewOf(o, a.redactor)
	}
	w := e.stdout
	fmt.Fprintf(w, "Ran job %s (%s): %s\n", v.JobID, v.Name, v.Status)
	if v.Output != "" {
		fmt.Fprintf(w, "Output saved to: %s\n", v.Output)
	}
	switch {
	case v.Error != "":
		fmt.Fprintf(w, "Error: %s\n", v.Error)
	case v.Silent:
		fmt.Fprintln(w, "Reply was [SILENT]: nothing delivered.")
	}
	if len(v.Delivered) > 0 {
		fmt.Fprintf(w, "Delivered to: %s\n", strings.Join(v.Delivered, ", "))
	}
	if len(v.Queued) > 0 {
		fmt.Fprintf(w, "Queued for later (the platform asked to wait): %s\n", strings.Join(v.Queued, ", "))
	}
	if len(v.MaybeSent) > 0 {
		fmt.Fprintf(w, "May have been sent (timed out after it was written; not sent again): %s\n", strings.Join(v.MaybeSent, ", "))
	}
	if v.DeliveryError != "" {
		fmt.Fprintf(w, "⚠ Delivery failed: %s\n", v.DeliveryError)
	}
	if v.Response != "" {
		fmt.Fprintf(w, "\n%s\n", v.Response)
	}
	if v.Status == cron.StatusError {
		return &exitError{code: 1}
	}
	return nil
}

// startCron starts the scheduler with the gateway, adds the cron tool to
// the gateway's agent and serves POST /v1/cron/run on the local API.
func startCron(ctx context.Context, a *app, g *gatewayParts) (func(), error) {
	jobs := cron.NewJobs(a.store, nil, nil)
	homes := map[herald.Platform]string{}
	for _, p := range g.runner.Platforms() {
		homes[herald.Platform(p)] = homeChannel(a.cfg, herald.Platform(p))
	}
	sched := cron.New(cron.Config{
		Jobs: jobs, Agent: a.agent, Deliverer: g.runner, Homes: homes, Home: a.home,
		MaxParallel: a.cfg.Cron.MaxParallelJobs, Wrap: config.On(a.cfg.Cron.WrapResponse, true),
		Redactor: a.redactor, Log: a.log.With("component", "cron"), Leader: g.leader,
	})
	a.agent.Tools.Add(&cron.Tool{Jobs: jobs, OnChange: sched.Wake})
	if g.local != nil {
		g.local.Handle("POST /v1/cron/run", func(w http.ResponseWriter, r *http.Request) {
			var in struct {
				JobID string `json:"job_id"`
			}
			if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&in); err != nil || in.JobID == "" {
				writeJSONError(w, http.StatusBadRequest, `body must be {"job_id": "..."}`)
				return
			}
			o, err := sched.RunNow(r.Context(), in.JobID)
			if err != nil {
				status := http.StatusConflict
				if errors.Is(err, cron.ErrNotFound) {
					status = http.StatusNotFound
				}
				writeJSONError(w, status, err.Error())
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(viewOf(o, a.redactor))
		})
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sched.Run(sctx)
	}()
	return func() { cancel(); <-done }, nil
}

// homeChannel is a platform's configured home channel.
func homeChannel(c *config.Config, p herald.Platform) string {
	switch p {
	case herald.PlatformLocal:
		return c.Platforms.Local.HomeChannel
	case herald.PlatformTelegram:
		return c.Platforms.Telegram.HomeChannel
	case herald.PlatformDiscord:
		return c.Platforms.Discord.HomeChannel
	case herald.PlatformSlack:
		return c.Platforms.Slack.HomeChannel
	}
	if common, ok := platformCommons[p]; ok {
		return common(c).HomeChannel
	}
	return ""
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// callGateway posts body to the running gateway's local API (a GET when
// body is nil) and decodes the answer into out.
func callGateway(ctx context.Context, home, path string, body, out any) error {
	addr, err := os.ReadFile(filepath.Join(home, "local.addr"))
	if err != nil {
		return fmt.Errorf("a gateway is running but its local API address is unknown (%s): %w", filepath.Join(home, "local.addr"), err)
	}
	token, err := localToken(home)
	if err != nil {
		return err
	}
	method, reqBody := http.MethodGet, io.Reader(nil)
	if body != nil {
		b, _ := json.Marshal(body)
		method, reqBody = http.MethodPost, bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+strings.TrimSpace(string(addr))+path, reqBody)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 35 * time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("asking the gateway: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return fmt.Errorf("gateway: %s", e.Error)
		}
		return fmt.Errorf("gateway answered %s", resp.Status)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("gateway: unreadable answer: %w", err)
	}
	return nil
}
