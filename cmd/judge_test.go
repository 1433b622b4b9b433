package cmd

import (
	"io"
	"testing"

	"github.com/heraldgw/herald/agent"
)

// The hooks' registry has the agent's Judge: prompt and agent hooks ask
// the configured model.
func TestAppGivesHooksTheJudge(t *testing.T) {
	e := &env{home: t.TempDir(), getenv: func(string) string { return "" }, stdout: io.Discard, stderr: io.Discard}
	a, err := e.newApp(appOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	j, ok := a.hooks.Judge().(*agent.Judge)
	if !ok || j.Agent != a.agent {
		t.Fatalf("registry's judge %#v", a.hooks.Judge())
	}
}
