// Package sessioncache keeps per-session state from on_session_start to
// on_session_end: a cache made when a session's first turn starts (model,
// platform, start time, tool calls counted by post_tool_call) and flushed
// with a summary and the session's duration at the end of each run.
// Observers of one plugin see events in the order they happened, so the
// cache always exists before the tool calls that update it.
package sessioncache

import (
	"context"
	"sync"
	"time"

	"github.com/heraldgw/herald/hooks"
)

type entry struct {
	model, platform string
	started         time.Time
	toolCalls       int
}

var (
	mu     sync.Mutex
	caches = map[string]*entry{}
)

// Plugin is the session cache and duration tracker.
var Plugin = hooks.Plugin{
	Name:        "session-cache",
	Description: "per-session cache and duration (on_session_start, post_tool_call, on_session_end)",
	Register: func(c *hooks.PluginContext) error {
		log := c.Logger()
		c.RegisterHook(hooks.OnSessionStartHook, hooks.Observe(func(ctx context.Context, p *hooks.SessionStarted) {
			mu.Lock()
			caches[p.SessionID] = &entry{model: p.Model, platform: p.Platform, started: time.Now()}
			mu.Unlock()
		}))
		c.RegisterHook(hooks.PostToolCallHook, hooks.Observe(func(ctx context.Context, p *hooks.ToolResult) {
			mu.Lock()
			if e := caches[p.SessionID]; e != nil {
				e.toolCalls++
			}
			mu.Unlock()
		}))
		c.RegisterHook(hooks.OnSessionEndHook, hooks.Observe(func(ctx context.Context, p *hooks.SessionEnded) {
			mu.Lock()
			e := caches[p.SessionID]
			delete(caches, p.SessionID)
			mu.Unlock()
			if e == nil {
				return
			}
			status := "failed"
			switch {
			case p.Completed:
				status = "completed"
			case p.Interrupted:
				status = "interrupted"
			}
			log.Info("SESSION_DURATION", "session", p.SessionID, "seconds", time.Since(e.started).Seconds(),
				"status", status, "tool_calls", e.toolCalls, "platform", e.platform, "model", e.model)
		}))
		return nil
	},
}
