// Package myplugin is the Go plugin compiled into examples/custom-binary:
// it refuses terminal commands that force-push or wipe the root
// directory (pre_tool_call, an interceptor), notes how many tool calls
// each session made (post_tool_call and on_session_end, observers), and
// answers /tool-calls with that count (a plugin command, listed by /help
// and in Telegram's command menu).
//
// A callback gets the point's typed payload; an interceptor returns one of
// the hooks result types (or nil for no opinion). Callbacks must be quick
// and honour ctx: they run on the turn's goroutine with a 30 s deadline,
// and a pre_tool_call callback that panics or overruns blocks the call.
package myplugin

import (
	"context"
	"fmt"
	"regexp"
	"sync"

	"github.com/heraldgw/herald/hooks"
)

// Plugin is what a main passes to cmd.WithPlugins.
var Plugin = hooks.Plugin{
	Name:        "myplugin",
	Description: "refuses force-pushes and rm -rf /; counts tool calls per session (/tool-calls)",
	Register:    register,
}

// Refused matches the terminal commands the plugin blocks.
var Refused = regexp.MustCompile(`git\s+push\s+.*(--force|-f\b)|rm\s+-[a-z]*r[a-z]*f?[a-z]*\s+/(\s|$)`)

// BlockMessage is what the model is told when a command is refused.
const BlockMessage = "myplugin: this command is not allowed here"

func register(c *hooks.PluginContext) error {
	var mu sync.Mutex
	calls := map[string]int{}
	log := c.Logger()

	c.RegisterHook(hooks.PreToolCallHook, hooks.Func(func(ctx context.Context, p *hooks.PreToolCall) *hooks.ToolDecision {
		if p.ToolName != "terminal" {
			return nil
		}
		if cmd, _ := p.Args["command"].(string); Refused.MatchString(cmd) {
			return hooks.Block(BlockMessage)
		}
		return nil
	}))
	c.RegisterHook(hooks.PostToolCallHook, hooks.Observe(func(ctx context.Context, p *hooks.ToolResult) {
		mu.Lock()
		calls[p.SessionID]++
		mu.Unlock()
	}))
	c.RegisterHook(hooks.OnSessionEndHook, hooks.Observe(func(ctx context.Context, p *hooks.SessionEnded) {
		mu.Lock()
		n := calls[p.SessionID]
		mu.Unlock()
		log.Info("session turn done", "session_id", p.SessionID, "tool_calls_so_far", n)
	}))
	return c.RegisterCommand("tool-calls", "how many tool calls this conversation made", "",
		func(ctx context.Context, call *hooks.CommandCall) (string, error) {
			mu.Lock()
			n := calls[call.SessionID]
			mu.Unlock()
			return fmt.Sprintf("%d tool calls in this conversation.", n), nil
		})
}
