// Package guardrails adds a standing policy to every turn through
// pre_llm_call. The text goes into the current user message at request
// time only — never the system prompt (so the prompt cache stays warm) and
// never the stored transcript.
package guardrails

import (
	"context"

	"github.com/heraldgw/herald/hooks"
)

// Policy is the text injected into every turn.
var Policy = "Never execute commands that delete files without explicit user confirmation."

// Plugin is the guardrail injector.
var Plugin = hooks.Plugin{
	Name:        "guardrails",
	Description: "inject a standing policy into each turn (pre_llm_call)",
	Register: func(c *hooks.PluginContext) error {
		c.RegisterHook(hooks.PreLLMCallHook, hooks.Func(func(ctx context.Context, p *hooks.PreLLMCall) *hooks.LLMContext {
			return &hooks.LLMContext{Context: Policy}
		}))
		return nil
	},
}
