package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

// Claude Code hooks in the shapes real ones take, through a whole
// gateway: a guard that refuses a relative file_path (Claude's are always
// absolute), and a Stop hook that reads transcript_path, finds the
// turn's answer there and sends the agent back once.
func TestClaudeHooksReadTranscriptAndAbsolutePaths(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	guardOut, stopOut := filepath.Join(home, "guard.out"), filepath.Join(home, "stop.out")
	guard := filepath.Join(home, "guard.sh")
	os.WriteFile(guard, []byte(`#!/bin/sh
input=$(cat)
path=$(printf '%s' "$input" | sed -n 's/.*"file_path":"\([^"]*\)".*/\1/p')
case "$path" in
  "") exit 0 ;;
  /*) printf '%s\n' "$path" >> `+guardOut+`; exit 0 ;;
  *) echo "file_path must be absolute, got $path" >&2; exit 2 ;;
esac
`), 0o755)
	stop := filepath.Join(home, "stop.sh")
	os.WriteFile(stop, []byte(`#!/bin/sh
input=$(cat)
transcript=$(printf '%s' "$input" | sed -n 's/.*"transcript_path":"\([^"]*\)".*/\1/p')
answer=$(grep '"type":"assistant"' "$transcript" | tail -n 1)
case "$input" in *'"stop_hook_active":true'*) exit 0;; esac
printf '%s\n%s\n' "$transcript" "$answer" > `+stopOut+`
echo '{"decision":"block","reason":"Read the note back to check it."}'
`), 0o755)
	cfg := "agent:\n  workdir: " + work + "\nhooks:\n  PreToolUse:\n    - command: " + guard + "\n      dialect: claude\n" +
		"  Stop:\n    - command: " + stop + "\n      dialect: claude\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	model := agenttest.New(t)
	model.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		if req.LastMessage().Role == "tool" {
			return agenttest.Reply{Content: "The note is saved in notes.txt."}
		}
		if strings.HasPrefix(req.LastMessage().Content, agent.StopFeedback) {
			return agenttest.Reply{Content: "Checked: the note says remember the milk."}
		}
		return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call_w", Name: "write_file", Args: `{"path":"notes.txt","content":"remember the milk"}`}}}
	}}
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Args: []string{"--accept-hooks"}, Env: map[string]string{
		"OPENAI_BASE_URL": model.BaseURL(), "OPENAI_API_KEY": "sk-test-key-0123456789abcdef", "HERALD_MODEL": "fake-model"}})
	r := g.Say(t, "c1", "note: remember the milk")
	if r.Status != "done" || r.Text() != "Checked: the note says remember the milk." {
		t.Fatalf("reply %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(work, "notes.txt")); err != nil || string(b) != "remember the milk" {
		t.Fatalf("the guard blocked the write (file_path not absolute?): %q %v\n%s", b, err, g.Log())
	}
	if b, _ := os.ReadFile(guardOut); strings.TrimSpace(string(b)) != filepath.Join(work, "notes.txt") {
		t.Errorf("the guard saw file_path %q, want %s", b, filepath.Join(work, "notes.txt"))
	}
	// Stop hooks run in line: what it wrote is there once the reply is
	out, err := os.ReadFile(stopOut)
	if err != nil {
		t.Fatalf("the Stop hook did not run: %v\n%s", err, g.Log())
	}
	transcript, answer, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if want := filepath.Join(home, "transcripts", r.SessionID+".jsonl"); transcript != want {
		t.Errorf("transcript_path %q, want %q", transcript, want)
	}
	if !strings.Contains(answer, `"text":"The note is saved in notes.txt."`) {
		t.Errorf("the Stop hook did not find the answer in the transcript: %q", answer)
	}
}
