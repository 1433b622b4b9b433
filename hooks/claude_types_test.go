package hooks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// claudeRegistry loads a Claude Code hooks file and registers its entries
// (all approved), with judge behind prompt and agent hooks.
func claudeRegistry(t *testing.T, src string, judge Judge) (*Registry, []string) {
	t.Helper()
	specs, warns, err := loadClaudeJSON(ClaudeFile{Path: "hooks.json", Name: "hooks.json"}, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(nil)
	t.Cleanup(func() { reg.Close(context.Background()) })
	sh := &ShellHooks{Registry: reg, Runner: &ShellRunner{Environ: os.Environ(), Judge: judge, Lookup: os.LookupEnv},
		Consent: &Consent{List: Allowlist{Path: filepath.Join(t.TempDir(), AllowlistFile)}, Accept: true}}
	for _, r := range sh.Register(specs) {
		if !r.Running {
			t.Fatalf("not running: %+v", r)
		}
	}
	return reg, warns
}

// A Claude Code http hook gets Claude's payload as its body, its headers
// with only the allowed variables filled in, and its answer is read as a
// Claude command hook's output: permissionDecision deny blocks the call.
func TestClaudeHTTPHook(t *testing.T) {
	t.Setenv("HERALD_TEST_HOOK_TOKEN", "tok-allowed")
	t.Setenv("HERALD_TEST_HOOK_OTHER", "must-not-leak")
	var mu sync.Mutex
	var body []byte
	var hdr http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		body, hdr = b, r.Header.Clone()
		mu.Unlock()
		io.WriteString(w, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no listing of /srv"}}`)
	}))
	t.Cleanup(srv.Close)
	reg, warns := claudeRegistry(t, `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
  {"type": "http", "url": "`+srv.URL+`/pre", "timeout": 5, "allow_private": true,
   "headers": {"Authorization": "Bearer $HERALD_TEST_HOOK_TOKEN", "X-Other": "[${HERALD_TEST_HOOK_OTHER}]"},
   "allowedEnvVars": ["HERALD_TEST_HOOK_TOKEN"]}
]}]}}`, nil)
	if len(warns) != 0 {
		t.Fatalf("warnings: %q", warns)
	}
	d := reg.PreToolCall(context.Background(), toolCall())
	if d.Action != "block" || !strings.Contains(d.Message, "no listing of /srv") {
		t.Fatalf("decision = %+v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := hdr.Get("Authorization"); got != "Bearer tok-allowed" {
		t.Errorf("Authorization = %q", got)
	}
	if got := hdr.Get("X-Other"); got != "[]" {
		t.Errorf("a variable not in allowedEnvVars was filled in: X-Other = %q", got)
	}
	var in map[string]any
	if err := json.Unmarshal(body, &in); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if in["hook_event_name"] != "PreToolUse" || in["tool_name"] != "Bash" {
		t.Errorf("body is not Claude's PreToolUse input: %s", body)
	}
}

// Claude Code prompt and agent hooks ask the model for {"ok", "reason"};
// ok: false blocks a tool call. Entries herald cannot run are named.
func TestClaudePromptAndAgentHooks(t *testing.T) {
	judge := answering(`{"ok": false, "reason": "edits outside the project"}`)
	reg, warns := claudeRegistry(t, `{"hooks": {"PreToolUse": [
  {"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "Is this safe? $ARGUMENTS", "model": "small"}]},
  {"matcher": "Bash", "hooks": [{"type": "agent", "prompt": "Check it", "timeout": 20}]},
  {"hooks": [{"type": "http"}, {"type": "prompt"}, {"type": "mcp", "server": "x"}, {"type": "http", "url": "ftp://x/y"}]}
]}}`, judge)
	all := strings.Join(warns, "\n")
	for _, want := range []string{
		"hooks.PreToolUse[2].hooks[0] is missing a non-empty 'url' field; skipped",
		"hooks.PreToolUse[2].hooks[1] is missing a non-empty 'prompt' field; skipped",
		`hooks.PreToolUse[2].hooks[2]: hooks of type "mcp" are not run by herald (it runs command, http, prompt and agent); skipped`,
		"hooks.PreToolUse[2].hooks[3]: ",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
	d := reg.PreToolCall(context.Background(), toolCall())
	if d.Action != "block" || !strings.Contains(d.Message, "edits outside the project") {
		t.Fatalf("decision = %+v", d)
	}
	var prompt *JudgeRequest
	for _, r := range judge.requests() {
		if r.Kind == TypePrompt {
			prompt = &r
		}
	}
	if prompt == nil {
		t.Fatalf("the prompt hook did not ask the model: %+v", judge.requests())
	}
	if prompt.Model != "small" || !strings.Contains(prompt.Prompt, `"tool_name":"Bash"`) || !strings.HasPrefix(prompt.Prompt, "Is this safe? ") {
		t.Errorf("request = %+v", prompt)
	}
}
