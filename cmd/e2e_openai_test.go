package cmd_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/cmd/cmdtest"
)

func openaiClient(g *cmdtest.Gateway, token string) *openai.Client {
	cfg := openai.DefaultConfig(token)
	cfg.BaseURL = "http://" + g.Addr + "/v1"
	return openai.NewClientWithConfig(cfg)
}

// go-openai, the real client, against a running gateway on the offline
// echo model: models, a chat, a streamed chat, a bad token.
func TestOpenAIClientGo(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{})
	ctx := context.Background()
	c := openaiClient(g, g.Token)

	models, err := c.ListModels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range models.Models {
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 || ids[0] != "herald" {
		t.Fatalf("models = %v, want herald first", ids)
	}

	resp, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "herald", Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "be brief"},
		{Role: "user", Content: "first words"},
		{Role: "assistant", Content: "ok"},
		{Role: "user", Content: "hello from go-openai"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Object != "chat.completion" || len(resp.Choices) != 1 || resp.Choices[0].Message.Role != "assistant" || resp.Choices[0].FinishReason != "stop" {
		t.Fatalf("response shape: %+v", resp)
	}
	if !strings.Contains(resp.Choices[0].Message.Content, "hello from go-openai") {
		t.Fatalf("content = %q", resp.Choices[0].Message.Content)
	}
	sid := resp.Header().Get("X-Herald-Session-Id")
	if sid == "" {
		t.Fatal("no X-Herald-Session-Id")
	}

	st, err := c.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: "herald", Stream: true,
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "stream this please"}}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var finish openai.FinishReason
	for {
		ch, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ch.Object != "chat.completion.chunk" {
			t.Fatalf("chunk object %q", ch.Object)
		}
		for _, c := range ch.Choices {
			text.WriteString(c.Delta.Content)
			if c.FinishReason != "" {
				finish = c.FinishReason
			}
		}
	}
	st.Close()
	if !strings.Contains(text.String(), "stream this please") || finish != "stop" {
		t.Fatalf("streamed %q, finish %q", text.String(), finish)
	}
	if st.Header().Get("X-Herald-Session-Id") == "" {
		t.Fatal("stream without X-Herald-Session-Id")
	}

	_, err = openaiClient(g, "wrong").ListModels(ctx)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusUnauthorized || apiErr.Code != "invalid_api_key" {
		t.Fatalf("bad token: %v", err)
	}
}

// The official openai npm package, run by Debian's nodejs, against a
// running gateway (scripts/test installs nodejs, npm and the package).
func TestOpenAIClientNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (scripts/test installs it)")
	}
	modules := os.Getenv("HERALD_NODE_MODULES")
	if modules == "" {
		modules = filepath.Join("testdata", "openai-node", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(modules, "openai")); err != nil {
		t.Skipf("the openai npm package is not installed in %s (scripts/test installs it)", modules)
	}
	abs, _ := filepath.Abs(modules)
	g := cmdtest.Start(t, cmdtest.Options{})
	cmd := exec.Command(node, filepath.Join("testdata", "openai-node", "client.mjs"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+abs, "HERALD_BASE_URL=http://"+g.Addr+"/v1", "HERALD_TOKEN="+g.Token)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			lines[k] = v
		}
	}
	if !strings.HasPrefix(lines["models"], "herald") || !strings.Contains(lines["chat"], "hello from node") ||
		!strings.Contains(lines["stream"], "stream from node") || lines["stream-finish"] != "stop" {
		t.Fatalf("node client output:\n%s", out)
	}
}
