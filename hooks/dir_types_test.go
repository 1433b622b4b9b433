package hooks

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// HOOK.yaml takes the same type fields as a config.yaml entry: an http
// hook and a prompt hook need no handler; priority, matcher and
// block_on_failure apply; a bad field names HOOK.yaml's line.
func TestDirHookTypes(t *testing.T) {
	srv := newPolicyServer(t, "")
	root := t.TempDir()
	writeHook(t, root, "a-policy", map[string]string{"HOOK.yaml": fmt.Sprintf(`name: policy
events: [pre_tool_call]
type: http
url: %s/block
allow_private: true
matcher: "term*"
priority: 1
`, srv.URL)})
	writeHook(t, root, "b-judge", map[string]string{"HOOK.yaml": `name: judge
events: [pre_tool_call]
type: prompt
prompt: "Is this fine? $ARGUMENTS"
priority: 9
`})
	writeHook(t, root, "c-bad", map[string]string{"HOOK.yaml": "name: bad\nevents: [pre_tool_call]\ntype: http\nurl: file:///etc/passwd\n"})
	var refuse atomic.Bool
	refuse.Store(true)
	j := &testJudge{fn: func(context.Context, JudgeRequest) (string, error) {
		if refuse.Load() {
			return `{"ok": false, "reason": "the judge says no"}`, nil
		}
		return `{"ok": true}`, nil
	}}
	reg, d, lr := startDir(t, root, DirOptions{Judge: j})
	var kinds []string
	for _, h := range d.Hooks() {
		kinds = append(kinds, h.Name+"="+h.Kind)
	}
	if strings.Join(kinds, " ") != "policy=http judge=prompt" {
		t.Fatalf("loaded: %v\n%s", kinds, lr)
	}
	if lr.count(`Skipping bad: hook.url: "file:///etc/passwd": only http and https URLs are allowed (HOOK.yaml line 4)`) != 1 {
		t.Fatalf("the bad hook's diagnostic:\n%s", lr)
	}
	// the judge (priority 9) answers first, and its block ends the chain
	if dec := reg.PreToolCall(context.Background(), toolCall()); dec.Action != "block" || dec.Message != "the judge says no" || srv.hits.Load() != 0 {
		t.Fatalf("decision = %+v, policy service called %d times", dec, srv.hits.Load())
	}
	refuse.Store(false)
	dec := reg.PreToolCall(context.Background(), toolCall())
	if dec.Action != "block" || dec.Message != "policy says no" {
		t.Fatalf("decision = %+v", dec)
	}
	body := string(srv.lastBody())
	if !strings.HasPrefix(body, `{"event_type":"pre_tool_call","context":{`) {
		t.Fatalf("a directory hook posts the directory-hook envelope: %s", body)
	}
	if len(j.requests()) != 2 || !strings.Contains(j.requests()[0].Prompt, `"event_type":"pre_tool_call"`) {
		t.Fatalf("judge asked: %+v", j.requests())
	}
	// the matcher takes terminal only
	hits := srv.hits.Load()
	reg.PreToolCall(context.Background(), &PreToolCall{ToolName: "read_file", SessionID: "s1"})
	if srv.hits.Load() != hits {
		t.Fatal("the matcher let read_file through")
	}

	// without a judge the prompt hook does not load, and says why
	_, d2, lr2 := startDir(t, root, DirOptions{})
	if len(d2.Hooks()) != 1 || lr2.count("Skipping judge: prompt hook cannot load: no model to ask") != 1 {
		t.Fatalf("hooks %v\n%s", d2.Hooks(), lr2)
	}
}

func TestDirHookArgumentsWarned(t *testing.T) {
	root := t.TempDir()
	dir := writeHook(t, root, "oh", map[string]string{"HOOK.yaml": "events: [pre_tool_call]\ncommand: [/bin/cat, $ARGUMENTS]\n"})
	_, diags, ok := ReadHookDir(dir)
	if !ok || len(diags) != 1 || diags[0].Line != 2 || !strings.Contains(diags[0].Msg, "$ARGUMENTS is filled in only in config.yaml entries") {
		t.Fatalf("ok %v, diagnostics %+v", ok, diags)
	}
}
