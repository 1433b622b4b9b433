package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/hooks"
)

// The seed's command-logger example, byte for byte: it must run unchanged.
const seedCommandLoggerYAML = `name: command-logger
description: Log slash command usage
events:
  - command:*
`

const seedCommandLoggerPy = `import json
from datetime import datetime
from pathlib import Path

LOG = Path.home() / ".hermes" / "logs" / "command_usage.jsonl"

def handle(event_type: str, context: dict):
    LOG.parent.mkdir(parents=True, exist_ok=True)
    entry = {
        "ts": datetime.now().isoformat(),
        "command": context.get("command"),
        "args": context.get("args"),
        "platform": context.get("platform"),
        "user": context.get("user_id"),
    }
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")
`

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// allowDir approves a hook directory as the operator would.
func allowDir(t *testing.T, home, name string) {
	t.Helper()
	if code, out, errw := run(t, home, "", "hooks", "allow", name); code != 0 || !strings.Contains(out, "Approved directory hook") {
		t.Fatalf("hooks allow %s: exit %d\n%s%s", name, code, out, errw)
	}
}

// waitFile waits for a file to contain want (hooks run off the reply path).
func waitFile(t *testing.T, path string, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		ok := len(b) > 0
		for _, w := range want {
			ok = ok && bytes.Contains(b, []byte(w))
		}
		if ok {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never contained %q; it holds:\n%s", path, want, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Real directory hooks observe a real gateway, and one denies a command.
func TestDirectoryHooksEndToEnd(t *testing.T) {
	home, userHome := t.TempDir(), t.TempDir()
	t.Setenv("HOME", userHome)                     // the seed handler logs under Path.home()
	t.Setenv("MY_SERVICE_TOKEN", "tok-0123456789") // a directory hook sees it, as a Hermes handler would
	hd := filepath.Join(home, "hooks")
	writeFiles(t, filepath.Join(hd, "command-logger"), map[string]string{"HOOK.yaml": seedCommandLoggerYAML, "handler.py": seedCommandLoggerPy})
	writeFiles(t, filepath.Join(hd, "agent-watch"), map[string]string{
		"HOOK.yaml": "name: agent-watch\ndescription: records agent turns\nevents: [agent:start, agent:end]\nenv: [ALERT_WEBHOOK_SECRET]\n",
		"handler": `#!/bin/sh
cat >> "$HERALD_HOME/agent-events.jsonl"
echo >> "$HERALD_HOME/agent-events.jsonl"
env > "$HERALD_HOME/agent-watch.env"
`,
	})
	writeFiles(t, filepath.Join(hd, "no-status"), map[string]string{
		"HOOK.yaml": "events: [command:status]\ncommand: [./deny.sh]\n",
		"deny.sh":   "#!/bin/sh\ncat >/dev/null\necho '{\"decision\": \"deny\", \"message\": \"status is off today\"}'\n",
	})

	for _, name := range []string{"command-logger", "agent-watch", "no-status"} {
		allowDir(t, home, name)
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: map[string]string{"ALERT_WEBHOOK_SECRET": "whsec-abcdef123456"}})

	// the command hook's decision is the reply; the seed logger saw it too
	r := g.Say(t, "c1", "/status")
	if r.Text() != "status is off today" {
		t.Fatalf("/status reply = %q", r.Text())
	}
	logged := waitFile(t, filepath.Join(userHome, ".hermes", "logs", "command_usage.jsonl"), `"command": "status"`)
	var entry map[string]any
	if err := json.Unmarshal([]byte(strings.Split(strings.TrimSpace(logged), "\n")[0]), &entry); err != nil {
		t.Fatal(err)
	}
	if entry["platform"] != "local" || entry["user"] != "u-c1" {
		t.Fatalf("command-logger entry: %v", entry)
	}

	// the executable observes a turn: agent:start then agent:end, paired
	if r := g.Say(t, "c1", "hello hooks"); r.Status != "done" {
		t.Fatalf("reply %+v", r)
	}
	got := waitFile(t, filepath.Join(home, "agent-events.jsonl"), `"agent:start"`, `"agent:end"`)
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if line == "" {
			continue
		}
		var ev struct {
			EventType string         `json:"event_type"`
			Context   map[string]any `json:"context"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not an envelope: %q", line)
		}
		if ev.Context["message"] != "hello hooks" {
			t.Fatalf("context %v", ev.Context)
		}
		names = append(names, ev.EventType)
	}
	if strings.Join(names, ",") != "agent:start,agent:end" {
		t.Fatalf("events %q", names)
	}
	env := waitFile(t, filepath.Join(home, "agent-watch.env"), "HERALD_HOME=")
	for _, want := range []string{"HERALD_HOME=" + home + "\n", "HERMES_HOME=" + home + "\n", "MY_SERVICE_TOKEN=tok-0123456789\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("a directory hook's environment lacks %q (it is the gateway's, whole):\n%s", want, env)
		}
	}
	if !strings.Contains(env, "ALERT_WEBHOOK_SECRET=whsec-abcdef123456") {
		t.Fatalf("env: did not pass the named variable:\n%s", env)
	}
	if code := g.Stop(); code != 0 {
		t.Fatalf("gateway exit %d\n%s", code, g.Stderr)
	}
	for _, want := range []string{"Loaded hook 'command-logger' for events: [command:*]", "Loaded hook 'agent-watch'", "Loaded hook 'no-status'"} {
		if !strings.Contains(g.Stderr.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// `herald hooks list` shows directory hooks with their events, and says
// what is wrong with a bad one.
func TestHooksListDirectory(t *testing.T) {
	home := t.TempDir()
	hd := filepath.Join(home, "hooks")
	writeFiles(t, filepath.Join(hd, "command-logger"), map[string]string{"HOOK.yaml": seedCommandLoggerYAML, "handler.py": seedCommandLoggerPy})
	writeFiles(t, filepath.Join(hd, "broken"), map[string]string{"HOOK.yaml": "events: [agent:start]\n"})
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), []string{"hooks", "list"}, cmd.WithStdio(strings.NewReader(""), &out, &errw),
		cmd.WithGetenv(func(k string) string { return map[string]string{"HERALD_HOME": home}[k] }))
	s := out.String()
	if code != 0 || !strings.Contains(s, "command-logger — Log slash command usage") || !strings.Contains(s, "events: command:*") ||
		!strings.Contains(s, "Skipping broken: no handler.py") {
		t.Fatalf("exit %d\n%s\n%s", code, s, errw.String())
	}
}

// pendingEmitters are catalogue points this test cannot make fire through
// the gateway with the offline echo model. Whoever makes one reachable
// removes it here; the test fails if a listed point fires, so the list
// only shrinks.
var pendingEmitters = map[string]string{
	// approvals need a dangerous command and a person to answer; the
	// agent package's approval tests drive them
	hooks.PreApprovalRequestHook:   "approvals",
	hooks.PostApprovalResponseHook: "approvals",
	// delegate_task is never called by the echo model
	hooks.SubagentStopHook: "delegate_task",
}

// Every catalogue point is emitted by something: driving the gateway (a
// turn, a tool call through the echo model's demo phrase, a command, a
// reset) fires each one not listed in pendingEmitters.
func TestEveryCataloguePointIsEmitted(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	rec := hooks.Plugin{Name: "emitted-recorder", Register: func(c *hooks.PluginContext) error {
		c.RegisterHook("*", func(ctx context.Context, ev hooks.Event) (any, error) {
			name := ev.Name
			if strings.HasPrefix(name, hooks.CommandPrefix) {
				name = hooks.CommandPrefix + "*"
			}
			mu.Lock()
			seen[name] = true
			mu.Unlock()
			return nil, nil
		})
		return nil
	}}
	// a directory hook too, so agent:step is wired as in Hermes
	home := t.TempDir()
	writeFiles(t, filepath.Join(home, "hooks", "steps"), map[string]string{"HOOK.yaml": "events: [agent:step]\n", "handler": "#!/bin/sh\ncat >/dev/null\n"})
	allowDir(t, home, "steps")
	// a window so small that the second turn's request drops the first
	// (pre_compact, post_compact)
	writeFiles(t, home, map[string]string{"config.yaml": "model:\n  context_window: 200\n"})
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Plugins: []hooks.Plugin{rec}})
	for _, text := range []string{"hello", "run: echo hi", "/status", "/new", "again"} {
		if r := g.Say(t, "c1", text); r.Status != "done" {
			t.Fatalf("%q: %+v", text, r)
		}
	}
	if code := g.Stop(); code != 0 { // drains every observer queue
		t.Fatalf("exit %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	var missing, stale []string
	for _, name := range hooks.Names() {
		_, pending := pendingEmitters[name]
		switch {
		case !seen[name] && !pending:
			missing = append(missing, name)
		case seen[name] && pending:
			stale = append(stale, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("nothing emitted %q", missing)
	}
	if len(stale) > 0 {
		t.Errorf("%q fire now: remove them from pendingEmitters", stale)
	}
}
