package gateway

import (
	"context"

	"github.com/heraldgw/herald"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
)

func TestApprovalInChat(t *testing.T) {
	for _, tc := range []struct {
		answer, ack, result string
	}{
		{"/approve", "✅ Approved (once).", "ran rm -rf /tmp/x"},
		{"/approve session", "✅ Approved (session).", "ran rm -rf /tmp/x"},
		{"/deny", "❌ Denied.", `{"error":"denied"}`},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			h := newHarness(t, nil)
			r := h.post(msg{User: "u1", Text: "run: rm -rf /tmp/x"})
			if r.Status != adapters.StatusAwaitingInput || len(r.Replies) != 1 || !strings.Contains(r.Replies[0].Text, "rm -rf /tmp/x") ||
				!strings.Contains(r.Replies[0].Text, "reply /approve, /approve session, /approve always or /deny") &&
					!strings.Contains(r.Replies[0].Text, "Reply /approve, /approve session, /approve always or /deny") {
				t.Fatalf("prompt: %+v", r)
			}
			a := h.post(msg{User: "u1", Text: tc.answer})
			if a.Status != adapters.StatusDone || len(a.Replies) != 2 || a.Replies[0].Text != tc.ack || !strings.Contains(a.Replies[1].Text, tc.result) {
				t.Fatalf("answer: %+v", a)
			}
			post := h.rec.payloads(hooks.PostApprovalResponseHook)
			if len(post) != 0 {
				// observers are asynchronous; the payload is checked when there
				want := map[string]string{"/approve": "once", "/approve session": "session", "/deny": "deny"}[tc.answer]
				if got := post[0].(*hooks.Approval).Choice; got != want {
					t.Fatalf("choice %q, want %q", got, want)
				}
			}
		})
	}
}

func TestApprovalTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, nil, func(c *Config) { c.ApprovalTimeout = 5 * time.Minute })
		defer b.stop()
		rec := b.send("c1", "u1", "run: rm -rf /")
		if o := outcome(t, rec); o.Status != adapters.StatusAwaitingInput {
			t.Fatalf("outcome %+v", o)
		}
		time.Sleep(5*time.Minute + time.Second)
		synctest.Wait()
		got := ad.texts()
		if len(got) != 3 || got[1] != "⌛ No answer in time: the command was not run." || !strings.Contains(got[2], "denied") {
			t.Fatalf("sent %q", got)
		}
		// a late answer finds nothing waiting
		if o := outcome(t, b.send("c1", "u1", "/approve")); o.Status != adapters.StatusDone {
			t.Fatalf("late /approve %+v", o)
		}
		if last := ad.texts()[3]; last != "Nothing is waiting for approval." {
			t.Fatalf("late answer got %q", last)
		}
	})
}

// A platform can bring its own approver (herald chat's terminal prompt).
type fixedApprover agent.Choice

func (f fixedApprover) Approve(ctx context.Context, req agent.ApprovalRequest) (agent.Choice, error) {
	return agent.Choice(f), nil
}

func TestApproverPerPlatform(t *testing.T) {
	h := newHarness(t, nil, func(c *Config) {
		c.Approvers = map[herald.Platform]agent.Approver{herald.PlatformLocal: fixedApprover(agent.ChoiceOnce)}
	})
	r := h.post(msg{User: "u1", Text: "run: ls"})
	if r.Status != adapters.StatusDone || len(r.Replies) != 1 || !strings.Contains(r.Replies[0].Text, "ran ls") {
		t.Fatalf("%+v", r)
	}
}
