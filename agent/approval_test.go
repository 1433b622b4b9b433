package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

type countingApprover struct {
	mu     sync.Mutex
	choice Choice
	reqs   []ApprovalRequest
	block  bool
}

func (c *countingApprover) Approve(ctx context.Context, req ApprovalRequest) (Choice, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	c.mu.Unlock()
	if c.block {
		<-ctx.Done()
		return ChoiceTimeout, ctx.Err()
	}
	return c.choice, nil
}

func (c *countingApprover) asked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.reqs)
}

func fixedApprover(c Choice) *countingApprover { return &countingApprover{choice: c} }

// dangerousRun runs one turn whose model calls terminal with an rm -rf of
// a directory in dir, and reports whether the directory was removed.
func dangerousRun(t *testing.T, a *Agent, dir string, o Options) (removed bool, toolOut string) {
	t.Helper()
	victim := filepath.Join(dir, "victim")
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	m := toolThenText("terminal", map[string]any{"command": "rm -rf ./victim"})
	a.Model = m
	if _, err := a.Run(context.Background(), "delete it", o); err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	toolOut = reqs[1].Messages[len(reqs[1].Messages)-1].Content
	_, err := os.Stat(victim)
	return errors.Is(err, os.ErrNotExist), toolOut
}

func TestApprovals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mode     string
		approver *countingApprover
		nilAppr  bool
		runs     bool
		choice   string // post_approval_response choice, "" when no prompt
		inErr    string
	}{
		{name: "ask, approved once", mode: ModeAsk, approver: fixedApprover(ChoiceOnce), runs: true, choice: "once"},
		{name: "ask, denied", mode: ModeAsk, approver: fixedApprover(ChoiceDeny), choice: "deny", inErr: "the user denied it"},
		{name: "ask, nil approver denies", mode: ModeAsk, nilAppr: true, inErr: "nobody can answer"},
		{name: "default mode is ask", mode: "", approver: fixedApprover(ChoiceOnce), runs: true, choice: "once"},
		{name: "off denies", mode: ModeOff, approver: fixedApprover(ChoiceOnce), inErr: "approvals are off"},
		{name: "yolo allows", mode: ModeYolo, nilAppr: true, runs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := hooks.NewRegistry(nil)
			rec := observe(reg)
			dir := t.TempDir()
			a := newAgent(nil, reg, &Terminal{Paths: &Paths{Workdir: dir}})
			a.ApprovalMode = tc.mode
			o := Options{Turn: Turn{SessionID: "s1", SessionKey: "k1", Surface: "gateway"}}
			if !tc.nilAppr {
				o.Approver = tc.approver
			}
			removed, out := dangerousRun(t, a, dir, o)
			drain(t, reg)
			if removed != tc.runs {
				t.Errorf("command ran: %v, want %v (%s)", removed, tc.runs, out)
			}
			if tc.inErr != "" {
				mustContain(t, out, tc.inErr)
				mustContain(t, out, `"error"`)
			}
			pre, post := rec.of(hooks.PreApprovalRequestHook), rec.of(hooks.PostApprovalResponseHook)
			if tc.choice == "" {
				if len(pre)+len(post) != 0 {
					t.Errorf("approval hooks fired with no prompt: %v", rec.names())
				}
				return
			}
			if len(pre) != 1 || len(post) != 1 {
				t.Fatalf("approval hooks %v", rec.names())
			}
			var p map[string]any
			json.Unmarshal(post[0].Payload, &p)
			if p["choice"] != tc.choice {
				t.Errorf("choice %v", p["choice"])
			}
			if tc.approver.asked() != 1 || tc.approver.reqs[0].Command != "rm -rf ./victim" || tc.approver.reqs[0].PatternKey != "rm_rf" {
				t.Errorf("approver asked %+v", tc.approver.reqs)
			}
		})
	}
}

func TestApprovalHookPayloadsGolden(t *testing.T) {
	reg := hooks.NewRegistry(nil)
	rec := observe(reg)
	dir := t.TempDir()
	a := newAgent(nil, reg, &Terminal{Paths: &Paths{Workdir: dir}})
	dangerousRun(t, a, dir, Options{Turn: Turn{SessionID: "s1", SessionKey: "agent:main:telegram:dm:42", Surface: "gateway"}, Approver: fixedApprover(ChoiceSession)})
	drain(t, reg)
	golden(t, "approval_hooks", map[string]any{
		hooks.PreApprovalRequestHook:   rec.of(hooks.PreApprovalRequestHook)[0].Payload,
		hooks.PostApprovalResponseHook: rec.of(hooks.PostApprovalResponseHook)[0].Payload,
	})
}

