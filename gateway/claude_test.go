package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/hooks"
)

// newClaudeRecorder records like newRecorder, as a claude-dialect
// subscriber does: with an Accept filter, so it also gets the events
// herald emits for Claude Code only.
func newClaudeRecorder(reg *hooks.Registry) *recorder {
	return subscribeRecorder(reg, hooks.Subscription{Name: "claude", Attach: hooks.AttachShell,
		Events: []string{hooks.OnSessionStartHook, hooks.OnSessionFinalizeHook}, Accept: func(any) bool { return true }})
}

// sources are the SessionStart sources and SessionEnd reasons recorded.
func (rc *recorder) sources() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, e := range rc.events {
		switch p := e.Payload.(type) {
		case *hooks.SessionStarted:
			out = append(out, "start:"+p.Source)
		case *hooks.SessionFinalized:
			out = append(out, "end:"+p.Reason)
		}
	}
	return out
}

func (rc *recorder) waitSources(t *testing.T, want string) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		got := strings.Join(rc.sources(), " ")
		if got == want {
			return
		}
		select {
		case <-rc.grew:
		case <-deadline.C:
			t.Fatalf("claude events:\n got  %s\n want %s", got, want)
		}
	}
}

// SessionStart's source and SessionEnd's reason, as Claude Code says
// them: startup for a new session, clear after /new (whose SessionEnd is
// clear), resume for a stored session's first turn after a restart —
// which Hermes-shaped subscribers never see.
func TestClaudeSessionSources(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	h := newHarnessAt(t, db, nil)
	claude := newClaudeRecorder(h.reg)
	h.post(msg{User: "u1", Text: "one"})
	h.post(msg{User: "u1", Text: "two"})
	h.post(msg{User: "u1", Text: "/new"})
	h.post(msg{User: "u1", Text: "three"})
	claude.waitSources(t, "start:startup end:clear start:clear")
	h.close()

	h = newHarnessAt(t, db, nil)
	claude = newClaudeRecorder(h.reg)
	h.post(msg{User: "u1", Text: "four"})
	h.post(msg{User: "u1", Text: "five"})
	claude.waitSources(t, "start:resume")
	h.rec.waitFor(t, []string{hooks.AgentStartEv, hooks.AgentStartEv}, hooks.OnSessionStartHook, hooks.AgentStartEv)
	if p := claude.payloads(hooks.OnSessionStartHook)[0].(*hooks.SessionStarted); !p.ClaudeOnly {
		t.Errorf("resume SessionStart %+v is not Claude-only", p)
	}
}

// The sweep deletes transcripts not written for 30 days, and only those.
func TestTranscriptPrune(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, nil, func(c *Config) { c.Agent.TranscriptDir = dir })
	old, fresh := filepath.Join(dir, "old.jsonl"), filepath.Join(dir, "fresh.jsonl")
	for _, p := range []string{old, fresh} {
		os.WriteFile(p, []byte("{}\n"), 0o600)
	}
	long := time.Now().Add(-31 * 24 * time.Hour)
	os.Chtimes(old, long, long)
	h.runner.tidy(context.Background())
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("a transcript idle for 31 days was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a fresh transcript was deleted")
	}
}
