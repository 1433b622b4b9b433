package local_test

import (
	"context"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/gateway/gatewaytest"
)

// streamModel streams its answer in pieces, holding before each piece
// after the first until the test releases it.
type streamModel struct {
	pieces []string
	gates  []chan struct{} // gates[i] holds pieces[i+1]
}

func newStreamModel(pieces ...string) *streamModel {
	m := &streamModel{pieces: pieces}
	for range pieces[1:] {
		m.gates = append(m.gates, make(chan struct{}))
	}
	return m
}

func (m *streamModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return m.CompleteStream(ctx, req, func(string) {})
}

func (m *streamModel) CompleteStream(ctx context.Context, req openai.ChatCompletionRequest, onText func(string)) (openai.ChatCompletionResponse, error) {
	text := ""
	for i, p := range m.pieces {
		if i > 0 {
			select {
			case <-m.gates[i-1]:
			case <-ctx.Done():
				return openai.ChatCompletionResponse{}, ctx.Err()
			}
		}
		text += p
		onText(text)
	}
	return openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonStop,
		Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: text}}}}, nil
}

// A streamed reply is kept as it is produced: its first words are in
// the chat's outbox while the model still writes, as one message that
// then grows; the POST that caused it answers with the final text, once,
// and the outbox keeps one message with the final text, marked edited.
func TestStreamedReplyGrowsInTheOutbox(t *testing.T) {
	model := newStreamModel("Hello", ", wor", "ld!")
	g := gatewaytest.Start(t, gatewaytest.Options{Model: model})
	done := make(chan answer, 1)
	go func() { done <- post(t, g.URL, "?wait=60", msg("c", "", "hi")) }()

	p := getOutbox(t, nil, g.URL, "/v1/chats/c/messages?wait=30")
	if p.Status != 200 || p.texts() != "Hello" {
		t.Fatalf("outbox while the model writes: %+v", p)
	}
	id := p.Messages[0].ID
	for _, gate := range model.gates {
		close(gate)
	}
	a := <-done
	if a.Status != http.StatusOK || len(a.Replies) != 1 || a.Replies[0].Text != "Hello, world!" {
		t.Fatalf("POST: %d %+v", a.Status, a.Replies)
	}
	p = getOutbox(t, nil, g.URL, "/v1/chats/c/messages")
	if len(p.Messages) != 1 || p.Messages[0].ID != id || p.Messages[0].Text != "Hello, world!" || p.Messages[0].EditedAt == nil {
		t.Fatalf("outbox after the turn: %+v", p)
	}
}
