package orchestration_test

import (
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/examples/plugins/orchestration"
	"github.com/heraldgw/herald/hooks"
)

func hasTool(req *agenttest.Request, name string) bool {
	for _, t := range req.Body.Tools {
		if t.Function != nil && t.Function.Name == name {
			return true
		}
	}
	return false
}

// A parent turn delegates two tasks; each child finishing is one SUBAGENT
// line with its role and status.
func TestLogsEachSubagent(t *testing.T) {
	fm := agenttest.New(t)
	fm.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		last := req.LastMessage()
		switch {
		case !hasTool(req, "delegate_task"): // a child
			return agenttest.Reply{Content: "child finished: " + last.Content}
		case last.Role == openai.ChatMessageRoleTool:
			return agenttest.Reply{Content: "both children reported back"}
		default:
			return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call_1", Name: "delegate_task",
				Args: `{"tasks":[{"goal":"research the topic","role":"researcher"},{"goal":"write it up","role":"writer"}]}`}}}
		}
	}}
	g := cmdtest.Start(t, cmdtest.Options{
		Env:     map[string]string{"OPENAI_BASE_URL": fm.BaseURL(), "OPENAI_API_KEY": "sk-test-0123456789abcdefghij"},
		Plugins: []hooks.Plugin{orchestration.Plugin},
	})
	r := g.Say(t, "o", "please delegate")
	if r.Text() != "both children reported back" {
		t.Fatalf("reply = %q", r.Text())
	}
	log := g.WaitLog(t, "role=writer", 5*time.Second)
	for _, want := range []string{"msg=SUBAGENT", "parent=" + r.SessionID, "role=researcher status=completed", "role=writer status=completed"} {
		if !strings.Contains(log, want) {
			t.Fatalf("log lacks %q:\n%s", want, log)
		}
	}
	if i, j := strings.Index(log, "role=researcher"), strings.Index(log, "role=writer"); i > j {
		t.Fatal("subagent_stop must fire in task order")
	}
}
