package cmd

import (
	"io"
	"testing"

	"github.com/heraldgw/herald/agent"
)

// Shell and directory hooks have the agent's Judge when a model endpoint
// is configured; offline (the echo model cannot judge) they have none.
func TestAppGivesHooksTheJudge(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"model", map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "sk-test-0123456789"}, true},
		{"offline", map[string]string{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{home: t.TempDir(), getenv: func(k string) string { return tc.env[k] }, stdout: io.Discard, stderr: io.Discard}
			a, err := e.newApp(appOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer a.close()
			if !tc.want {
				if a.judge != nil {
					t.Fatalf("offline judge %#v", a.judge)
				}
				return
			}
			j, ok := a.judge.(*agent.Judge)
			if !ok || j.Agent != a.agent {
				t.Fatalf("the hooks' judge %#v", a.judge)
			}
			if r := a.shellRunner(); r.Judge != a.judge {
				t.Fatalf("shell hooks' judge %#v", r.Judge)
			}
		})
	}
}
