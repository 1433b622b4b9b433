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
// running gateway. scripts/test installs nodejs and npm, and the package
// into the cache this test reads (HERALD_NODE_MODULES, else
// <user cache>/herald-test/openai-node); when the package is missing the
// test installs it there itself.
func TestOpenAIClientNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (scripts/test installs nodejs and npm)")
	}
	modules := os.Getenv("HERALD_NODE_MODULES")
	if modules == "" {
		modules = installOpenAINode(t)
	}
	if _, err := os.Stat(filepath.Join(modules, "openai")); err != nil {
		t.Fatalf("the openai npm package is not in %s: %v", modules, err)
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
		!strings.Contains(lines["stream"], "stream from node") || lines["stream-finish"] != "stop" ||
		!strings.Contains(lines["response"], "response from node") || lines["response-previous"] != "true" ||
		!strings.Contains(lines["response-stream"], "streamed response") || lines["response-stream-status"] != "completed" ||
		lines["response-retrieved"] != "true" || lines["response-deleted"] != "true" {
		t.Fatalf("node client output:\n%s", out)
	}
}

// installOpenAINode installs testdata/openai-node/package.json's
// dependencies into the user's cache (once: a copy installed by another
// run is used as is) and returns its node_modules.
func installOpenAINode(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "herald-test", "openai-node")
	modules := filepath.Join(dir, "node_modules")
	want, err := os.ReadFile(filepath.Join("testdata", "openai-node", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if have, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil && string(have) == string(want) {
		if _, err := os.Stat(filepath.Join(modules, "openai")); err == nil {
			return modules
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("node is installed but npm is not (scripts/test installs both)")
	}
	// install beside the cache and move it in whole, so that a run
	// beside this one never sees half an install
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "openai-node-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	inst := exec.Command(npm, "install", "--no-audit", "--no-fund", "--loglevel=error")
	inst.Dir = tmp
	if out, err := inst.CombinedOutput(); err != nil {
		t.Fatalf("npm install openai (the npm registry must be reachable): %v\n%s", err, out)
	}
	os.RemoveAll(dir + ".old")
	os.Rename(dir, dir+".old")
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(modules, "openai")); serr != nil {
			t.Fatal(err)
		}
	}
	os.RemoveAll(dir + ".old")
	return modules
}
