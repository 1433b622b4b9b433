// Package dangerwarn warns, in the gateway log, before a tool that can
// change the machine runs (terminal, write_file, patch). It never blocks:
// use a pre_tool_call that returns hooks.Block for that.
package dangerwarn

import (
	"context"

	"github.com/heraldgw/herald/hooks"
)

// Dangerous are the tools warned about.
var Dangerous = map[string]bool{"terminal": true, "write_file": true, "patch": true}

// Plugin is the dangerous-tool warning.
var Plugin = hooks.Plugin{
	Name:        "danger-warn",
	Description: "warn before terminal, write_file and patch run (pre_tool_call)",
	Register: func(c *hooks.PluginContext) error {
		log := c.Logger()
		c.RegisterHook(hooks.PreToolCallHook, hooks.Func(func(ctx context.Context, p *hooks.PreToolCall) *hooks.ToolDecision {
			if Dangerous[p.ToolName] {
				log.Warn("⚠ Executing potentially dangerous tool: "+p.ToolName, "session", p.SessionID)
			}
			return nil
		}))
		return nil
	},
}
