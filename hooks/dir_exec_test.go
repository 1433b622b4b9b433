package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestExecutableHooks(t *testing.T) {
	t.Run("handler with its run bit gets the envelope on stdin", func(t *testing.T) {
		root := t.TempDir()
		out := filepath.Join(t.TempDir(), "got.json")
		writeHook(t, root, "obs", map[string]string{
			"HOOK.yaml": yamlFor("obs", "agent:*"),
			"handler":   "#!/bin/sh\ncat >> " + out + "\necho >> " + out + "\n",
		})
		reg, _, _ := startDir(t, root, DirOptions{})
		reg.Emit(AgentStartEv, &AgentStart{Platform: "local", UserID: "u1", SessionID: "s1", Message: "hi"})
		var lines []string
		waitFor(t, func() bool {
			b, _ := os.ReadFile(out)
			lines = strings.Split(strings.TrimSpace(string(b)), "\n")
			return len(b) > 0
		}, "the hook to run")
		var env struct {
			EventType string         `json:"event_type"`
			Context   map[string]any `json:"context"`
		}
		if err := json.Unmarshal([]byte(lines[0]), &env); err != nil {
			t.Fatalf("stdin was not the envelope: %v: %q", err, lines[0])
		}
		if env.EventType != "agent:start" || env.Context["message"] != "hi" || env.Context["session_id"] != "s1" {
			t.Fatalf("envelope: %+v", env)
		}
	})

	t.Run("command: argv relative to the hook directory answers command:*", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "deny", map[string]string{
			"HOOK.yaml": "name: deny-status\nevents: [command:status]\ncommand: [bin/decide.sh, --reason, \"not today\"]\n",
			"bin/decide.sh": `#!/bin/sh
payload=$(cat)
case "$payload" in *'"command":"status"'*) ;; *) exit 0;; esac
printf '{"decision":"deny","message":"%s (%s)"}\n' "$2" "$(basename "$PWD")"
`,
		})
		reg, d, _ := startDir(t, root, DirOptions{})
		if h := d.Hooks(); len(h) != 1 || h[0].Kind != "exec" || h[0].Name != "deny-status" {
			t.Fatalf("hooks: %+v", h)
		}
		if got := cmdReply(t, reg, "status"); got.Decision != "deny" || got.Reply != "not today (deny)" {
			t.Fatalf("got %+v", got)
		}
		if got := cmdReply(t, reg, "help"); got.Decision != "" {
			t.Fatalf("command:help should not reach a command:status hook: %+v", got)
		}
	})

	t.Run("command: as a string, no shell", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "str", map[string]string{
			"HOOK.yaml": "events: [pre_tool_call]\ncommand: ./block.sh 'rm -rf; echo pwned'\n",
			"block.sh":  "#!/bin/sh\ncat >/dev/null\nprintf '{\"action\":\"block\",\"message\":\"%s\"}' \"$1\"\n",
		})
		reg, _, _ := startDir(t, root, DirOptions{})
		d := reg.PreToolCall(context.Background(), &PreToolCall{ToolName: "terminal"})
		if d.Action != "block" || d.Message != "rm -rf; echo pwned" {
			t.Fatalf("got %+v", d)
		}
	})

	t.Run("non-zero exit still counts its stdout, and is logged", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "fail", map[string]string{
			"HOOK.yaml":  "events: [command:*]\n",
			"handler.sh": "#!/bin/sh\necho '{\"decision\":\"handled\",\"message\":\"ok\"}'\necho oops >&2\nexit 3\n",
		})
		reg, _, lr := startDir(t, root, DirOptions{})
		if got := cmdReply(t, reg, "x"); got.Reply != "ok" {
			t.Fatalf("got %+v", got)
		}
		lr.waitLog(t, "exited with an error", "status=3", "hook=fail")
		lr.waitLog(t, "hook stderr", "oops")
	})

	t.Run("garbage on stdout is a warning and fails open", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "garbage", map[string]string{
			"HOOK.yaml": "events: [command:*]\n",
			"handler":   "#!/bin/sh\necho 'not json at all'\n",
		})
		reg, _, lr := startDir(t, root, DirOptions{})
		if got := cmdReply(t, reg, "x"); got.Decision != "" {
			t.Fatalf("got %+v", got)
		}
		lr.waitLog(t, "hook failed", "hook=garbage", "not valid JSON")
	})

	t.Run("an overrun is killed at its timeout and fails open", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "slow", map[string]string{
			"HOOK.yaml": "events: [command:*]\ntimeout: 0.2\n",
			"handler":   "#!/bin/sh\nsleep 30\necho '{\"decision\":\"deny\"}'\n",
		})
		reg, _, lr := startDir(t, root, DirOptions{})
		start := time.Now()
		if got := cmdReply(t, reg, "x"); got.Decision != "" {
			t.Fatalf("got %+v", got)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Fatalf("took %s; the timeout is 0.2 s", el)
		}
		lr.waitLog(t, "hook=slow")
	})

	t.Run("env: adds named variables to the scrubbed environment", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "env", map[string]string{
			"HOOK.yaml": "events: [command:*]\nenv:\n  TELEGRAM_BOT_TOKEN: \"\"\n  GREETING: hello-${WHO}\n",
			"handler":   "#!/bin/sh\nprintf '{\"decision\":\"handled\",\"message\":\"%s %s %s\"}' \"$TELEGRAM_BOT_TOKEN\" \"$GREETING\" \"${OPENAI_API_KEY:-none}\"\n",
		})
		reg, _, _ := startDir(t, root, DirOptions{
			Environ: []string{"PATH=" + os.Getenv("PATH"), "WHO=world"},
			Lookup: func(k string) (string, bool) {
				v, ok := map[string]string{"TELEGRAM_BOT_TOKEN": "123:abc", "OPENAI_API_KEY": "sk-x"}[k]
				return v, ok
			},
		})
		if got := cmdReply(t, reg, "x").Reply; got != "123:abc hello-world none" {
			t.Fatalf("got %q", got)
		}
	})
}
