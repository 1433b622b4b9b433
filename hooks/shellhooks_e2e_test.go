package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"go.yaml.in/yaml/v3"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
)

// scriptedModel asks for terminal with `rm -rf /`, then repeats what the
// tool answered; it records every request.
type scriptedModel struct {
	mu   sync.Mutex
	reqs []openai.ChatCompletionRequest
}

func (m *scriptedModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	finish := openai.FinishReasonStop
	if last.Role == openai.ChatMessageRoleTool {
		msg.Content = "the tool said: " + last.Content
	} else {
		finish = openai.FinishReasonToolCalls
		msg.ToolCalls = []openai.ToolCall{{ID: "call_1", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "terminal", Arguments: `{"command":"rm -rf /"}`}}}
	}
	return openai.ChatCompletionResponse{Model: "m", Choices: []openai.ChatCompletionChoice{{FinishReason: finish, Message: msg}}}, nil
}

// tripwire stands in for the terminal tool: it only records that it ran.
type tripwire struct {
	mu  sync.Mutex
	ran int
}

func (*tripwire) Name() string        { return "terminal" }
func (*tripwire) Description() string { return "runs a command" }
func (*tripwire) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)
}
func (t *tripwire) Run(ctx context.Context, c *agent.Call) (string, error) {
	t.mu.Lock()
	t.ran++
	t.mu.Unlock()
	return `{"output":"ran"}`, nil
}

// The seed's two example scripts, unchanged, drive a real agent: the
// destructive call never runs and the model reads the block message; the
// git status lands in the user message.
func TestShellHooksSeedExamplesEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatal("the seed's example scripts need jq on PATH")
	}
	abs := func(name string) string {
		p, err := filepath.Abs(filepath.Join("testdata", "shell", name))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	block, inject := abs("block-rm-rf.sh"), abs("inject-cwd-context.sh")

	repo := t.TempDir()
	git := func(args ...string) {
		c := exec.Command("git", args...)
		c.Dir = repo
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q")
	os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("draft\n"), 0o644)
	t.Chdir(repo)

	reg := hooks.NewRegistry(nil)
	defer reg.Close(context.Background())
	cfg := `hooks:
  pre_tool_call:
    - matcher: "terminal"
      command: "` + block + `"
      timeout: 60
  pre_llm_call:
    - command: "` + inject + `"
`
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(cfg), &doc); err != nil {
		t.Fatal(err)
	}
	specs, warns, _ := hooks.ParseShellHooks(doc.Content[0].Content[1])
	if len(warns) > 0 || len(specs) != 2 {
		t.Fatalf("specs %d, warnings %v", len(specs), warns)
	}
	sh := &hooks.ShellHooks{Registry: reg, Runner: &hooks.ShellRunner{Environ: os.Environ()},
		Consent: &hooks.Consent{List: hooks.Allowlist{Path: filepath.Join(t.TempDir(), hooks.AllowlistFile)}, Accept: true}}
	for _, r := range sh.Register(specs) {
		if !r.Running {
			t.Fatalf("%s not registered: %s", r.Spec.Command, r.Warning)
		}
	}

	m, tw := &scriptedModel{}, &tripwire{}
	a := &agent.Agent{Model: m, Tools: agent.NewTools(tw), Hooks: reg, ModelName: "m", ApprovalMode: "yolo"}
	res, err := a.Run(context.Background(), "clean up", agent.Options{Turn: agent.Turn{SessionID: "sess-1", Platform: "local"}})
	if err != nil {
		t.Fatal(err)
	}
	if tw.ran != 0 {
		t.Fatal("the terminal tool ran despite the block")
	}
	if !strings.Contains(res.FinalResponse, "blocked: rm -rf / is not permitted") {
		t.Fatalf("the model did not see the block message: %q", res.FinalResponse)
	}
	user := m.reqs[0].Messages[len(m.reqs[0].Messages)-1].Content
	if !strings.Contains(user, "clean up") || !strings.Contains(user, "Uncommitted changes in cwd:\n?? notes.txt") {
		t.Fatalf("user message lacks the context: %q", user)
	}
}