func TestApprovalMemory(t *testing.T) {
	t.Run("session", func(t *testing.T) {
		dir := t.TempDir()
		a := newAgent(nil, hooks.NewRegistry(nil), &Terminal{Paths: &Paths{Workdir: dir}})
		ap := fixedApprover(ChoiceSession)
		o := Options{Turn: Turn{SessionID: "s1", SessionKey: "k1"}, Approver: ap}
		for i := 0; i < 2; i++ {
			if removed, out := dangerousRun(t, a, dir, o); !removed {
				t.Fatalf("run %d: %s", i, out)
			}
		}
		if ap.asked() != 1 {
			t.Errorf("asked %d times in one session", ap.asked())
		}
		// another session is asked again
		o.SessionKey = "k2"
		dangerousRun(t, a, dir, o)
		if ap.asked() != 2 {
			t.Errorf("asked %d times over two sessions", ap.asked())
		}
	})
	t.Run("always, in state.db", func(t *testing.T) {
		dir := t.TempDir()
		st, err := sessions.Open(filepath.Join(dir, "state.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		a := newAgent(nil, hooks.NewRegistry(nil), &Terminal{Paths: &Paths{Workdir: dir}})
		a.ApprovalMemory = st
		ap := fixedApprover(ChoiceAlways)
		if removed, out := dangerousRun(t, a, dir, Options{Turn: Turn{SessionKey: "k1"}, Approver: ap}); !removed {
			t.Fatal(out)
		}
		list, err := st.Approvals(context.Background())
		if err != nil || len(list) != 1 || list[0].Pattern != "rm_rf" || list[0].Command != "rm -rf ./victim" {
			t.Fatalf("stored approvals %+v %v", list, err)
		}
		// a new agent (a restart), another session: not asked
		b := newAgent(nil, hooks.NewRegistry(nil), &Terminal{Paths: &Paths{Workdir: dir}})
		b.ApprovalMemory = st
		ap2 := fixedApprover(ChoiceDeny)
		if removed, out := dangerousRun(t, b, dir, Options{Turn: Turn{SessionKey: "k9"}, Approver: ap2}); !removed || ap2.asked() != 0 {
			t.Fatalf("always not remembered: %s, asked %d", out, ap2.asked())
		}
		// a command matching another pattern as well is still asked
		m := toolThenText("terminal", map[string]any{"command": "sudo rm -rf ./victim"})
		b.Model = m
		b.Run(context.Background(), "x", Options{Turn: Turn{SessionKey: "k9"}, Approver: ap2})
		if ap2.asked() != 1 || !strings.Contains(strings.Join(ap2.reqs[0].PatternKeys, ","), "sudo") {
			t.Errorf("asked %d: %+v", ap2.asked(), ap2.reqs)
		}
		if ok, _ := st.ForgetApproval(context.Background(), "rm_rf"); !ok {
			t.Error("forget")
		}
	})
}

func TestApprovalTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := hooks.NewRegistry(nil)
		rec := observe(reg)
		a := newAgent(toolThenText("terminal", map[string]any{"command": "sudo reboot"}), reg, &Terminal{})
		ap := &countingApprover{block: true}
		start := time.Now()
		res, err := a.Run(t.Context(), "x", Options{Turn: Turn{SessionKey: "k"}, Approver: ap})
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != DefaultApprovalTimeout {
			t.Errorf("waited %s", got)
		}
		mustContain(t, res.Messages[2].Content, "nobody answered the approval prompt within 5m0s")
		drain(t, reg)
		post := rec.of(hooks.PostApprovalResponseHook)
		if len(post) != 1 || !strings.Contains(string(post[0].Payload), `"choice":"timeout"`) {
			t.Errorf("post_approval_response %v", post)
		}
	})
}

func TestHookAsksApproval(t *testing.T) {
	reg := hooks.NewRegistry(nil)
	reg.Subscribe(hooks.Subscription{Name: "ask", Events: []string{hooks.PreToolCallHook}, Handler: func(context.Context, hooks.Event) (any, error) {
		return &hooks.ToolDecision{Action: "approve", Message: "writes are reviewed"}, nil
	}})
	tool := &stubTool{name: "lookup"}
	for _, c := range []Choice{ChoiceDeny, ChoiceOnce} {
		a := newAgent(toolThenText("lookup", map[string]any{}), reg, tool)
		ap := fixedApprover(c)
		a.Run(context.Background(), "x", Options{Approver: ap})
		if ap.asked() != 1 || ap.reqs[0].PatternKey != "hook:lookup" || ap.reqs[0].Description != "writes are reviewed" {
			t.Errorf("%s: %+v", c, ap.reqs)
		}
	}
	if tool.calls() != 1 {
		t.Errorf("tool ran %d times", tool.calls())
	}
	drain(t, reg)
}

func TestTerminalApprover(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Choice
	}{{"y\n", ChoiceOnce}, {"session\n", ChoiceSession}, {"A\n", ChoiceAlways}, {"\n", ChoiceDeny}, {"no\n", ChoiceDeny}, {"", ChoiceDeny}} {
		t.Run(tc.in, func(t *testing.T) {
			var out strings.Builder
			ta := &TerminalApprover{In: strings.NewReader(tc.in), Out: &out}
			got, err := ta.Approve(context.Background(), ApprovalRequest{Command: "rm -rf x", Description: "recursive delete"})
			if err != nil || got != tc.want {
				t.Errorf("got %s %v", got, err)
			}
			mustContain(t, out.String(), "rm -rf x")
			mustContain(t, out.String(), "recursive delete")
		})
	}
	t.Run("timeout keeps the pending read", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		ta := &TerminalApprover{In: pr, Out: io.Discard}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if got, _ := ta.Approve(ctx, ApprovalRequest{}); got != ChoiceTimeout {
			t.Errorf("got %s", got)
		}
		go pw.Write([]byte("y\n"))
		if got, _ := ta.Approve(context.Background(), ApprovalRequest{}); got != ChoiceOnce {
			t.Errorf("got %s", got)
		}
	})
}
