package gateway

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// trickle streams its answer one word every 200 ms.
type trickle struct{ words []string }

func (m trickle) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return m.CompleteStream(ctx, req, nil)
}

func (m trickle) CompleteStream(ctx context.Context, req openai.ChatCompletionRequest, onText func(string)) (openai.ChatCompletionResponse, error) {
	var text string
	for _, w := range m.words {
		time.Sleep(200 * time.Millisecond)
		text += w + " "
		if onText != nil {
			onText(text)
			onText(text) // the same text twice must not cause an edit
		}
	}
	return openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonStop,
		Message: openai.ChatCompletionMessage{Role: "assistant", Content: strings.TrimSpace(text)}}}}, nil
}

func TestStreamingEdits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &editAdapter{fakeAdapter: fakeAdapter{name: "fake"}}
		words := strings.Fields("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen")
		b := newBubble(t, ad, trickle{words: words})
		defer b.stop()
		took := b.turnTook(t, "go")
		sent := ad.texts()
		if len(sent) != 1 || sent[0] != "one " {
			t.Fatalf("sent %q", sent)
		}
		ad.mu.Lock()
		edits := append([]string{}, ad.edits...)
		ad.mu.Unlock()
		if len(edits) == 0 || edits[len(edits)-1] != strings.Join(words, " ") {
			t.Fatalf("edits %q", edits)
		}
		// at most about one edit per second while streaming, plus the final one
		if max := int(took/time.Second) + 2; len(edits) > max {
			t.Fatalf("%d edits in %s", len(edits), took)
		}
		for i := 1; i < len(edits); i++ {
			if edits[i] == edits[i-1] {
				t.Fatalf("identical edit %q", edits[i])
			}
		}
	})
}

// Without an Editor the reply is delivered once, normally.
func TestNoStreamingWithoutEditor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, trickle{words: []string{"a", "b"}})
		defer b.stop()
		outcome(t, b.send("c1", "u1", "go"))
		if got := ad.texts(); len(got) != 1 || got[0] != "a b" {
			t.Fatalf("sent %q", got)
		}
	})
}
