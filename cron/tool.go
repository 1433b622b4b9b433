package cron

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/agent"
)

// Tool is the agent's cron tool: it lists, creates and removes prompt jobs
// from a chat ("remind me every morning at 8"). It never creates, shows or
// removes script jobs: those run commands, so only the CLI manages them.
type Tool struct {
	Jobs *Jobs
	// OnChange is called after a job is added or removed (the gateway
	// wakes its scheduler); may be nil.
	OnChange func()
}

var _ agent.Tool = (*Tool)(nil)

func (t *Tool) Name() string { return ToolName }

func (t *Tool) Description() string {
	return "Manage scheduled jobs (reminders and recurring tasks). action=create needs schedule and prompt: " +
		"the prompt runs later as a fresh agent turn and its reply is delivered. Schedules: '30m', '2h', '1d' (once, after that delay), " +
		"'every 30m' (repeating), a cron expression such as '0 8 * * *' (every day at 08:00; prefix 'CRON_TZ=Europe/Paris ' for a zone), " +
		"or an ISO time '2026-12-24T18:00' (once). deliver defaults to this chat ('origin'); others: 'local' (save only), a platform name " +
		"(its home channel), 'platform:chat_id', a comma list, or 'all'. action=list shows jobs; action=remove needs job_id."
}

func (t *Tool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"action":{"type":"string","enum":["create","list","remove"],"description":"what to do"},` +
		`"schedule":{"type":"string","description":"when to run (create)"},` +
		`"prompt":{"type":"string","description":"the self-contained instruction to run at that time (create)"},` +
		`"name":{"type":"string","description":"a short name (create, optional)"},` +
		`"deliver":{"type":"string","description":"where the reply goes (create, optional; default origin)"},` +
		`"repeat":{"type":"integer","description":"how many runs (create, optional; once schedules default to 1, others to forever)"},` +
		`"job_id":{"type":"string","description":"the job to remove (remove)"}},` +
		`"required":["action"]}`)
}

// chatPlatforms are the platforms a reply can go back to.
var chatPlatforms = map[string]bool{
	string(herald.PlatformLocal): true, string(herald.PlatformTelegram): true,
	string(herald.PlatformDiscord): true, string(herald.PlatformSlack): true,
}

func (t *Tool) Run(ctx context.Context, c *agent.Call) (string, error) {
	action := strings.ToLower(str(c.Args, "action"))
	switch action {
	case "create", "add":
		var origin herald.Target
		if c.Turn != nil && chatPlatforms[c.Turn.Platform] && c.Turn.ChatID != "" {
			origin = herald.Target{Platform: herald.Platform(c.Turn.Platform), ChatID: c.Turn.ChatID, ThreadID: c.Turn.ThreadID}
		}
		if str(c.Args, "prompt") == "" || str(c.Args, "schedule") == "" {
			return "", errors.New("action=create needs both 'schedule' and 'prompt'")
		}
		repeat := 0
		if v, ok := c.Args["repeat"].(float64); ok {
			repeat = int(v)
		}
		job, err := t.Jobs.Add(ctx, NewJob{
			Name: str(c.Args, "name"), Prompt: str(c.Args, "prompt"), Schedule: str(c.Args, "schedule"),
			Repeat: repeat, Deliver: str(c.Args, "deliver"), Origin: origin,
		})
		if err != nil {
			return "", err
		}
		if t.OnChange != nil {
			t.OnChange()
		}
		return marshal(map[string]any{"success": true, "job": toolView(job, t.Jobs.Location())})
	case "list":
		jobs, err := t.Jobs.List(ctx, false)
		if err != nil {
			return "", err
		}
		views := []map[string]any{}
		for _, j := range jobs {
			if j.Script == "" {
				views = append(views, toolView(j, t.Jobs.Location()))
			}
		}
		return marshal(map[string]any{"jobs": views, "count": len(views)})
	case "remove", "delete":
		id := str(c.Args, "job_id")
		if id == "" {
			return "", errors.New("action=remove needs 'job_id'")
		}
		job, err := t.Jobs.Get(ctx, id)
		if err != nil {
			return "", err
		}
		if job.Script != "" {
			return "", fmt.Errorf("job %s runs a script; it can only be removed with `herald cron rm %s`", job.ID, job.ID)
		}
		if _, err := t.Jobs.Remove(ctx, job.ID); err != nil {
			return "", err
		}
		if t.OnChange != nil {
			t.OnChange()
		}
		return marshal(map[string]any{"success": true, "removed": job.ID, "name": job.Name})
	}
	return "", fmt.Errorf("unknown action %q (use create, list or remove)", action)
}

func toolView(j *Job, loc *time.Location) map[string]any {
	v := map[string]any{
		"job_id": j.ID, "name": j.Name, "prompt": j.Prompt, "schedule": j.Schedule.Display,
		"deliver": j.Deliver, "state": j.State, "repeat": repeatText(j),
	}
	if !j.NextRunAt.IsZero() {
		v["next_run_at"] = j.NextRunAt.In(loc).Format(time.RFC3339)
	}
	if !j.LastRunAt.IsZero() {
		v["last_run_at"] = j.LastRunAt.In(loc).Format(time.RFC3339)
		v["last_status"] = j.LastStatus
	}
	return v
}

func repeatText(j *Job) string {
	if j.RepeatTimes <= 0 {
		return fmt.Sprintf("%d/∞", j.RepeatCompleted)
	}
	return fmt.Sprintf("%d/%d", j.RepeatCompleted, j.RepeatTimes)
}

// RepeatText is a job's "done/times" (∞ for forever), as the CLI shows it.
func RepeatText(j *Job) string { return repeatText(j) }

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return strings.TrimSpace(s)
}

func marshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
