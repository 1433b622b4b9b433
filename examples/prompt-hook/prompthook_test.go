package prompthook

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldgw/herald/hooks"
	"go.yaml.in/yaml/v3"
)

// policyModel stands in for the model: it reads the rendered prompt as a
// model would and answers in the shapes models use (a fenced block,
// prose around it).
type policyModel struct{ asked []hooks.JudgeRequest }

var writesOutside = regexp.MustCompile(`(>|\btee\b|\bcp\b|\bmv\b|\brm\b)[^"]*\s/(etc|tmp|home|root)`)

func (m *policyModel) Judge(ctx context.Context, req hooks.JudgeRequest) (string, error) {
	m.asked = append(m.asked, req)
	if writesOutside.MatchString(req.Prompt) {
		return "This writes outside the app.\n```json\n{\"ok\": false, \"reason\": \"the command writes outside /srv/app\"}\n```", nil
	}
	return `{"ok": true}`, nil
}

func TestPromptHookExample(t *testing.T) {
	b, err := os.ReadFile("config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	specs, warns, _ := hooks.ParseShellHooks(doc.Content[0].Content[1])
	if len(specs) != 1 || len(warns) != 0 {
		t.Fatalf("specs %+v, warnings %v", specs, warns)
	}
	reg := hooks.NewRegistry(nil)
	defer reg.Close(context.Background())
	model := &policyModel{}
	list := hooks.Allowlist{Path: filepath.Join(t.TempDir(), hooks.AllowlistFile)}
	if err := list.Approve(specs[0].Event, specs[0].Key()); err != nil { // herald hooks allow pre_tool_call <key>
		t.Fatal(err)
	}
	res := (&hooks.ShellHooks{Registry: reg, Runner: &hooks.ShellRunner{Judge: model}, Consent: &hooks.Consent{List: list}}).Register(specs)
	if !res[0].Running {
		t.Fatalf("not running: %+v", res[0])
	}
	call := func(tool, command string) hooks.ToolDecision {
		return reg.PreToolCall(context.Background(), &hooks.PreToolCall{ToolName: tool, Args: map[string]any{"command": command}, SessionID: "s"})
	}
	if d := call("terminal", "echo pwned > /etc/motd"); d.Action != "block" || d.Message != "the command writes outside /srv/app" {
		t.Fatalf("a write to /etc: %+v", d)
	}
	if d := call("terminal", "ls /srv/app"); d.Action != "" {
		t.Fatalf("a read: %+v", d)
	}
	if d := call("read_file", "x > /etc/motd"); d.Action != "" || len(model.asked) != 2 {
		t.Fatalf("the matcher takes terminal only: %+v after %d questions", d, len(model.asked))
	}
	if q := model.asked[0]; q.Model != "gpt-4o-mini" || !strings.Contains(q.Prompt, `"tool_input":{"command":"echo pwned > /etc/motd"}`) {
		t.Fatalf("question = %+v", q)
	}
}
