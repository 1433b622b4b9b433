// Package textstyle rewrites the final answer in a playful style
// (transform_llm_output), only while HERALD_SPONGEBOB_MODE=on: with it off
// the hook returns nothing and the answer is unchanged.
package textstyle

import (
	"context"
	"os"
	"strings"

	"github.com/heraldgw/herald/hooks"
)

// Plugin is the opt-in text style.
var Plugin = hooks.Plugin{
	Name:        "text-style",
	Description: "opt-in playful style for answers (transform_llm_output)",
	Register: func(c *hooks.PluginContext) error {
		c.RegisterHook(hooks.TransformLLMOutputHook, hooks.Func(func(ctx context.Context, p *hooks.LLMOutput) *hooks.Replace {
			if os.Getenv("HERALD_SPONGEBOB_MODE") != "on" {
				return nil
			}
			return &hooks.Replace{Text: strings.ReplaceAll(p.ResponseText, "!", "!! Tartar sauce!") + " 🧽"}
		}))
		return nil
	},
}
