// Package orchestration logs every delegate_task child as it finishes
// (subagent_stop): parent session, role, status and duration.
package orchestration

import (
	"context"

	"github.com/heraldgw/herald/hooks"
)

// Plugin is the orchestration log.
var Plugin = hooks.Plugin{
	Name:        "orchestration-log",
	Description: "log each sub-agent as it finishes (subagent_stop)",
	Register: func(c *hooks.PluginContext) error {
		log := c.Logger()
		c.RegisterHook(hooks.SubagentStopHook, hooks.Observe(func(ctx context.Context, p *hooks.SubagentStop) {
			role := "none"
			if p.ChildRole != nil {
				role = *p.ChildRole
			}
			log.Info("SUBAGENT", "parent", p.ParentSessionID, "role", role, "status", p.ChildStatus, "duration_ms", p.DurationMS)
		}))
		return nil
	},
}
