// Package memory connects herald to an external memory service, the two
// halves of Hermes' memory examples: pre_llm_call recalls memories for the
// user's message and injects them as context; post_llm_call stores each
// finished exchange (best effort, off the hot path).
//
// The service is at $HERALD_MEMORY_API (POST /recall {session_id, query}
// → {"results":[{"text"}]}, POST /store {session_id, user, assistant});
// requests are signed with $HERALD_MEMORY_SECRET (package signed).
package memory

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/heraldgw/herald/examples/plugins/signed"
	"github.com/heraldgw/herald/hooks"
)

const secretEnv = "HERALD_MEMORY_SECRET"

// Plugin is the memory recall and sync.
var Plugin = hooks.Plugin{
	Name:        "memory",
	Description: "recall memories before a turn (pre_llm_call) and store it after (post_llm_call)",
	Register: func(c *hooks.PluginContext) error {
		log := c.Logger()
		c.RegisterHook(hooks.PreLLMCallHook, hooks.Func(func(ctx context.Context, p *hooks.PreLLMCall) *hooks.LLMContext {
			api := os.Getenv("HERALD_MEMORY_API")
			if api == "" {
				return nil
			}
			ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			var out struct {
				Results []struct {
					Text string `json:"text"`
				} `json:"results"`
			}
			if err := signed.Post(ctx, api+"/recall", secretEnv, map[string]string{"session_id": p.SessionID, "query": p.UserMessage}, &out); err != nil {
				log.Warn("memory recall failed", "err", err)
				return nil
			}
			if len(out.Results) == 0 {
				return nil
			}
			var b strings.Builder
			b.WriteString("Recalled context:")
			for _, m := range out.Results {
				b.WriteString("\n- " + m.Text)
			}
			return &hooks.LLMContext{Context: b.String()}
		}))
		c.RegisterHook(hooks.PostLLMCallHook, hooks.Observe(func(ctx context.Context, p *hooks.PostLLMCall) {
			api := os.Getenv("HERALD_MEMORY_API")
			if api == "" {
				return
			}
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := signed.Post(ctx, api+"/store", secretEnv, map[string]string{"session_id": p.SessionID, "user": p.UserMessage, "assistant": p.AssistantResponse}, nil); err != nil {
				log.Warn("memory store failed", "err", err)
			}
		}))
		return nil
	},
}
