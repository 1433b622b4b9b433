package agent

import (
	"context"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/hooks"
)

func msg(role, content string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: role, Content: content}
}

func TestFitWindow(t *testing.T) {
	big := strings.Repeat("x", 4000) // ~1000 tokens
	conv := []openai.ChatCompletionMessage{
		msg("system", "sys"),
		msg("user", "old question"), {Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "t1", Function: openai.FunctionCall{Name: "f"}}}}, {Role: "tool", ToolCallID: "t1", Content: big}, msg("assistant", "old answer"),
		msg("user", "second"), msg("assistant", "answer 2"),
		msg("user", "current"), {Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "t2", Function: openai.FunctionCall{Name: "f"}}}}, {Role: "tool", ToolCallID: "t2", Content: big},
	}
	cur := 7
	for _, tc := range []struct {
		name   string
		budget int
		tools  int
		turns  int
		keep   []string // contents that must survive
	}{
		{"fits", 5000, 0, 0, []string{"old question", "second"}},
		{"old tool output first", 1200, 1, 0, []string{"old question", "second", "current"}},
		{"then oldest turns", 1040, 1, 1, []string{"second", "current"}},
		{"never the system prompt or the current turn", 10, 1, 2, []string{"sys", "current", big}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, rep := fitWindow(conv, true, cur, tc.budget, 0)
			if rep.ToolOutputs != tc.tools || rep.Turns != tc.turns {
				t.Errorf("report %+v", rep)
			}
			var all []string
			for _, m := range out {
				all = append(all, m.Content)
			}
			for _, k := range tc.keep {
				if !contains(all, k) {
					t.Errorf("%.20q dropped", k)
				}
			}
			if out[0].Content != "sys" || conv[3].Content != big {
				t.Error("system prompt dropped or input changed")
			}
			// no tool result without its assistant message
			for i, m := range out {
				if m.Role == "tool" && (i == 0 || (out[i-1].Role != "assistant" && out[i-1].Role != "tool")) {
					t.Errorf("orphan tool result at %d", i)
				}
			}
		})
	}
}

func TestContextWindowInRun(t *testing.T) {
	m := &funcModel{fn: func(int, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return textResp("ok"), nil
	}}
	a := newAgent(m, hooks.NewRegistry(nil))
	a.ContextWindow = 400
	var lb logBuffer
	a.Log = lb.logger()
	big := strings.Repeat("y", 2000)
	hist := []openai.ChatCompletionMessage{msg("user", "a"), msg("assistant", big), msg("user", "b"), msg("assistant", "short")}
	res, err := a.Run(context.Background(), "now", Options{History: hist})
	if err != nil {
		t.Fatal(err)
	}
	sent := m.requests()[0].Messages
	if len(sent) != 3 || sent[0].Content != "b" || sent[2].Content != "now" {
		t.Errorf("sent %d messages: %+v", len(sent), sent)
	}
	mustContain(t, lb.String(), "dropped_turns=1")
	if len(res.Messages) != 2 || res.Messages[0].Content != "now" {
		t.Errorf("result messages %+v", res.Messages)
	}
}
