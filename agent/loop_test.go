package agent

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/hooks"
)

const testKey = "sk-test-0123456789abcdefghij"

func httpAgent(t *testing.T, srv *agenttest.Server, tools ...Tool) *Agent {
	a := newAgent(NewOpenAI(srv.BaseURL(), testKey, nil), hooks.NewRegistry(nil), tools...)
	a.Backoff = func(int) time.Duration { return time.Millisecond }
	return a
}

func TestToolCallReachesModel(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stream    bool
		omitIndex bool
	}{
		{"plain", false, false},
		{"stream split arguments", true, false},
		{"stream without index", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agenttest.New(t,
				agenttest.Reply{Content: "let me look", ToolCalls: []agenttest.ToolCall{{ID: "call_9", Name: "lookup", Args: `{"key":"alpha","n":3}`}}, Pieces: 4, OmitIndex: tc.omitIndex},
				agenttest.Reply{Content: "the answer is 42", Pieces: 5},
			)
			tool := &stubTool{name: "lookup", out: `{"value":42}`}
			a := httpAgent(t, srv, tool)
			var partials []string
			o := Options{Turn: Turn{SessionID: "s1"}}
			if tc.stream {
				o.Stream = func(p string) { partials = append(partials, p) }
			}
			res, err := a.Run(context.Background(), "what is alpha?", o)
			if err != nil {
				t.Fatal(err)
			}
			if res.FinalResponse != "the answer is 42" || !res.Completed || res.APICalls != 2 {
				t.Fatalf("result %+v", res)
			}
			if tool.calls() != 1 || tool.args[0]["key"] != "alpha" || tool.args[0]["n"] != float64(3) {
				t.Fatalf("tool args %v", tool.args)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			for _, r := range reqs {
				if r.Authorization != "Bearer "+testKey {
					t.Errorf("authorization %q", r.Authorization)
				}
				if r.Stream != tc.stream {
					t.Errorf("stream %v", r.Stream)
				}
			}
			second := reqs[1].Body.Messages
			asst, last := second[len(second)-2], second[len(second)-1]
			if len(asst.ToolCalls) != 1 || asst.ToolCalls[0].Function.Arguments != `{"key":"alpha","n":3}` || asst.ToolCalls[0].ID != "call_9" {
				t.Errorf("assistant tool call sent back as %+v", asst.ToolCalls)
			}
			if last.Role != "tool" || last.ToolCallID != "call_9" || last.Content != `{"value":42}` {
				t.Errorf("tool result sent as %+v", last)
			}
			if len(reqs[0].Body.Tools) != 1 || reqs[0].Body.Tools[0].Function.Name != "lookup" {
				t.Errorf("tools %+v", reqs[0].Body.Tools)
			}
			if tc.stream {
				if len(partials) < 3 || partials[len(partials)-1] != "the answer is 42" {
					t.Errorf("partials %q", partials)
				}
				for i := 1; i < len(partials); i++ {
					if !strings.HasPrefix(partials[i], partials[i-1]) && partials[i-1] != "let me look" {
						t.Errorf("partials do not grow: %q", partials)
					}
				}
			}
			// messages: user, assistant(tool call), tool, assistant
			if len(res.Messages) != 4 || res.Messages[2].Role != "tool" {
				t.Errorf("messages %+v", res.Messages)
			}
		})
	}
}

func TestModelErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		script   []agenttest.Reply
		stream   bool
		wantErr  bool
		calls    int
		malform  bool
		inLog    string
		response string
	}{
		{name: "429 then success", script: []agenttest.Reply{{Status: 429}, {Content: "fine"}}, calls: 2, response: "fine"},
		{name: "503 twice then success, streamed", script: []agenttest.Reply{{Status: 503}, {Status: 502}, {Content: "fine"}}, stream: true, calls: 3, response: "fine"},
		{name: "500 exhausted", script: []agenttest.Reply{{Status: 500}, {Status: 500}, {Status: 500}, {Status: 500}, {Content: "never"}}, wantErr: true, calls: 4},
		{name: "400 not retried", script: []agenttest.Reply{{Status: 400, Message: "bad"}, {Content: "never"}}, wantErr: true, calls: 1},
		{name: "malformed JSON", script: []agenttest.Reply{{Body: `{"id":"x","choices":[{"message":{"content": "unterminated` + " token=supersecretvalue123"}}, wantErr: true, calls: 1, malform: true, inLog: "unterminated"},
		{name: "no choices", script: []agenttest.Reply{{Body: `{"id":"x","object":"chat.completion","choices":[]}`}}, wantErr: true, calls: 1, malform: true, inLog: "no choices"},
		{name: "malformed stream chunk", script: []agenttest.Reply{{Body: "data: {not json\n\n", Status: 200}}, stream: true, wantErr: true, calls: 1, malform: true, inLog: "not json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agenttest.New(t, tc.script...)
			a := httpAgent(t, srv)
			var lb logBuffer
			a.Log = lb.logger()
			o := Options{}
			if tc.stream {
				o.Stream = func(string) {}
			}
			res, err := a.Run(context.Background(), "hi", o)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v", err)
			}
			if res.APICalls != tc.calls || len(srv.Requests()) != tc.calls {
				t.Errorf("api calls %d, requests %d, want %d", res.APICalls, len(srv.Requests()), tc.calls)
			}
			var bad *MalformedError
			if errors.As(err, &bad) != tc.malform {
				t.Errorf("malformed %v: %v", tc.malform, err)
			}
			if tc.inLog != "" {
				mustContain(t, lb.String(), tc.inLog)
				if strings.Contains(lb.String(), "supersecretvalue123") {
					t.Errorf("secret in log: %s", lb.String())
				}
			}
			if res.FinalResponse != tc.response {
				t.Errorf("response %q", res.FinalResponse)
			}
			if res.Interrupted || (tc.wantErr && res.Completed) {
				t.Errorf("flags %+v", res)
			}
		})
	}
}

