package agent

import (
	"fmt"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// fuzzConversation builds a conversation from shape: each byte is one
// step (its low two bits the kind: a user message, an assistant answer,
// an assistant tool call with its result, a stray tool result; the rest
// its size), then the current user message, with a system prompt when
// system is set. It returns the messages and the current message's index.
func fuzzConversation(shape []byte, system bool) ([]openai.ChatCompletionMessage, int) {
	var msgs []openai.ChatCompletionMessage
	if system {
		msgs = append(msgs, msg("system", "sys"))
	}
	for i, b := range shape {
		text := strings.Repeat("x", int(b>>2)*40)
		switch b & 3 {
		case 0:
			msgs = append(msgs, msg("user", text))
		case 1:
			msgs = append(msgs, msg("assistant", text))
		case 2:
			id := fmt.Sprintf("t%d", i)
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: id, Function: openai.FunctionCall{Name: "f"}}}},
				openai.ChatCompletionMessage{Role: "tool", ToolCallID: id, Content: text})
		case 3:
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "tool", ToolCallID: "stray", Content: text})
		}
	}
	msgs = append(msgs, msg("user", "current"))
	return msgs, len(msgs) - 1
}

// Whatever the conversation and the budget, a cut keeps the system prompt
// and the current message, leaves its input alone, and reports exactly
// the messages it dropped (DropFrom:DropTo, Messages) and the tool
// outputs it replaced.
func FuzzFitWindow(f *testing.F) {
	f.Add([]byte{0, 201, 0, 202, 1, 0, 5}, true, 300)
	f.Add([]byte{2, 2, 2, 0, 255}, false, 10)
	f.Add([]byte{3, 0, 1}, true, 0)
	f.Fuzz(func(t *testing.T, shape []byte, system bool, budget int) {
		if len(shape) > 200 {
			shape = shape[:200]
		}
		msgs, cur := fuzzConversation(shape, system)
		orig := make([]string, len(msgs))
		for i := range msgs {
			orig[i] = msgs[i].Content
		}
		out, rep := fitWindow(msgs, system, cur, budget, 0)
		for i := range msgs {
			if msgs[i].Content != orig[i] {
				t.Fatalf("input message %d changed", i)
			}
		}
		if rep.Messages != rep.DropTo-rep.DropFrom || len(out) != len(msgs)-rep.Messages {
			t.Fatalf("report %+v, %d of %d messages kept", rep, len(out), len(msgs))
		}
		if rep.Messages > 0 && (rep.DropFrom != boolIndex(system) || rep.DropTo > cur) {
			t.Fatalf("dropped %d:%d (current %d)", rep.DropFrom, rep.DropTo, cur)
		}
		if system && out[0].Content != "sys" {
			t.Fatal("system prompt dropped")
		}
		if last := out[len(out)-1]; last.Content != "current" {
			t.Fatalf("current message dropped: %+v", last)
		}
		replaced := 0
		for _, m := range out {
			if m.Content == droppedToolOutput {
				replaced++
			}
		}
		if replaced != rep.ToolOutputs && rep.Messages == 0 {
			t.Fatalf("%d tool outputs replaced, %d reported", replaced, rep.ToolOutputs)
		}
		if budget > 0 && rep.TokensBefore <= budget && (rep.Turns > 0 || rep.ToolOutputs > 0) {
			t.Fatalf("cut a request that fits: %+v", rep)
		}
	})
}
