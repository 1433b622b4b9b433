package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/hooks"
)

func TestDelegateThreeChildren(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := hooks.NewRegistry(nil)
		rec := observe(reg)
		// children finish in the reverse of their task order
		delay := map[string]time.Duration{"alpha": 3 * time.Second, "beta": 2 * time.Second, "gamma": time.Second}
		var mu sync.Mutex
		var childTools [][]string
		m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
			first := req.Messages[0].Content
			for name, d := range delay {
				if strings.HasPrefix(first, "task "+name) {
					var tools []string
					for _, t := range req.Tools {
						tools = append(tools, t.Function.Name)
					}
					mu.Lock()
					childTools = append(childTools, tools)
					mu.Unlock()
					time.Sleep(d)
					if name == "beta" {
						return textResp(""), nil // a child that fails
					}
					return textResp("did " + name), nil
				}
			}
			if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
				return textResp("all done: " + req.Messages[len(req.Messages)-1].Content), nil
			}
			return callResp("d1", "delegate_task", map[string]any{"tasks": []any{
				map[string]any{"goal": "task alpha", "role": "researcher"},
				map[string]any{"goal": "task beta", "context": "some context"},
				map[string]any{"goal": "task gamma"},
			}}), nil
		}}
		a := newAgent(m, reg, &stubTool{name: "lookup"})
		a.Tools.Add(&Delegate{Agent: a})
		start := time.Now()
		res, err := a.Run(t.Context(), "split the work", Options{Turn: Turn{SessionID: "parent-1"}})
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 3*time.Second {
			t.Errorf("children did not run in parallel: %s", took)
		}
		drain(t, reg)
		for _, tools := range childTools {
			if contains(tools, "delegate_task") || !contains(tools, "lookup") {
				t.Errorf("child tools %v", tools)
			}
		}
		stops := rec.of(hooks.SubagentStopHook)
		if len(stops) != 3 {
			t.Fatalf("subagent_stop fired %d times", len(stops))
		}
		var got []any
		for _, s := range stops {
			var p map[string]any
			json.Unmarshal(s.Payload, &p)
			got = append(got, p)
		}
		golden(t, "subagent_stop", got)
		// durations are exact in fake time (normalize zeroed them above)
		var raw []map[string]any
		json.Unmarshal([]byte(res.FinalResponse[len("all done: "):]), &struct{ Results *[]map[string]any }{&raw})
		for i, want := range []float64{3000, 2000, 1000} {
			if raw[i]["duration_ms"] != want {
				t.Errorf("child %d duration %v", i, raw[i]["duration_ms"])
			}
		}
		mustContain(t, res.FinalResponse, `"status":"completed"`)
		mustContain(t, res.FinalResponse, `"status":"failed"`)
	})
}

func TestDelegateInterrupted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := hooks.NewRegistry(nil)
		rec := observe(reg)
		ctx, cancel := context.WithCancel(t.Context())
		m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
			if strings.HasPrefix(req.Messages[0].Content, "slow") {
				cancel()
				return openai.ChatCompletionResponse{}, context.Canceled
			}
			return callResp("d1", "delegate_task", map[string]any{"goal": "slow job"}), nil
		}}
		a := newAgent(m, reg)
		a.Tools.Add(&Delegate{Agent: a})
		res, _ := a.Run(ctx, "go", Options{Turn: Turn{SessionID: "p"}})
		drain(t, reg)
		stops := rec.of(hooks.SubagentStopHook)
		if !res.Interrupted || len(stops) != 1 || !strings.Contains(string(stops[0].Payload), `"child_status":"interrupted"`) {
			t.Errorf("res %+v stops %v", res, stops)
		}
	})
}