// TestBackoff checks the retry schedule in fake time.
func TestBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
			if n <= 3 {
				return openai.ChatCompletionResponse{}, &openai.APIError{HTTPStatusCode: 429, Message: "slow down"}
			}
			return textResp("done"), nil
		}}
		a := newAgent(m, hooks.NewRegistry(nil))
		start := time.Now()
		res, err := a.Run(t.Context(), "hi", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 7*time.Second {
			t.Errorf("waited %s, want 1s+2s+4s", got)
		}
		if res.APICalls != 4 {
			t.Errorf("api calls %d", res.APICalls)
		}
		// cancelled during a backoff wait: interrupted, no more calls
		m2 := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
			return openai.ChatCompletionResponse{}, &openai.APIError{HTTPStatusCode: 500}
		}}
		a2 := newAgent(m2, hooks.NewRegistry(nil))
		ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
		defer cancel()
		res, err = a2.Run(ctx, "hi", Options{})
		if !res.Interrupted || !errors.Is(err, context.DeadlineExceeded) || res.APICalls != 2 {
			t.Errorf("res %+v err %v", res, err)
		}
	})
}

func TestCancelMidStream(t *testing.T) {
	srv := agenttest.New(t, agenttest.Reply{Content: "a long answer that never finishes", Pieces: 10, StallAfter: 3})
	a := httpAgent(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 100)
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := a.Run(ctx, "tell me", Options{Turn: Turn{SessionID: "s"}, Stream: func(p string) { got <- p }})
		done <- out{res, err}
	}()
	select {
	case <-srv.Stalled:
	case <-time.After(10 * time.Second):
		t.Fatal("stream never stalled")
	}
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no partial text streamed before the stall")
	}
	start := time.Now()
	cancel()
	var o out
	select {
	case o = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	took := time.Since(start)
	t.Logf("Run returned %s after cancel mid-stream", took)
	if took > time.Second { // the promise is 100 ms; generous bound for loaded machines
		t.Errorf("took %s", took)
	}
	if !o.res.Interrupted || o.res.Completed || !errors.Is(o.err, context.Canceled) {
		t.Errorf("res %+v err %v", o.res, o.err)
	}
	if len(o.res.Messages) != 1 || o.res.Messages[0].Content != "tell me" {
		t.Errorf("messages %+v", o.res.Messages)
	}
}

func TestCancelRunningTool(t *testing.T) {
	dir := t.TempDir()
	// the command says it runs through a FIFO, so the test waits on an
	// event rather than a guess
	ready := filepath.Join(dir, "ready")
	if err := syscall.Mkfifo(ready, 0o600); err != nil {
		t.Fatal(err)
	}
	m := toolThenText("terminal", map[string]any{"command": "echo up > ready; sleep 30"})
	a := newAgent(m, hooks.NewRegistry(nil), &Terminal{Paths: &Paths{Workdir: dir}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Result, 1)
	go func() {
		res, _ := a.Run(ctx, "run it", Options{})
		done <- res
	}()
	f, err := os.Open(ready) // blocks until the command opens it
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(f)
	f.Close()
	start := time.Now()
	cancel()
	var res *Result
	select {
	case res = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	took := time.Since(start)
	t.Logf("Run returned %s after cancel during a tool", took)
	if took > time.Second {
		t.Errorf("took %s", took)
	}
	if !res.Interrupted || len(res.Messages) != 3 || res.Messages[2].Role != "tool" {
		t.Errorf("res %+v", res)
	}
}

func TestIterationBudget(t *testing.T) {
	tool := &stubTool{name: "noop"}
	m := &funcModel{fn: func(n int, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return callResp("c", "noop", map[string]any{}), nil
	}}
	a := newAgent(m, hooks.NewRegistry(nil), tool)
	res, err := a.Run(context.Background(), "loop", Options{MaxIterations: 5})
	if !errors.Is(err, ErrBudget) || res.APICalls != 5 || tool.calls() != 5 {
		t.Errorf("err %v calls %d tool %d", err, res.APICalls, tool.calls())
	}
	a.MaxIterations = 0
	m.n = 0
	res, _ = a.Run(context.Background(), "loop", Options{})
	if res.APICalls != DefaultMaxIterations {
		t.Errorf("default budget: %d calls", res.APICalls)
	}
}

func TestDisabledToolsAndEcho(t *testing.T) {
	term := &stubTool{name: "terminal", out: `{"output":"hi\n","exit_code":0}`}
	a := newAgent(Echo{}, hooks.NewRegistry(nil), term)
	res, err := a.Run(context.Background(), "run: echo hi", Options{})
	if err != nil || term.calls() != 1 || !strings.Contains(res.FinalResponse, "hi") {
		t.Fatalf("echo demo: %v %+v", err, res)
	}
	res, err = a.Run(context.Background(), "run: echo hi", Options{DisabledTools: []string{"terminal"}})
	if err != nil || term.calls() != 1 || res.FinalResponse != EchoPrefix+"run: echo hi" {
		t.Fatalf("disabled terminal: %v %+v", err, res)
	}
}
