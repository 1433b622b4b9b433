package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/heraldgw/herald/hooks"
	openai "github.com/sashabaranov/go-openai"
)

// Delegate is the delegate_task tool: it runs child agents in parallel,
// each a Run of the same Agent on its own session with no delegate_task
// of its own, and returns their summaries in task order. After all
// children are done, subagent_stop fires once per child, in task order,
// from the parent's goroutine.
type Delegate struct {
	Agent *Agent
	// MaxChildren bounds the tasks of one call (default 8).
	MaxChildren int
	// MaxIterations is each child's budget (default 30).
	MaxIterations int
}

var _ Tool = (*Delegate)(nil)

func (*Delegate) Name() string { return "delegate_task" }
func (*Delegate) Description() string {
	return "Hand one or more self-contained tasks to sub-agents that work in parallel and report back. " +
		"Give each task a clear goal and the context it needs; sub-agents do not see this conversation."
}
func (*Delegate) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"goal":{"type":"string","description":"The task, for a single sub-agent"},` +
		`"context":{"type":"string","description":"Background the sub-agent needs"},` +
		`"tasks":{"type":"array","description":"Several tasks run in parallel","items":{"type":"object","properties":{` +
		`"goal":{"type":"string"},"context":{"type":"string"},"role":{"type":"string"}},"required":["goal"]}}},"required":[]}`)
}

type childTask struct {
	Goal, Context string
	Role          *string
}

type childResult struct {
	Index      int     `json:"task_index"`
	Status     string  `json:"status"`
	Summary    *string `json:"summary"`
	Error      string  `json:"error,omitempty"`
	DurationMS int64   `json:"duration_ms"`
	APICalls   int     `json:"api_calls"`
	// sessionID is the child's session (its transcript's name).
	sessionID string
	// files are what the child's send_file queued: they go with the
	// parent's answer.
	files []OutFile
}

func (t *Delegate) Run(ctx context.Context, c *Call) (string, error) {
	tasks, err := parseTasks(c.Args)
	if err != nil {
		return "", err
	}
	max := t.MaxChildren
	if max <= 0 {
		max = 8
	}
	if len(tasks) > max {
		return "", fmt.Errorf("delegate_task: %d tasks, at most %d at once", len(tasks), max)
	}
	parent := Turn{}
	var approver Approver
	var notice func(string)
	if c.Turn != nil {
		parent = *c.Turn
	}
	if c.run != nil {
		approver, notice = c.run.opts.Approver, c.run.opts.Notice
	}
	budget := t.MaxIterations
	if budget <= 0 {
		budget = 30
	}
	var claude hooks.Claude
	if c.run != nil {
		claude = c.run.claude()
	}
	results := make([]childResult, len(tasks))
	var wg sync.WaitGroup
	for i, task := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = t.runChild(ctx, parent, Options{Approver: approver, Notice: notice}, claude, budget, i, task)
		}()
	}
	wg.Wait()
	if c.run != nil {
		for _, r := range results {
			c.run.files = append(c.run.files, r.files...)
		}
	}
	// subagent_stop from the parent's goroutine, in task order
	reg := t.Agent.hooks()
	for i, r := range results {
		reg.Emit(hooks.SubagentStopHook, &hooks.SubagentStop{
			ParentSessionID: parent.SessionID, ChildRole: tasks[i].Role, ChildSummary: r.Summary,
			ChildStatus: r.Status, DurationMS: r.DurationMS,
			AgentID: r.sessionID, AgentTranscriptPath: t.Agent.TranscriptPath(r.sessionID), Claude: claude,
		})
	}
	b, err := json.Marshal(map[string]any{"results": results})
	return string(b), err
}

// runChild runs one sub-agent. When it stops, in-line subagent_stop
// hooks (Claude Code's SubagentStop) may send it back to work with their
// reason as its next instruction, within the same iteration budget.
func (t *Delegate) runChild(ctx context.Context, parent Turn, base Options, claude hooks.Claude, budget, i int, task childTask) (r childResult) {
	start := time.Now()
	r.Index = i
	defer func() {
		if p := recover(); p != nil {
			r.Status, r.Error = "error", fmt.Sprintf("sub-agent crashed: %v", p)
		}
		r.DurationMS = time.Since(start).Milliseconds()
	}()
	turn := parent
	turn.SessionID = fmt.Sprintf("%s-sub%d-%d", parent.SessionID, i+1, start.UnixNano()%1_000_000)
	turn.SessionKey = turn.SessionID
	turn.ParentSessionID, turn.AgentType = parent.SessionID, ""
	if task.Role != nil {
		turn.AgentType = *task.Role
	}
	r.sessionID = turn.SessionID
	prompt := task.Goal
	if task.Context != "" {
		prompt = task.Goal + "\n\nContext:\n" + task.Context
	}
	opts := base
	opts.Turn, opts.MaxIterations, opts.DisabledTools = turn, budget, []string{"delegate_task"}
	reg := t.Agent.hooks()
	var res *Result
	var err error
	var history []openai.ChatCompletionMessage
	used, stopActive := 0, false
	for {
		opts.History = history
		res, err = t.Agent.Run(ctx, prompt, opts)
		used += res.APICalls
		r.files = append(r.files, res.Files...)
		r.Status, r.Error = childStatus(res, err)
		if !reg.HasInline(hooks.SubagentStopHook) {
			break
		}
		summary := res.FinalResponse
		fb := reg.InlineFeedback(ctx, hooks.SubagentStopHook, &hooks.SubagentStop{
			ParentSessionID: parent.SessionID, ChildRole: task.Role, ChildSummary: &summary,
			ChildStatus: r.Status, DurationMS: time.Since(start).Milliseconds(), StopHookActive: stopActive,
			AgentID: turn.SessionID, AgentTranscriptPath: t.Agent.TranscriptPath(turn.SessionID), Claude: claude,
		})
		if fb.Notice != "" && base.Notice != nil {
			base.Notice(fb.Notice)
		}
		if r.Status != "completed" || res.Halted || ctx.Err() != nil || !fb.Block || fb.Halt {
			break
		}
		if used >= budget {
			t.Agent.logger().Warn("a SubagentStop hook asked the sub-agent to go on, but its iteration budget is spent", "session_id", turn.SessionID, "budget", budget)
			break
		}
		history = append(history, res.Messages...)
		prompt, stopActive = StopFeedback+fb.Reason, true
		opts.MaxIterations = budget - used
	}
	r.APICalls = used
	if res.FinalResponse != "" {
		s := res.FinalResponse
		r.Summary = &s
	}
	return r
}

// childStatus is a finished sub-agent's status, and its error text.
func childStatus(res *Result, err error) (string, string) {
	switch {
	case res.Interrupted:
		return "interrupted", ""
	case err != nil:
		return "failed", err.Error()
	case res.Completed:
		return "completed", ""
	}
	return "failed", ""
}

func parseTasks(args map[string]any) ([]childTask, error) {
	var out []childTask
	if raw, ok := args["tasks"].([]any); ok {
		for i, x := range raw {
			m, ok := x.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("delegate_task: tasks[%d] is not an object", i)
			}
			ct, err := taskOf(m)
			if err != nil {
				return nil, fmt.Errorf("delegate_task: tasks[%d]: %w", i, err)
			}
			out = append(out, ct)
		}
	}
	if g, _ := args["goal"].(string); strings.TrimSpace(g) != "" {
		ct, _ := taskOf(args)
		out = append([]childTask{ct}, out...)
	}
	if len(out) == 0 {
		return nil, errors.New("delegate_task: give a goal or a list of tasks")
	}
	return out, nil
}

func taskOf(m map[string]any) (childTask, error) {
	g, _ := m["goal"].(string)
	if strings.TrimSpace(g) == "" {
		return childTask{}, errors.New("goal is required")
	}
	ct := childTask{Goal: g}
	ct.Context, _ = m["context"].(string)
	if role, ok := m["role"].(string); ok && role != "" {
		ct.Role = &role
	}
	return ct, nil
}
