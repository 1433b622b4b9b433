// Package toolaudit logs every tool call before it runs: the session, the
// tool and its arguments (cut to 200 characters), as one TOOL_CALL line in
// the gateway log. It observes only; pre_tool_call answers nothing, so the
// call goes ahead.
package toolaudit

import (
	"context"
	"encoding/json"

	"github.com/heraldgw/herald/hooks"
)

// Plugin is the tool-call audit log.
var Plugin = hooks.Plugin{
	Name:        "tool-audit",
	Description: "log every tool call (pre_tool_call)",
	Register: func(c *hooks.PluginContext) error {
		log := c.Logger()
		c.RegisterHook(hooks.PreToolCallHook, hooks.Func(func(ctx context.Context, p *hooks.PreToolCall) *hooks.ToolDecision {
			args, _ := json.Marshal(p.Args)
			if len(args) > 200 {
				args = args[:200]
			}
			log.Info("TOOL_CALL", "session", p.TaskID, "tool", p.ToolName, "args", string(args))
			return nil
		}))
		return nil
	},
}
