package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Model answers one chat-completion request.
type Model interface {
	Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// OpenAI is a Model backed by any OpenAI-compatible endpoint through
// go-openai.
type OpenAI struct {
	client *openai.Client
}

// NewOpenAI returns a model client for baseURL with apiKey. A zero
// httpClient gets one with a 10-minute overall timeout (go-openai's default
// has none).
func NewOpenAI(baseURL, apiKey string, httpClient *http.Client) *OpenAI {
	cfg := openai.DefaultConfig(apiKey)
	if baseURL != "" {
		cfg.BaseURL = strings.TrimRight(baseURL, "/")
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 10 * time.Minute}
	}
	cfg.HTTPClient = httpClient
	cfg.EmptyMessagesLimit = 10000
	return &OpenAI{client: openai.NewClientWithConfig(cfg)}
}

func (m *OpenAI) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return m.client.CreateChatCompletion(ctx, req)
}

// EchoPrefix labels every reply of the offline model.
const EchoPrefix = "[echo model — offline] "

// DemoPhrase makes the echo model call the terminal tool: a message
// "run: <command>" asks it to run <command>, so approvals and
// pre_tool_call hooks can be tried with no credentials.
const DemoPhrase = "run:"

// Echo is the offline model: it answers with the user's words, labelled,
// and calls terminal for "run: <command>".
type Echo struct{}

func (Echo) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if err := ctx.Err(); err != nil {
		return openai.ChatCompletionResponse{}, err
	}
	if len(req.Messages) == 0 {
		return openai.ChatCompletionResponse{}, errors.New("echo: no messages")
	}
	last := req.Messages[len(req.Messages)-1]
	resp := openai.ChatCompletionResponse{ID: "echo", Model: "echo", Object: "chat.completion", Created: time.Now().Unix()}
	if last.Role == openai.ChatMessageRoleTool {
		resp.Choices = []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonStop, Message: openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleAssistant, Content: EchoPrefix + "the command returned:\n" + last.Content,
		}}}
		return resp, nil
	}
	text := userText(last)
	if cmd, ok := demoCommand(text); ok && hasTool(req.Tools, "terminal") {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		resp.Choices = []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonToolCalls, Message: openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleAssistant,
			ToolCalls: []openai.ToolCall{{ID: fmt.Sprintf("call_echo_%d", len(req.Messages)), Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: "terminal", Arguments: string(args)}}},
		}}}
		return resp, nil
	}
	resp.Choices = []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonStop, Message: openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleAssistant, Content: EchoPrefix + text,
	}}}
	resp.Usage = openai.Usage{PromptTokens: len(text) / 4, CompletionTokens: len(text) / 4}
	return resp, nil
}

func userText(m openai.ChatCompletionMessage) string {
	// pre_llm_call context is appended after a blank line; echo only the
	// user's own words
	return m.Content
}

func demoCommand(text string) (string, bool) {
	t := strings.TrimSpace(text)
	if i := strings.Index(t, "\n\n"); i >= 0 {
		t = t[:i]
	}
	if !strings.HasPrefix(strings.ToLower(t), DemoPhrase) {
		return "", false
	}
	cmd := strings.TrimSpace(t[len(DemoPhrase):])
	return cmd, cmd != ""
}

func hasTool(tools []openai.Tool, name string) bool {
	for _, t := range tools {
		if t.Function != nil && t.Function.Name == name {
			return true
		}
	}
	return false
}
