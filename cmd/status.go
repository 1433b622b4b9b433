package cmd

// status.go is `herald status`: whether a gateway runs on this home and
// what it is doing, asked of the gateway itself through GET /v1/status on
// its local API (served from here too), or "not running" (exit status 3,
// as systemctl status says it) when no gateway holds the home's lock.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/cron"
	"github.com/heraldgw/herald/gateway"
)

func init() {
	registerCommand(command{name: "status", synopsis: "status [--json]", summary: "is a gateway running on this home, and what is it doing",
		run: func(ctx context.Context, e *env, a []string) error { return e.status(ctx, a) }})
	gatewayHooks = append(gatewayHooks, startStatus)
}

// notRunningStatus is herald status's exit status when no gateway runs
// (systemctl's "program is not running").
const notRunningStatus = 3

// statusCronJobs is how many of the next cron runs status lists.
const statusCronJobs = 5

// gatewayStatus is GET /v1/status's answer.
type gatewayStatus struct {
	Running bool   `json:"running"`
	Home    string `json:"home"`
	PID     int    `json:"pid,omitempty"`
	// StartedAt and UptimeSeconds are the gateway's; Listen is the local
	// API's address.
	StartedAt     time.Time `json:"started_at,omitzero"`
	UptimeSeconds float64   `json:"uptime_seconds,omitempty"`
	Listen        string    `json:"listen,omitempty"`
	Version       string    `json:"version,omitempty"`
	// Store is the state store's health ("ok" or "failed: …").
	Store string `json:"store,omitempty"`
	// Platforms is each platform's state, as /healthz reports it.
	Platforms        map[string]string `json:"platforms,omitempty"`
	Chats            int               `json:"chats"`
	RunningTurns     int               `json:"running_turns"`
	QueuedMessages   int               `json:"queued_messages"`
	QueuedDeliveries int64             `json:"queued_deliveries"`
	MaybeSent        int64             `json:"maybe_sent"`
	// Cron is the next scheduled runs, soonest first.
	Cron []cronRun `json:"cron"`
	// Error is why a running gateway could not be asked.
	Error string `json:"error,omitempty"`
}

type cronRun struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Schedule string    `json:"schedule"`
	NextRun  time.Time `json:"next_run_at"`
}

// startStatus serves GET /v1/status on the local API.
func startStatus(ctx context.Context, a *app, g *gatewayParts) (func(), error) {
	if g.local == nil {
		return nil, nil
	}
	started := time.Now()
	jobs := cron.NewJobs(a.store, nil, nil)
	g.local.Handle("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		health := g.runner.Health()
		act := g.runner.Activity()
		st := gatewayStatus{
			Running: true, Home: a.home, PID: os.Getpid(), StartedAt: started.UTC(), UptimeSeconds: time.Since(started).Seconds(),
			Listen: g.local.Addr(), Version: Version, Store: health[gateway.StoreKey], Platforms: map[string]string{},
			Chats: act.Chats, RunningTurns: act.RunningTurns, QueuedMessages: act.QueuedMessages,
			QueuedDeliveries: act.QueuedDeliveries, MaybeSent: g.runner.Delivery().MaybeSent, Cron: []cronRun{},
		}
		for p, state := range health {
			if p != gateway.StoreKey {
				st.Platforms[p] = state
			}
		}
		list, err := jobs.List(r.Context(), false)
		if err != nil {
			writeJSONError(w, http.StatusInternalServerError, a.redactor.Redact(err.Error()))
			return
		}
		for _, j := range list {
			if len(st.Cron) == statusCronJobs {
				break
			}
			if !j.NextRunAt.IsZero() {
				st.Cron = append(st.Cron, cronRun{ID: j.ID, Name: j.Name, Schedule: j.Schedule.Display, NextRun: j.NextRunAt.UTC()})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(st)
	})
	return nil, nil
}

func (e *env) status(ctx context.Context, args []string) error {
	fs := e.flags("status")
	asJSON := fs.Bool("json", false, "print one JSON document")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	home, err := config.Home(e.home, e.getenv)
	if err != nil {
		return err
	}
	st := gatewayStatus{Home: home}
	pid := runningGateway(home)
	if pid != 0 {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := callGateway(ctx, home, "/v1/status", nil, &st)
		cancel()
		if err != nil {
			st = gatewayStatus{Running: true, Home: home, PID: pid, Error: err.Error()}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(st)
	} else {
		writeStatus(e.stdout, st)
	}
	switch {
	case !st.Running:
		return &exitError{code: notRunningStatus}
	case st.Error != "":
		return &exitError{code: 1}
	}
	return nil
}

// writeStatus prints st for a person.
func writeStatus(w io.Writer, st gatewayStatus) {
	if !st.Running {
		fmt.Fprintf(w, "herald gateway: not running (home %s)\n", st.Home)
		return
	}
	if st.Error != "" {
		pid := "unknown"
		if st.PID > 0 {
			pid = fmt.Sprint(st.PID)
		}
		fmt.Fprintf(w, "herald gateway: running (pid %s), but it did not answer: %s\n", pid, st.Error)
		return
	}
	up := time.Duration(st.UptimeSeconds * float64(time.Second)).Round(time.Second)
	fmt.Fprintf(w, "herald gateway: running (pid %d, up %s, since %s)\n", st.PID, up, st.StartedAt.Local().Format(timeLayout))
	fmt.Fprintf(w, "  home:       %s\n", st.Home)
	fmt.Fprintf(w, "  local API:  http://%s\n", st.Listen)
	fmt.Fprintf(w, "  version:    %s\n", st.Version)
	fmt.Fprintf(w, "  store:      %s\n", st.Store)
	names := make([]string, 0, len(st.Platforms))
	for p := range st.Platforms {
		names = append(names, p)
	}
	slices.Sort(names)
	fmt.Fprintln(w, "  platforms:")
	for _, p := range names {
		fmt.Fprintf(w, "    %-10s %s\n", p, st.Platforms[p])
	}
	fmt.Fprintf(w, "  turns:      %d running, %d message(s) queued, in %d chat(s)\n", st.RunningTurns, st.QueuedMessages, st.Chats)
	fmt.Fprintf(w, "  delivery:   %d queued for a rate limit, %d maybe sent\n", st.QueuedDeliveries, st.MaybeSent)
	if len(st.Cron) == 0 {
		fmt.Fprintln(w, "  cron:       no scheduled runs")
		return
	}
	fmt.Fprintln(w, "  cron:       next runs")
	for _, j := range st.Cron {
		fmt.Fprintf(w, "    %s  %s  %s (%s)\n", j.NextRun.Local().Format(timeLayout), j.ID, oneLine(j.Name), j.Schedule)
	}
}
