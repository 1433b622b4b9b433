// Package summarizefind replaces the raw output of a huge `find` with its
// first 40 lines and a count (transform_terminal_output), before herald
// cuts, strips and redacts terminal output.
package summarizefind

import (
	"context"
	"fmt"
	"strings"

	"github.com/heraldgw/herald/hooks"
)

// Threshold is the output size above which find output is summarised.
var Threshold = 50_000

// Plugin is the find summariser.
var Plugin = hooks.Plugin{
	Name:        "summarize-find",
	Description: "summarise huge find output (transform_terminal_output)",
	Register: func(c *hooks.PluginContext) error {
		c.RegisterHook(hooks.TransformTerminalOutputHook, hooks.Func(func(ctx context.Context, p *hooks.TerminalOutput) *hooks.Replace {
			if !strings.HasPrefix(strings.TrimSpace(p.Command), "find ") || len(p.Output) <= Threshold {
				return nil
			}
			lines := strings.Split(strings.TrimRight(p.Output, "\n"), "\n")
			head := lines
			if len(head) > 40 {
				head = head[:40]
			}
			return &hooks.Replace{Text: fmt.Sprintf("%s\n\n[summary: %d paths total, showing first 40]", strings.Join(head, "\n"), len(lines))}
		}))
		return nil
	},
}
