// Package responselength logs the length of every final answer
// (post_llm_call): one RESPONSE line per turn with session, model and
// characters.
package responselength

import (
	"context"
	"unicode/utf8"

	"github.com/heraldgw/herald/hooks"
)

// Plugin is the response-length logger.
var Plugin = hooks.Plugin{
	Name:        "response-length",
	Description: "log each answer's length (post_llm_call)",
	Register: func(c *hooks.PluginContext) error {
		log := c.Logger()
		c.RegisterHook(hooks.PostLLMCallHook, hooks.Observe(func(ctx context.Context, p *hooks.PostLLMCall) {
			log.Info("RESPONSE", "session", p.SessionID, "model", p.Model, "chars", utf8.RuneCountInString(p.AssistantResponse))
		}))
		return nil
	},
}
