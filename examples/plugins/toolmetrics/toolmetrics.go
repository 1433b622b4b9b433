// Package toolmetrics counts tool calls, errors (a result whose JSON has
// an "error" key) and latency per tool, from post_tool_call, and logs a
// summary line after each call.
package toolmetrics

import (
	"context"
	"encoding/json"
	"sort"
	"sync"

	"github.com/heraldgw/herald/hooks"
)

// Stats is one tool's figures.
type Stats struct {
	Calls     int
	Errors    int
	LatencyMS []int64
}

var (
	mu    sync.Mutex
	stats = map[string]*Stats{}
)

// Snapshot returns a copy of the figures so far.
func Snapshot() map[string]Stats {
	mu.Lock()
	defer mu.Unlock()
	out := make(map[string]Stats, len(stats))
	for k, v := range stats {
		s := *v
		s.LatencyMS = append([]int64(nil), v.LatencyMS...)
		out[k] = s
	}
	return out
}

// Plugin is the tool metrics collector.
var Plugin = hooks.Plugin{
	Name:        "tool-metrics",
	Description: "count tool calls, errors and latency (post_tool_call)",
	Register: func(c *hooks.PluginContext) error {
		log := c.Logger()
		c.RegisterHook(hooks.PostToolCallHook, hooks.Observe(func(ctx context.Context, p *hooks.ToolResult) {
			var parsed map[string]any
			isErr := json.Unmarshal([]byte(p.Result), &parsed) == nil && parsed["error"] != nil
			mu.Lock()
			s := stats[p.ToolName]
			if s == nil {
				s = &Stats{}
				stats[p.ToolName] = s
			}
			s.Calls++
			if isErr {
				s.Errors++
			}
			s.LatencyMS = append(s.LatencyMS, p.DurationMS)
			lat := append([]int64(nil), s.LatencyMS...)
			calls, errs := s.Calls, s.Errors
			mu.Unlock()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			log.Info("TOOL_METRICS", "tool", p.ToolName, "calls", calls, "errors", errs, "p50_ms", lat[len(lat)/2], "max_ms", lat[len(lat)-1])
		}))
		return nil
	},
}
