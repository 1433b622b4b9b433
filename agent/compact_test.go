package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/hooks"
)

// A long conversation cut twice in one turn: each cut fires pre_compact
// then post_compact with its counts; post_compact's context reaches the
// model as compaction notes after the system prompt, in this request and
// every later cut one, and is never stored.
func TestCompactionHooksAndNotes(t *testing.T) {
	reg := hooks.NewRegistry(nil)
	rec := &recorder{}
	var mu sync.Mutex
	answers := []string{"keep: the deploy is frozen", "keep: run the tests first"}
	reg.Subscribe(hooks.Subscription{Name: "compaction", Attach: hooks.AttachGo, Events: []string{hooks.PreCompactHook, hooks.PostCompactHook},
		Handler: func(ctx context.Context, ev hooks.Event) (any, error) {
			rec.handler(ctx, ev)
			if ev.Name != hooks.PostCompactHook {
				return nil, nil
			}
			mu.Lock()
			defer mu.Unlock()
			c := answers[0]
			answers = answers[1:]
			return &hooks.Feedback{Context: c}, nil
		}})
	tool := &stubTool{name: "lookup", out: strings.Repeat("t", 2400)}
	m := toolThenText("lookup", map[string]any{"key": "alpha"})
	a := newAgent(m, reg, tool)
	a.SystemPrompt = "You are herald."
	a.ContextWindow = 800
	a.TranscriptDir = t.TempDir()
	hist := []openai.ChatCompletionMessage{
		msg("user", "first question"), msg("assistant", strings.Repeat("a", 2000)),
		msg("user", "second question"), msg("assistant", strings.Repeat("b", 2000)),
		msg("user", "third question"), msg("assistant", "short"),
	}
	res, err := a.Run(context.Background(), "now", Options{Turn: Turn{SessionID: "s1", Platform: "local"}, History: hist})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, reg)
	golden(t, "compaction", rec.events())

	reqs := m.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, want := range [][]string{{"keep: the deploy is frozen"}, {"keep: the deploy is frozen", "keep: run the tests first"}} {
		sent := reqs[i].Messages
		if sent[0].Content != "You are herald." {
			t.Errorf("request %d starts with %q", i, sent[0].Content)
		}
		notes := sent[1]
		if notes.Role != openai.ChatMessageRoleSystem || !strings.HasPrefix(notes.Content, CompactionNotesHeader) {
			t.Fatalf("request %d: no compaction notes after the system prompt: %+v", i, notes)
		}
		for _, w := range want {
			mustContain(t, notes.Content, w)
		}
		if sent[2].Role != openai.ChatMessageRoleUser {
			t.Errorf("request %d: the notes are not followed by a kept turn: %+v", i, sent[2])
		}
	}
	if c := reqs[0].Messages[2].Content; c != "second question" {
		t.Errorf("first cut kept %q first", c)
	}
	if c := reqs[1].Messages[2].Content; c != "third question" {
		t.Errorf("second cut kept %q first", c)
	}
	for _, m := range res.Messages {
		if strings.Contains(m.Content, CompactionNotesHeader) {
			t.Errorf("notes stored in the turn: %+v", m)
		}
	}
	b, err := os.ReadFile(filepath.Join(a.TranscriptDir, "s1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "Compaction notes") || strings.Contains(string(b), "deploy is frozen") {
		t.Errorf("notes in the transcript:\n%s", b)
	}
}

// A request that fits fires no compaction hook and carries no notes.
func TestNoCompactionWhenItFits(t *testing.T) {
	reg := hooks.NewRegistry(nil)
	rec := &recorder{}
	reg.Subscribe(hooks.Subscription{Name: "compaction", Attach: hooks.AttachGo, Events: []string{hooks.PreCompactHook, hooks.PostCompactHook}, Handler: rec.handler})
	m := &funcModel{fn: func(int, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
		return textResp("ok"), nil
	}}
	a := newAgent(m, reg)
	a.ContextWindow = 100000
	if _, err := a.Run(context.Background(), "hi", Options{History: []openai.ChatCompletionMessage{msg("user", "a"), msg("assistant", "b")}}); err != nil {
		t.Fatal(err)
	}
	drain(t, reg)
	if n := rec.names(); len(n) != 0 {
		t.Errorf("fired %v", n)
	}
	if len(m.requests()[0].Messages) != 3 {
		t.Errorf("request %+v", m.requests()[0].Messages)
	}
}

// Shell hooks on post_compact give the notes in Hermes' shape
// ({"context": …}) and in Claude Code's (PostCompact's
// additionalContext); a Claude PreCompact hook reads its trigger.
func TestCompactionShellHooks(t *testing.T) {
	out := filepath.Join(t.TempDir(), "precompact.json")
	hermes := claudeHooks(t, "", [2]string{hooks.PostCompactHook, `cat >/dev/null; echo '{"context":"keep: answer in French"}'`})
	claude := claudeHooks(t, "claude",
		[2]string{hooks.PreCompactHook, `cat >` + out},
		[2]string{hooks.PostCompactHook, `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PostCompact","additionalContext":"keep: no deploys"}}'`})
	for _, tc := range []struct {
		name string
		reg  *hooks.Registry
		want string
	}{{"hermes", hermes, "keep: answer in French"}, {"claude", claude, "keep: no deploys"}} {
		t.Run(tc.name, func(t *testing.T) {
			m := &funcModel{fn: func(int, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
				return textResp("ok"), nil
			}}
			a := newAgent(m, tc.reg)
			a.ContextWindow = 300
			hist := []openai.ChatCompletionMessage{msg("user", "old"), msg("assistant", strings.Repeat("a", 2000)), msg("user", "recent"), msg("assistant", "b")}
			if _, err := a.Run(context.Background(), "now", Options{Turn: Turn{SessionID: "s1"}, History: hist}); err != nil {
				t.Fatal(err)
			}
			sent := m.requests()[0].Messages
			if !strings.HasPrefix(sent[0].Content, CompactionNotesHeader) || !strings.Contains(sent[0].Content, tc.want) {
				t.Errorf("request %+v", sent)
			}
		})
	}
	drain(t, claude)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(b, &in); err != nil || in["hook_event_name"] != "PreCompact" || in["trigger"] != "auto" || in["session_id"] != "s1" {
		t.Errorf("PreCompact stdin %s (%v)", b, err)
	}
}
