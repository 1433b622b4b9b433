package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/hooks"
)

func TestCommands(t *testing.T) {
	h := newHarness(t, nil)
	for _, tc := range []struct {
		text, want string
	}{
		{"/help", "Commands:\n/new"},
		{"/commands", "Commands:\n/new"},
		{"/whoami", "You are unnamed on local (user id u1)."},
		{"/model", "Model: echo-test"},
		{"/model gpt-5", "Model: echo-test\nSwitching the model per conversation is not supported; set model.default in config.yaml."},
		{"/stop", "Nothing is running."},
		{"/queue", "Usage: /queue <prompt>"},
		{"/approve", "Nothing is waiting for approval."},
		{"/deny", "Nothing is waiting for approval."},
		{"/status", "Session: (none yet)\nModel: echo-test\nState: idle"},
		{"/frobnicate", "Unknown command `/frobnicate`. Type /commands to see what's available, or resend without the leading slash to send as a regular message."},
		{"/foo_bar", "Unknown command `/foo_bar`."},
		{"/tmp/x is a path", echo + "/tmp/x is a path"},
		{"/q queued when idle runs now", echo + "queued when idle runs now"},
		// the local platform names no bot: a command addressed to one
		// is another bot's, so plain text here
		{"/help@herald_bot", echo + "/help@herald_bot"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			r := h.post(msg{User: "u1", Chat: "cmd", Text: tc.text})
			if !strings.HasPrefix(r.text(), tc.want) {
				t.Fatalf("%q answered %q, want prefix %q", tc.text, r.text(), tc.want)
			}
		})
	}
}

func TestCommandHooks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		typed  string
		answer any
		want   string
	}{
		{"deny with message", "/status", map[string]any{"decision": "deny", "message": "no status for you"}, "no status for you"},
		{"deny default text names the typed command", "/status", &hooks.CommandDecision{Decision: "deny"}, "Command `/status` was blocked by a hook."},
		{"handled with message", "/status", map[string]any{"decision": "handled", "message": "done elsewhere"}, "done elsewhere"},
		{"handled without message says nothing", "/status", map[string]any{"decision": "handled"}, ""},
		{"allow passes through", "/whoami", map[string]any{"decision": "allow"}, "You are"},
		{"non-dict answers are ignored", "/whoami", "nonsense", "You are"},
		{"rewrite routes to another command", "/status", map[string]any{"decision": "rewrite", "command_name": "/whoami"}, "You are"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			calls := 0
			register(h.reg, "command:*", func(ctx context.Context, ev hooks.Event) (any, error) {
				calls++
				p := ev.Payload.(*hooks.Command)
				if ev.Name == "command:whoami" && p.Command == "whoami" && tc.name == "rewrite routes to another command" {
					t.Error("the hook fired again for the rewritten command")
				}
				return tc.answer, nil
			})
			r := h.post(msg{User: "u1", Text: tc.typed})
			if r.Status != adapters.StatusDone || !strings.HasPrefix(r.text(), tc.want) || (tc.want == "" && len(r.Replies) != 0) {
				t.Fatalf("answered %q (%s), want %q", r.text(), r.Status, tc.want)
			}
			if calls != 1 {
				t.Fatalf("hook called %d times", calls)
			}
		})
	}
	t.Run("alias fires the canonical name", func(t *testing.T) {
		h := newHarness(t, nil)
		got := make(chan string, 1)
		register(h.reg, "command:new", func(ctx context.Context, ev hooks.Event) (any, error) {
			p := ev.Payload.(*hooks.Command)
			got <- ev.Name + " " + p.RawCommand
			return map[string]any{"decision": "handled", "message": "no resets"}, nil
		})
		r := h.post(msg{User: "u1", Text: "/reset"})
		if r.text() != "no resets" || <-got != "command:new reset" {
			t.Fatalf("%+v", r)
		}
	})
}

// The lifecycle order of a /new, recorded from the registry.
func TestLifecycleOrder(t *testing.T) {
	h := newHarness(t, nil)
	keep := []string{hooks.SessionStartEv, hooks.SessionEndEv, hooks.SessionResetEv, hooks.AgentStartEv, hooks.AgentEndEv,
		hooks.OnSessionStartHook, hooks.OnSessionFinalizeHook, hooks.OnSessionResetHook}
	first := h.post(msg{User: "u1", Text: "one"})
	second := h.post(msg{User: "u1", Text: "two"})
	if first.SessionID == "" || first.SessionID != second.SessionID {
		t.Fatalf("sessions %q %q", first.SessionID, second.SessionID)
	}
	h.rec.waitFor(t, []string{"session:start", "agent:start", "on_session_start", "agent:end", "agent:start", "agent:end"}, keep...)
	reset := h.post(msg{User: "u1", Text: "/new"})
	if !strings.HasPrefix(reset.text(), "✨ New session started.") {
		t.Fatalf("/new: %q", reset.text())
	}
	third := h.post(msg{User: "u1", Text: "three"})
	if third.SessionID == first.SessionID || third.SessionID == "" {
		t.Fatalf("no new session: %q", third.SessionID)
	}
	h.rec.waitFor(t, []string{"session:start", "agent:start", "on_session_start", "agent:end", "agent:start", "agent:end",
		"on_session_finalize", "session:end", "session:reset", "on_session_reset",
		"session:start", "agent:start", "on_session_start", "agent:end"}, keep...)
	fin := h.rec.payloads(hooks.OnSessionFinalizeHook)[0].(*hooks.SessionFinalized)
	rst := h.rec.payloads(hooks.OnSessionResetHook)[0].(*hooks.SessionWasReset)
	if fin.SessionID == nil || *fin.SessionID != first.SessionID || rst.SessionID != third.SessionID || fin.Platform != "local" {
		t.Fatalf("finalize %+v reset %+v", fin, rst)
	}
	end := h.rec.payloads(hooks.SessionEndEv)[0].(*hooks.SessionBoundary)
	if end.Platform != "local" || end.UserID != "u1" || end.SessionKey != "agent:main:local:dm:c1" {
		t.Fatalf("session:end %+v", end)
	}
	// the new session's transcript starts empty: the old one is ended
	if tr := h.transcript(sourceC1()); len(tr) != 2 || tr[0].Content != "three" {
		t.Fatalf("transcript after /new: %+v", tr)
	}
}

// A failing hook does not break /new.
func TestResetSurvivesHookErrors(t *testing.T) {
	h := newHarness(t, nil)
	for _, ev := range []string{hooks.OnSessionFinalizeHook, hooks.SessionEndEv, hooks.OnSessionResetHook} {
		register(h.reg, ev, func(ctx context.Context, e hooks.Event) (any, error) { panic("hook broke") })
	}
	h.post(msg{User: "u1", Text: "one"})
	if r := h.post(msg{User: "u1", Text: "/reset"}); !strings.HasPrefix(r.text(), "✨ New session started.") {
		t.Fatalf("%q", r.text())
	}
}
