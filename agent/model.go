package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// Model answers one chat-completion request.
type Model interface {
	Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// StreamModel is a Model that can also stream its answer. CompleteStream
// calls onText with the text received so far (growing) and returns the
// whole response once the stream ends, assembled as if it had not been
// streamed. The agent uses it when Options.Stream is set.
type StreamModel interface {
	Model
	CompleteStream(ctx context.Context, req openai.ChatCompletionRequest, onText func(string)) (openai.ChatCompletionResponse, error)
}

// MalformedError is a model answer that could not be understood. Snippet
// holds the start of the raw body (not redacted: log it through the
// redactor).
type MalformedError struct {
	Err     error
	Snippet string
}

func (e *MalformedError) Error() string { return "malformed model response: " + e.Err.Error() }
func (e *MalformedError) Unwrap() error { return e.Err }

// OpenAI is a Model backed by any OpenAI-compatible endpoint through
// go-openai.
type OpenAI struct {
	client *openai.Client
}

var (
	_ Model       = (*OpenAI)(nil)
	_ StreamModel = (*OpenAI)(nil)
	_ StreamModel = Echo{}
)

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
	// keep the start of every response body, so that an answer go-openai
	// cannot decode can be shown in the log
	c := *httpClient
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = captureTransport{base: base}
	cfg.HTTPClient = &c
	cfg.EmptyMessagesLimit = 10000
	return &OpenAI{client: openai.NewClientWithConfig(cfg)}
}

func (m *OpenAI) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	cp := &capture{}
	resp, err := m.client.CreateChatCompletion(context.WithValue(ctx, captureKey{}, cp), req)
	if err != nil {
		return resp, classify(err, cp)
	}
	return resp, nil
}

// CompleteStream streams the answer (SSE) and assembles it: text is
// concatenated, tool-call fragments are joined by their index.
func (m *OpenAI) CompleteStream(ctx context.Context, req openai.ChatCompletionRequest, onText func(string)) (openai.ChatCompletionResponse, error) {
	cp := &capture{}
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	st, err := m.client.CreateChatCompletionStream(context.WithValue(ctx, captureKey{}, cp), req)
	if err != nil {
		return openai.ChatCompletionResponse{}, classify(err, cp)
	}
	defer st.Close()
	var acc streamAccumulator
	for {
		chunk, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return acc.response(), ctx.Err()
			}
			return acc.response(), classify(err, cp)
		}
		if acc.add(chunk) && onText != nil {
			onText(acc.text.String())
		}
	}
	return acc.response(), nil
}

// streamAccumulator assembles streamed chunks into one response.
type streamAccumulator struct {
	id, model string
	created   int64
	text      strings.Builder
	calls     []openai.ToolCall
	byIndex   map[int]int // chunk index → position in calls
	finish    openai.FinishReason
	usage     openai.Usage
}

// add takes one chunk and reports whether the text grew.
func (a *streamAccumulator) add(c openai.ChatCompletionStreamResponse) bool {
	if a.id == "" {
		a.id, a.model, a.created = c.ID, c.Model, c.Created
	}
	if c.Usage != nil {
		a.usage = *c.Usage
	}
	if len(c.Choices) == 0 { // the usage-only last chunk
		return false
	}
	ch := c.Choices[0]
	if ch.FinishReason != "" {
		a.finish = ch.FinishReason
	}
	for _, tc := range ch.Delta.ToolCalls {
		pos := -1
		switch {
		case tc.Index != nil:
			if a.byIndex == nil {
				a.byIndex = map[int]int{}
			}
			if p, ok := a.byIndex[*tc.Index]; ok {
				pos = p
			} else {
				a.byIndex[*tc.Index] = len(a.calls)
			}
		case tc.ID == "" && len(a.calls) > 0:
			// no index and no id: a continuation of the last call
			pos = len(a.calls) - 1
		}
		if pos < 0 {
			a.calls = append(a.calls, openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction})
			pos = len(a.calls) - 1
		}
		cur := &a.calls[pos]
		if tc.ID != "" {
			cur.ID = tc.ID
		}
		if tc.Type != "" {
			cur.Type = tc.Type
		}
		cur.Function.Name += tc.Function.Name
		cur.Function.Arguments += tc.Function.Arguments
	}
	if ch.Delta.Content == "" {
		return false
	}
	a.text.WriteString(ch.Delta.Content)
	return true
}

func (a *streamAccumulator) response() openai.ChatCompletionResponse {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: a.text.String()}
	if len(a.calls) > 0 {
		msg.ToolCalls = append([]openai.ToolCall(nil), a.calls...)
	}
	return openai.ChatCompletionResponse{
		ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model, Usage: a.usage,
		Choices: []openai.ChatCompletionChoice{{Message: msg, FinishReason: a.finish}},
	}
}

// classify turns go-openai's HTTP errors into an HTTPError (one line:
// status, URL, a short reason; the retry policy reads its status) and
// anything that looks like an undecodable body into a MalformedError
// carrying the start of that body.
func classify(err error, cp *capture) error {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode > 0:
		return newHTTPError(err, apiErr.HTTPStatusCode, apiErr.HTTPStatus, cp.where(), clip(oneLine(apiErr.Message), reasonSize))
	case errors.As(err, &reqErr):
		return newHTTPError(err, reqErr.HTTPStatusCode, reqErr.HTTPStatus, cp.where(), bodyReason(reqErr.Body, reqErr.HTTPStatus))
	case apiErr != nil:
		return err
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, openai.ErrTooManyEmptyStreamMessages) {
		return &MalformedError{Err: err, Snippet: cp.snippet()}
	}
	return err
}

