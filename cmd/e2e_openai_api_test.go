package cmd_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// apiCall sends one request to the API and decodes its JSON answer.
func apiCall(t *testing.T, g *cmdtest.Gateway, method, path, body string, hdr map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+g.Addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+g.Token)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: answer is not JSON (%d): %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode, resp.Header, out
}

// seen is what the fake model was sent in its last request, one
// "role: content" line per message.
func seen(srv *agenttest.Server) string {
	reqs := srv.Requests()
	if len(reqs) == 0 {
		return ""
	}
	var b strings.Builder
	for _, m := range reqs[len(reqs)-1].Body.Messages {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	return b.String()
}

func fakeModelEnv(srv *agenttest.Server) map[string]string {
	return map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_API_KEY": "sk-test-key-0123456789abcdef", "HERALD_MODEL": "fake-model"}
}

// A stateless request's earlier messages are the session history the
// model sees; the session header continues that session; the configured
// model is an alias of herald.
func TestOpenAIChatHistoryAndSessions(t *testing.T) {
	srv := agenttest.New(t)
	srv.Default = agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
		return agenttest.Reply{Content: "answer to " + r.LastMessage().Content, Pieces: 4,
			Usage: &openai.Usage{PromptTokens: 11, CompletionTokens: 7, TotalTokens: 18}}
	}}
	g := cmdtest.Start(t, cmdtest.Options{Env: fakeModelEnv(srv)})
	ctx := context.Background()
	c := openaiClient(g, g.Token)

	models, err := c.ListModels(ctx)
	if err != nil || len(models.Models) != 2 || models.Models[0].ID != "herald" || models.Models[1].ID != "fake-model" {
		t.Fatalf("models = %+v, %v", models, err)
	}
	if m, err := c.GetModel(ctx, "fake-model"); err != nil || m.ID != "fake-model" || m.Object != "model" {
		t.Fatalf("model = %+v, %v", m, err)
	}
	var apiErr *openai.APIError
	if _, err := c.GetModel(ctx, "gpt-9"); !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Fatalf("unknown model: %v", err)
	}
	resp, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "fake-model", Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "speak like a herald"},
		{Role: "user", Content: "alpha question"},
		{Role: "assistant", Content: "alpha answer"},
		{Role: "user", Content: "beta question"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "answer to beta question" {
		t.Fatalf("content = %q", got)
	}
	if resp.Usage.PromptTokens != 11 || resp.Usage.CompletionTokens != 7 || resp.Usage.TotalTokens != 18 {
		t.Fatalf("usage = %+v", resp.Usage)
	}
	saw := seen(srv)
	for _, want := range []string{"system: speak like a herald", "user: alpha question", "assistant: alpha answer", "user: beta question"} {
		if !strings.Contains(saw, want) {
			t.Fatalf("the model did not see %q:\n%s", want, saw)
		}
	}
	sid := resp.Header().Get("X-Herald-Session-Id")

	// continue it, with Hermes' header; the array's history is ignored
	code, hdr, out := apiCall(t, g, "POST", "/v1/chat/completions",
		`{"model":"herald","messages":[{"role":"user","content":"ignored"},{"role":"user","content":"gamma question"}]}`,
		map[string]string{"X-Hermes-Session-Id": sid})
	if code != 200 || hdr.Get("X-Herald-Session-Id") != sid {
		t.Fatalf("continue: %d %v %v", code, hdr, out)
	}
	saw = seen(srv)
	if !strings.Contains(saw, "assistant: answer to beta question") || strings.Contains(saw, "ignored") || !strings.Contains(saw, "user: gamma question") {
		t.Fatalf("continued session history:\n%s", saw)
	}

	// a streamed answer made of several model pieces arrives whole
	st, err := c.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: "herald", Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Messages:      []openai.ChatCompletionMessage{{Role: "user", Content: "delta question"}}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var streamUsage *openai.Usage
	for {
		ch, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range ch.Choices {
			text.WriteString(c.Delta.Content)
		}
		if ch.Usage != nil {
			streamUsage = ch.Usage
		}
	}
	st.Close()
	if text.String() != "answer to delta question" {
		t.Fatalf("streamed %q", text.String())
	}
	if streamUsage == nil || streamUsage.TotalTokens != 18 {
		t.Fatalf("stream usage = %+v", streamUsage)
	}

	// an unknown session
	code, _, out = apiCall(t, g, "POST", "/v1/chat/completions", `{"model":"herald","messages":[{"role":"user","content":"x"}]}`,
		map[string]string{"X-Herald-Session-Id": "nope"})
	if e, _ := out["error"].(map[string]any); code != 404 || e["code"] != "session_not_found" {
		t.Fatalf("unknown session: %d %v", code, out)
	}
}

