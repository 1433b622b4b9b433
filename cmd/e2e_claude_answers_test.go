package cmd_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/sessions"
)

// claudeScript writes a /bin/sh hook in the shape Claude Code hooks take
// and returns its path.
func claudeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Claude Code hooks' answers change what a whole gateway does: a
// UserPromptSubmit guard refuses a prompt, a SessionStart hook's
// systemMessage reaches the chat, a PostToolUse hook's additionalContext
// reaches the model, and a Stop hook sends the agent back once.
func TestClaudeHookAnswersThroughTheGateway(t *testing.T) {
	home := t.TempDir()
	guard := claudeScript(t, home, "guard.sh", `in=$(cat)
case "$in" in *password*) echo '{"decision":"block","reason":"Prompts must not contain passwords."}';; esac`)
	start := claudeScript(t, home, "start.sh", `cat >/dev/null
echo '{"systemMessage":"Hooks are watching this chat."}'`)
	post := claudeScript(t, home, "post.sh", `cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"Output checked by the PostToolUse hook."}}'`)
	stop := claudeScript(t, home, "stop.sh", `in=$(cat)
case "$in" in *'"stop_hook_active":true'*) exit 0;; esac
case "$in" in *'finish up'*) echo '{"decision":"block","reason":"Summarise what you did."}';; esac`)
	cfg := "hooks:\n" +
		"  UserPromptSubmit:\n    - {command: " + guard + ", dialect: claude}\n" +
		"  SessionStart:\n    - {command: " + start + ", dialect: claude}\n" +
		"  PostToolUse:\n    - {command: " + post + ", dialect: claude}\n" +
		"  Stop:\n    - {command: " + stop + ", dialect: claude}\n"
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600)
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Args: []string{"--accept-hooks"}})

	r := g.Say(t, "c1", "hello")
	if r.Status != "done" || len(r.Replies) != 2 || r.Replies[0].Text != "Hooks are watching this chat." || r.Replies[1].Text != agent.EchoPrefix+"hello" {
		t.Fatalf("first turn: %+v", r)
	}
	r = g.Say(t, "c1", "my password is swordfish")
	if r.Text() != "Prompts must not contain passwords." {
		t.Fatalf("refused prompt: %+v", r)
	}
	r = g.Say(t, "c1", "run: echo hi")
	if !strings.Contains(r.Text(), "hi") || !strings.Contains(r.Text(), "Output checked by the PostToolUse hook.") {
		t.Fatalf("tool turn: %q", r.Text())
	}
	r = g.Say(t, "c1", "finish up")
	if r.Text() != agent.EchoPrefix+agent.StopFeedback+"Summarise what you did." {
		t.Fatalf("stop turn: %q", r.Text())
	}

	// the refused prompt never reached the history; the others did
	g.Stop()
	st, err := sessions.Open(filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs, err := st.Messages(context.Background(), r.SessionID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, m := range msgs {
		all = append(all, m.Role+": "+m.Content)
	}
	if joined := strings.Join(all, "\n"); strings.Contains(joined, "swordfish") || !strings.Contains(joined, "finish up") {
		t.Fatalf("stored history:\n%s", joined)
	}
}