// HTTPError is an endpoint's answer with an error status. Its text is one
// line: the status, the URL (without query or credentials) and a short
// reason taken from the body — the error's message when the body is
// OpenAI's error object, else the body's text (an HTML page's without its
// markup), clipped — never the whole body. It wraps go-openai's error.
type HTTPError struct {
	StatusCode int
	// Status is the status line's text, e.g. "502 Bad Gateway".
	Status string
	URL    string
	Reason string
	Err    error
}

func newHTTPError(err error, code int, status, url, reason string) *HTTPError {
	if status == "" {
		status = fmt.Sprintf("%d %s", code, http.StatusText(code))
	}
	return &HTTPError{StatusCode: code, Status: status, URL: url, Reason: reason, Err: err}
}

func (e *HTTPError) Error() string {
	var b strings.Builder
	b.WriteString("the model endpoint ")
	if e.URL != "" {
		b.WriteString(e.URL + " ")
	}
	b.WriteString("answered " + e.Status)
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	return b.String()
}

func (e *HTTPError) Unwrap() error   { return e.Err }
func (e *HTTPError) HTTPStatus() int { return e.StatusCode }

// reasonSize is how many characters of an error body's text an HTTPError
// keeps.
const reasonSize = 120

var (
	htmlDropRE = regexp.MustCompile(`(?is)<(head|script|style)\b.*?</(head|script|style)\s*>|<!--.*?-->`)
	htmlTagRE  = regexp.MustCompile(`(?s)<[^>]*>`)
)

// bodyReason is the short reason an error body gives: its text on one
// line, an HTML page's markup (and head, scripts, styles) removed, a
// leading repeat of the status dropped, clipped to reasonSize.
func bodyReason(body []byte, status string) string {
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	if strings.Contains(text, "<") && strings.Contains(text, ">") {
		text = html.UnescapeString(htmlTagRE.ReplaceAllString(htmlDropRE.ReplaceAllString(text, " "), " "))
	}
	text = oneLine(text)
	if status = oneLine(status); status != "" {
		for len(text) >= len(status) && strings.EqualFold(text[:len(status)], status) {
			text = strings.TrimSpace(text[len(status):])
		}
	}
	// a fold may pair runes of different widths: cut text is made valid
	return clip(strings.ToValidUTF8(text, "\uFFFD"), reasonSize)
}

// oneLine collapses every run of white space (newlines too) into a space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to at most n characters, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// snippetSize is how much of a response body is kept for the log.
const snippetSize = 512

type captureKey struct{}

// capture holds the first bytes of a response body, and where the request
// went.
type capture struct {
	mu  sync.Mutex
	buf bytes.Buffer
	url string
}

// where is the request's URL without its query or credentials.
func (c *capture) where() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.url
}

func (c *capture) snippet() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

type captureTransport struct{ base http.RoundTripper }

func (t captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp == nil {
		return resp, err
	}
	if c, ok := r.Context().Value(captureKey{}).(*capture); ok {
		u := *r.URL
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		c.mu.Lock()
		c.url = u.String()
		c.mu.Unlock()
		resp.Body = &captureBody{ReadCloser: resp.Body, c: c}
	}
	return resp, nil
}

type captureBody struct {
	io.ReadCloser
	c *capture
}

func (b *captureBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.c.mu.Lock()
		if room := snippetSize - b.c.buf.Len(); room > 0 {
			b.c.buf.Write(p[:min(n, room)])
		}
		b.c.mu.Unlock()
	}
	return n, err
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
	text := messageText(last)
	if cmd, ok := demoCommand(text); ok && hasTool(req.Tools, "terminal") {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		resp.Choices = []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonToolCalls, Message: openai.ChatCompletionMessage{
			Role: openai.ChatMessageRoleAssistant,
			ToolCalls: []openai.ToolCall{{ID: fmt.Sprintf("call_echo_%d", len(req.Messages)), Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: "terminal", Arguments: string(args)}}},
		}}}
		return resp, nil
	}
	// attachments are stated, one line each, after the words
	answer := text
	if words, lines := echoAttachments(text); len(lines) > 0 {
		answer = strings.Join(append([]string{words}, lines...), "\n")
		answer = strings.TrimPrefix(answer, "\n")
	}
	resp.Choices = []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonStop, Message: openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleAssistant, Content: EchoPrefix + answer,
	}}}
	resp.Usage = openai.Usage{PromptTokens: len(text) / 4, CompletionTokens: len(text) / 4}
	return resp, nil
}

// CompleteStream answers at once: the whole text is one "partial".
func (e Echo) CompleteStream(ctx context.Context, req openai.ChatCompletionRequest, onText func(string)) (openai.ChatCompletionResponse, error) {
	resp, err := e.Complete(ctx, req)
	if err == nil && onText != nil && len(resp.Choices) > 0 && resp.Choices[0].Message.Content != "" {
		onText(resp.Choices[0].Message.Content)
	}
	return resp, err
}

// demoCommand reads "run: <command>" from the user's own words: the
// pre_llm_call context, appended after a blank line, is ignored.
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
