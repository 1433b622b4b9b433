package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// The issue's own configuration, through a whole gateway whose model is
// the fake OpenAI server: a prompt hook on pre_tool_call asks the model
// (through the agent's Judge, with no tools) and its {"ok": false}
// blocks the terminal command; a prompt hook on post_compact answers
// free text, which stays in every later cut request as compaction notes.
func TestPromptHooksThroughTheGateway(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "junk"), 0o700); err != nil {
		t.Fatal(err)
	}
	const rule = "Rule kept: answer in French."
	model := agenttest.New(t)
	model.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		if len(req.Body.Tools) == 0 { // a hook's question: the Judge offers no tools
			switch q := req.UserText(); {
			case strings.Contains(q, "survive compaction"):
				return agenttest.Reply{Content: rule}
			case strings.Contains(q, "rm -rf") && strings.Contains(q, "deletes"):
				return agenttest.Reply{Content: "```json\n{\"ok\": false, \"reason\": \"deleting is not allowed here\"}\n```"}
			default:
				return agenttest.Reply{Content: `{"ok": true}`}
			}
		}
		if last := req.LastMessage(); last.Role == "tool" {
			return agenttest.Reply{Content: "tool said: " + last.Content}
		}
		if strings.Contains(req.UserText(), "clean up") {
			return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call_1", Name: "terminal", Args: `{"command":"rm -rf junk"}`}}}
		}
		return agenttest.Reply{Content: "noted " + strings.Repeat("x", 300)}
	}}
	cfg := "agent:\n  workdir: " + work + "\n  approvals: off\nmodel:\n  context_window: 400\n" + `hooks:
  pre_tool_call:
    - type: prompt
      prompt: "Refuse any command that deletes files. $ARGUMENTS"
  post_compact:
    - type: prompt
      prompt: "Which rules from this conversation must survive compaction? $ARGUMENTS"
`
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: modelEnv(model), Args: []string{"--accept-hooks"}})

	r := g.Say(t, "c1", "please clean up")
	if !strings.Contains(r.Text(), "deleting is not allowed here") {
		t.Fatalf("answer %q, want the prompt hook's reason\n%s", r.Text(), g.Log())
	}
	if _, err := os.Stat(filepath.Join(work, "junk")); err != nil {
		t.Fatalf("the blocked command ran: %v", err)
	}

	// long turns until the window cuts: post_compact's answer is kept
	for i := 0; i < 6; i++ {
		g.Say(t, "c1", "remember item "+strings.Repeat("y", 300))
	}
	notes := 0
	for _, req := range model.Requests() {
		if len(req.Body.Tools) == 0 {
			continue
		}
		for _, m := range req.Body.Messages {
			if strings.Contains(m.Content, rule) {
				notes++
				break
			}
		}
	}
	if notes < 2 {
		t.Fatalf("%d agent requests carried the compaction notes, want every cut one after the first cut (at least 2)\n%s", notes, g.Log())
	}
}
