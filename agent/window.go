package agent

import (
	openai "github.com/sashabaranov/go-openai"
)

// Token estimates are characters / 4, as Hermes' approx_input_tokens:
// good enough to stay clear of the limit, with no tokenizer.

func messageChars(m *openai.ChatCompletionMessage) int {
	n := len(m.Content) + len(m.Name) + len(m.ToolCallID) + len(m.Role)
	for _, p := range m.MultiContent {
		n += len(p.Text)
	}
	for _, tc := range m.ToolCalls {
		n += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments)
	}
	return n
}

func estimateTokens(msgs []openai.ChatCompletionMessage, extraChars int) int {
	n := extraChars
	for i := range msgs {
		n += messageChars(&msgs[i]) + 16 // per-message overhead
	}
	return n / 4
}

// droppedToolOutput replaces an old tool result cut to fit the window.
const droppedToolOutput = `{"note":"this tool output was removed to fit the context window"}`

// trimReport says what fitWindow dropped.
type trimReport struct {
	ToolOutputs  int
	Turns        int
	Messages     int
	TokensBefore int
	TokensAfter  int
	StillOver    bool
}

// fitWindow returns msgs cut to about budget tokens, without touching the
// caller's slice: first old tool outputs are replaced by a note (oldest
// first, never those of the latest model answer), then the oldest turns
// are dropped whole (a user message and everything up to the next one),
// never the system prompt (index 0 when hasSystem) nor anything from the
// current user message (index cur) on.
func fitWindow(msgs []openai.ChatCompletionMessage, hasSystem bool, cur, budget, extraChars int) ([]openai.ChatCompletionMessage, trimReport) {
	rep := trimReport{TokensBefore: estimateTokens(msgs, extraChars)}
	rep.TokensAfter = rep.TokensBefore
	if budget <= 0 || rep.TokensBefore <= budget {
		return msgs, rep
	}
	out := append([]openai.ChatCompletionMessage(nil), msgs...)
	total := rep.TokensBefore * 4
	// the results of the latest model answer stay: the model is about to
	// read them
	lastAssistant := -1
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == openai.ChatMessageRoleAssistant {
			lastAssistant = i
			break
		}
	}
	for i := range out {
		if total/4 <= budget {
			break
		}
		if i >= lastAssistant && lastAssistant >= 0 {
			break
		}
		if out[i].Role != openai.ChatMessageRoleTool || out[i].Content == droppedToolOutput {
			continue
		}
		total -= len(out[i].Content) - len(droppedToolOutput)
		out[i].Content = droppedToolOutput
		rep.ToolOutputs++
	}
	start := 0
	if hasSystem {
		start = 1
	}
	end := start // messages [start, end) are dropped
	for total/4 > budget && end < cur {
		// one turn: from end up to (not including) the next user message
		j := end + 1
		for j < cur && out[j].Role != openai.ChatMessageRoleUser {
			j++
		}
		for k := end; k < j; k++ {
			total -= messageChars(&out[k]) + 16
		}
		rep.Turns++
		end = j
	}
	if end > start {
		rep.Messages = end - start
		out = append(out[:start:start], out[end:]...)
	}
	rep.TokensAfter = total / 4
	rep.StillOver = rep.TokensAfter > budget
	return out, rep
}
