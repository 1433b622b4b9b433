package agent

import (
	"context"
	"encoding/json"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/hooks"
)

// instantModel answers at once: a call of the noop tool, then, once the
// tool result is the last message, a final text.
type instantModel struct{ call, final openai.ChatCompletionResponse }

func (m *instantModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
		return m.final, nil
	}
	return m.call, nil
}

type noopTool struct{}

func (noopTool) Name() string            { return "noop" }
func (noopTool) Description() string     { return "does nothing" }
func (noopTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object","properties":{}}`) }
func (noopTool) Run(context.Context, *Call) (string, error) {
	return `{"ok":true}`, nil
}

// BenchmarkIteration measures the agent's own overhead for one tool
// iteration: model call (instant), pre_tool_call, the no-op tool,
// post_tool_call, transform_tool_result, agent:step, plus the final
// answer's call. One op is one Run of two model calls and one tool call.
func BenchmarkIteration(b *testing.B) {
	for _, bc := range []struct {
		name string
		sub  bool
	}{{"no hooks", false}, {"one observer and one pre_tool_call hook", true}} {
		b.Run(bc.name, func(b *testing.B) {
			reg := hooks.NewRegistry(nil)
			if bc.sub {
				reg.Subscribe(hooks.Subscription{Name: "obs", Events: []string{hooks.PostToolCallHook, hooks.AgentStepEv, hooks.PreAPIRequestHook, hooks.PostAPIRequestHook},
					Handler: func(context.Context, hooks.Event) (any, error) { return nil, nil }})
				reg.Subscribe(hooks.Subscription{Name: "pre", Events: []string{hooks.PreToolCallHook},
					Handler: func(context.Context, hooks.Event) (any, error) { return nil, nil }})
			}
			m := &instantModel{call: callResp("c1", "noop", map[string]any{"x": 1}), final: textResp("done")}
			a := newAgent(m, reg, noopTool{})
			a.ContextWindow = 128000
			hist := []openai.ChatCompletionMessage{msg("user", "earlier"), msg("assistant", "reply")}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := a.Run(ctx, "go", Options{Turn: Turn{SessionID: "s"}, History: hist}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			drain(b, reg)
		})
	}
}
