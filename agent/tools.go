package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/hooks"
)

// Tool is one tool the model may call.
type Tool interface {
	Name() string
	Description() string
	// Schema is the JSON schema of the arguments object.
	Schema() json.RawMessage
	// Run executes the tool. Its result string goes back to the model
	// (JSON by convention: {"error": …} for failures).
	Run(ctx context.Context, call *Call) (string, error)
}

// Call is one tool invocation with its context.
type Call struct {
	ID        string
	Args      map[string]any
	SessionID string
	Turn      *Turn

	run *runState // nil when a tool is called outside Agent.Run (tests)
	// hookAllowed is set when a pre_tool_call hook allowed the call
	// (Claude Code's permissionDecision "allow"): no approval prompt.
	hookAllowed bool
}

// Approve asks whether a dangerous action may go ahead, under the run's
// approval mode, memory and Approver (firing pre_approval_request and
// post_approval_response). keys are the stable pattern keys the answer is
// remembered by. It returns nil to go ahead, an error wrapping ErrDenied
// (whose text is meant for the model), or ctx's error. Outside a Run
// nobody can answer, so it denies.
func (c *Call) Approve(ctx context.Context, command, description string, keys []string) error {
	if c.run == nil {
		return fmt.Errorf("%w: %s needs approval and nobody can answer here", ErrDenied, description)
	}
	if c.hookAllowed && !strings.EqualFold(c.run.agent.ApprovalMode, ModeOff) {
		// as in Claude Code, a hook's allow skips the prompt but not a
		// rule that never runs such commands (approvals: off)
		c.run.agent.logger().Info("approval skipped: a pre_tool_call hook allowed this call", "session_id", c.SessionID, "command", c.run.agent.redact(command))
		return nil
	}
	return c.run.approve(ctx, command, description, keys)
}

// String returns a string argument ("" when absent or not a string).
func (c *Call) String(key string) string {
	s, _ := c.Args[key].(string)
	return s
}

// Number returns a numeric argument, or def when absent. Models send
// numbers as JSON numbers or, sometimes, as strings.
func (c *Call) Number(key string, def float64) float64 {
	switch v := c.Args[key].(type) {
	case float64:
		return v
	case int:
		return float64(v)
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return f
		}
	}
	return def
}

// Bool returns a boolean argument, or def when absent.
func (c *Call) Bool(key string, def bool) bool {
	switch v := c.Args[key].(type) {
	case bool:
		return v
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "1", "yes":
			return true
		case "false", "0", "no":
			return false
		}
	}
	return def
}

// mediaDir is the media cache the call's turn may read ("" for none).
func (c *Call) mediaDir() string {
	if c.Turn == nil {
		return ""
	}
	return c.Turn.MediaDir
}

func (c *Call) hooks() *hooks.Registry {
	if c.run == nil {
		return noHooks
	}
	return c.run.agent.hooks()
}

func (c *Call) redactor() *herald.Redactor {
	if c.run == nil {
		return nil
	}
	return c.run.agent.Redactor
}

// Remove unregisters a tool (a platform or the configuration disabled it).
func (t *Tools) Remove(names ...string) {
	t.mu.Lock()
	for _, n := range names {
		delete(t.tools, n)
	}
	t.mu.Unlock()
}

// Tools is a registry of tools; safe for concurrent use.
type Tools struct {
	mu    sync.RWMutex
	tools map[string]Tool
}

// NewTools returns a registry holding tools.
func NewTools(tools ...Tool) *Tools {
	t := &Tools{tools: map[string]Tool{}}
	for _, x := range tools {
		t.Add(x)
	}
	return t
}

// Add registers (or replaces) a tool.
func (t *Tools) Add(tool Tool) {
	t.mu.Lock()
	t.tools[tool.Name()] = tool
	t.mu.Unlock()
}

// Get returns a tool by name.
func (t *Tools) Get(name string) (Tool, bool) {
	if t == nil {
		return nil, false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	x, ok := t.tools[name]
	return x, ok
}

// List returns the tools, by name, without those in disabled.
func (t *Tools) List(disabled ...string) []Tool {
	if t == nil {
		return nil
	}
	off := map[string]bool{}
	for _, d := range disabled {
		off[d] = true
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]Tool, 0, len(t.tools))
	for n, x := range t.tools {
		if !off[n] {
			out = append(out, x)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}