// Malformed requests get 400 naming the field, in OpenAI's error shape.
func TestOpenAIErrors(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{})
	for _, tc := range []struct {
		path, body string
		status     int
		param      string
	}{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, 400, "model"},
		{"/v1/chat/completions", `{"model":"gpt-9","messages":[{"role":"user","content":"x"}]}`, 404, "model"},
		{"/v1/chat/completions", `{"model":"herald"}`, 400, "messages"},
		{"/v1/chat/completions", `{"model":"herald","messages":"hi"}`, 400, "messages"},
		{"/v1/chat/completions", `{"model":"herald","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`, 400, "messages[1].role"},
		{"/v1/chat/completions", `{"model":"herald","messages":[{"role":"wizard","content":"x"}]}`, 400, "messages[0].role"},
		{"/v1/chat/completions", `{"model":"herald","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, 400, "messages[0].content[0].type"},
		{"/v1/chat/completions", `{"model":"herald","messages":[{"role":"user","content":"x"}]} {}`, 400, ""},
		{"/v1/chat/completions", `{"model":"herald","user":"` + strings.Repeat("u", 257) + `","messages":[{"role":"user","content":"x"}]}`, 400, "user"},
		{"/v1/chat/completions", `{"model":"herald","stream":"yes","messages":[{"role":"user","content":"x"}]}`, 400, "stream"},
		{"/v1/responses", `{"model":"herald"}`, 400, "input"},
		{"/v1/responses", `{"model":"herald","input":"x","previous_response_id":"resp_nope"}`, 404, "previous_response_id"},
		{"/v1/responses", `{"model":"herald","input":[{"role":"user","content":"x"},{"role":"wizard","content":"y"}]}`, 400, "input[1].role"},
	} {
		code, _, out := apiCall(t, g, "POST", tc.path, tc.body, nil)
		e, _ := out["error"].(map[string]any)
		param, _ := e["param"].(string)
		if code != tc.status || e == nil || e["message"] == "" || e["type"] == nil || param != tc.param {
			t.Errorf("%s %s: %d %v (want %d, param %q)", tc.path, tc.body, code, out, tc.status, tc.param)
		}
	}
	req, _ := http.NewRequest("POST", "http://"+g.Addr+"/v1/chat/completions", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if resp.StatusCode != 401 || out["error"]["code"] != "invalid_api_key" || out["error"]["type"] != "invalid_request_error" {
		t.Fatalf("bad token: %d %v", resp.StatusCode, out)
	}
}

// An approval asked mid-request ends the answer with the prompt and how
// to answer over the API; /deny in the same session answers it.
func TestOpenAIApprovalMidRequest(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{})
	code, hdr, out := apiCall(t, g, "POST", "/v1/chat/completions",
		`{"model":"herald","messages":[{"role":"user","content":"run: rm -rf /tmp/herald-api-approval-does-not-exist"}]}`, nil)
	content := chatContent(out)
	sid := hdr.Get("X-Herald-Session-Id")
	if code != 200 || sid == "" || !strings.Contains(content, "needs your approval") || !strings.Contains(content, "X-Herald-Session-Id: "+sid) {
		t.Fatalf("approval answer: %d %q %v", code, sid, out)
	}
	// the API answered, so its platform runs
	if code, _, h := apiCall(t, g, "GET", "/healthz", "", nil); code != 200 || h["platforms"].(map[string]any)["api"] != "connected" {
		t.Errorf("healthz: %d %v", code, h)
	}
	code, _, out = apiCall(t, g, "POST", "/v1/chat/completions",
		`{"model":"herald","messages":[{"role":"user","content":"/deny"}]}`, map[string]string{"X-Herald-Session-Id": sid})
	if content := chatContent(out); code != 200 || !strings.Contains(content, "Denied") {
		t.Fatalf("deny: %d %v", code, out)
	}

	// a front end that resends the conversation and sets no header: the
	// hint in the answer it resends names the session
	code, hdr, out = apiCall(t, g, "POST", "/v1/chat/completions",
		`{"model":"herald","messages":[{"role":"user","content":"run: rm -rf /tmp/herald-api-approval-does-not-exist-2"}]}`, nil)
	prompt, sid2 := chatContent(out), hdr.Get("X-Herald-Session-Id")
	if code != 200 || sid2 == sid || !strings.Contains(prompt, "needs your approval") {
		t.Fatalf("second approval: %d %v", code, out)
	}
	again, _ := json.Marshal(map[string]any{"model": "herald", "messages": []map[string]string{
		{"role": "user", "content": "run: rm -rf /tmp/herald-api-approval-does-not-exist-2"},
		{"role": "assistant", "content": prompt},
		{"role": "user", "content": "/deny"}}})
	code, hdr, out = apiCall(t, g, "POST", "/v1/chat/completions", string(again), nil)
	if content := chatContent(out); code != 200 || hdr.Get("X-Herald-Session-Id") != sid2 || !strings.Contains(content, "Denied") {
		t.Fatalf("deny from the resent conversation: %d %v %v", code, hdr, out)
	}
}

func chatContent(out map[string]any) string {
	choices, _ := out["choices"].([]any)
	if len(choices) == 0 {
		return ""
	}
	msg, _ := choices[0].(map[string]any)["message"].(map[string]any)
	s, _ := msg["content"].(string)
	return s
}

// The Responses API: previous_response_id continues that response's
// session; a stored response is read back and deleted.
func TestOpenAIResponses(t *testing.T) {
	srv := agenttest.New(t)
	srv.Default = agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
		return agenttest.Reply{Content: "answer to " + r.LastMessage().Content, Usage: &openai.Usage{PromptTokens: 5, CompletionTokens: 3, TotalTokens: 8}}
	}}
	home := t.TempDir()
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: fakeModelEnv(srv)})
	code, hdr, first := apiCall(t, g, "POST", "/v1/responses", `{"model":"herald","input":"one","instructions":"be a herald"}`, nil)
	if code != 200 || first["object"] != "response" || first["status"] != "completed" || first["output_text"] != "answer to one" {
		t.Fatalf("create: %d %v", code, first)
	}
	if u, _ := first["usage"].(map[string]any); u["input_tokens"] != 5.0 || u["output_tokens"] != 3.0 || u["total_tokens"] != 8.0 {
		t.Fatalf("usage = %v", first["usage"])
	}
	output := first["output"].([]any)[0].(map[string]any)
	if output["type"] != "message" || output["role"] != "assistant" || output["content"].([]any)[0].(map[string]any)["text"] != "answer to one" {
		t.Fatalf("output = %v", output)
	}
	if !strings.Contains(seen(srv), "system: be a herald") {
		t.Fatalf("instructions not seen:\n%s", seen(srv))
	}
	id := first["id"].(string)
	sid := hdr.Get("X-Herald-Session-Id")

	// across a restart: the response id is kept in state.db
	g.Stop()
	g = cmdtest.Start(t, cmdtest.Options{Home: home, Env: fakeModelEnv(srv)})
	code, hdr, second := apiCall(t, g, "POST", "/v1/responses", `{"model":"herald","input":[{"role":"user","content":[{"type":"input_text","text":"two"}]}],"previous_response_id":"`+id+`"}`, nil)
	if code != 200 || second["output_text"] != "answer to two" || second["previous_response_id"] != id || hdr.Get("X-Herald-Session-Id") != sid {
		t.Fatalf("continue: %d %v %v", code, hdr, second)
	}
	if saw := seen(srv); !strings.Contains(saw, "user: one") || !strings.Contains(saw, "assistant: answer to one") {
		t.Fatalf("previous response not in the history:\n%s", saw)
	}

	code, _, got := apiCall(t, g, "GET", "/v1/responses/"+id, "", nil)
	if code != 200 || got["id"] != id || got["output_text"] != "answer to one" {
		t.Fatalf("get: %d %v", code, got)
	}
	code, _, del := apiCall(t, g, "DELETE", "/v1/responses/"+id, "", nil)
	if code != 200 || del["deleted"] != true {
		t.Fatalf("delete: %d %v", code, del)
	}
	code, _, got = apiCall(t, g, "GET", "/v1/responses/"+id, "", nil)
	if e, _ := got["error"].(map[string]any); code != 404 || e["code"] != "response_not_found" {
		t.Fatalf("get after delete: %d %v", code, got)
	}
}
