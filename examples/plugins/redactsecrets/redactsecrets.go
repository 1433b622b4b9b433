// Package redactsecrets rewrites tool results before the model sees them
// (transform_tool_result), masking OpenAI-style keys (sk-…) and an
// organisation's own token shape (here acme_…). herald's own redactor
// already hides the credential shapes it knows, sk-… among them; this is
// how to add patterns of your own.
package redactsecrets

import (
	"context"
	"regexp"

	"github.com/heraldgw/herald/hooks"
)

// Secret is what gets masked.
var Secret = regexp.MustCompile(`sk-[A-Za-z0-9]{32,}|acme_[A-Za-z0-9]{24,}`)

// Plugin is the tool-result redactor.
var Plugin = hooks.Plugin{
	Name:        "redact-secrets",
	Description: "mask sk-… and acme_… tokens in tool results (transform_tool_result)",
	Register: func(c *hooks.PluginContext) error {
		c.RegisterHook(hooks.TransformToolResultHook, hooks.Func(func(ctx context.Context, p *hooks.ToolResult) *hooks.Replace {
			if !Secret.MatchString(p.Result) {
				return nil // unchanged
			}
			return &hooks.Replace{Text: Secret.ReplaceAllString(p.Result, "[REDACTED]")}
		}))
		return nil
	},
}
