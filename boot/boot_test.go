package boot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/boot"
	"github.com/heraldgw/herald/hooks"
)

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// messages returns the msg= of every log record.
func (l *logBuf) messages() []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err == nil {
			out = append(out, rec["msg"].(string))
		}
	}
	return out
}

const key = "sk-boot-test-0123456789abcdef"

// setup writes BOOT.md (unless content is "-"), attaches the hook to a
// registry, fires gateway:startup and waits for the checklist.
func setup(t *testing.T, content string, srv *agenttest.Server) (*logBuf, *boot.Hook, *hooks.Registry) {
	t.Helper()
	home := t.TempDir()
	if content != "-" {
		if err := os.WriteFile(filepath.Join(home, "BOOT.md"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logs := &logBuf{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	reg := hooks.NewRegistry(log)
	ag := &agent.Agent{Model: agent.NewOpenAI(srv.BaseURL(), key, nil), Tools: agent.NewTools(), Hooks: reg, ModelName: "test-model", MaxIterations: 90}
	h := boot.New(boot.Config{Home: home, Agent: ag, Log: log})
	unsub := reg.Subscribe(h.Subscription())
	t.Cleanup(func() { unsub(); h.Close() })
	return logs, h, reg
}

func startup(t *testing.T, reg *hooks.Registry, h *boot.Hook) {
	t.Helper()
	reg.Emit(hooks.GatewayStartup, &hooks.Startup{Platforms: []string{"local"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := reg.Close(ctx); err != nil { // the hook has seen the event
		t.Fatal(err)
	}
	h.Wait()
}

func TestBootLogLines(t *testing.T) {
	long := strings.Repeat("é", 150) + strings.Repeat("x", 100)
	tests := []struct {
		name    string
		content string
		reply   agenttest.Reply
		want    []string // log messages, in order
	}{
		{name: "silent", content: "# Startup\nCheck things.\n", reply: agenttest.Reply{Content: "[SILENT]"},
			want: []string{"Running BOOT.md (23 chars)", "boot-md completed (nothing to report)"}},
		{name: "silent with space", content: "check", reply: agenttest.Reply{Content: "\n [SILENT] \n"},
			want: []string{"Running BOOT.md (5 chars)", "boot-md completed (nothing to report)"}},
		// the marker must be the whole reply: one that quotes it reports
		{name: "quoting the marker", content: "check", reply: agenttest.Reply{Content: "All good. [SILENT]"},
			want: []string{"Running BOOT.md (5 chars)", "boot-md completed: All good. [SILENT]"}},
		{name: "report", content: "  naïve check  \n", reply: agenttest.Reply{Content: long},
			want: []string{"Running BOOT.md (11 chars)", "boot-md completed: " + strings.Repeat("é", 150) + strings.Repeat("x", 50)}},
		{name: "model fails", content: "check", reply: agenttest.Reply{Status: http.StatusUnauthorized, Message: "invalid api key"},
			want: []string{"Running BOOT.md (5 chars)", "boot-md agent failed: "}},
		{name: "missing", content: "-", want: nil},
		{name: "blank", content: " \n\t\n", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := agenttest.New(t, tt.reply)
			logs, h, reg := setup(t, tt.content, srv)
			startup(t, reg, h)
			var got []string
			for _, m := range logs.messages() {
				if strings.Contains(m, "BOOT.md") || strings.HasPrefix(m, "boot-md") {
					got = append(got, m)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("log lines %q, want %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) || !strings.HasSuffix(tt.want[i], " ") && got[i] != tt.want[i] {
					t.Fatalf("log line %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
			reqs := srv.Requests()
			if tt.want == nil {
				if len(reqs) != 0 {
					t.Fatalf("%d model requests with no checklist", len(reqs))
				}
				return
			}
			if len(reqs) == 0 {
				t.Fatal("no model request")
			}
			r := reqs[0]
			if r.Authorization != "Bearer "+key || r.Body.Model != "test-model" {
				t.Fatalf("request auth %q model %q", r.Authorization, r.Body.Model)
			}
			p := r.LastMessage().Content
			if !strings.Contains(p, "---\n"+strings.TrimSpace(tt.content)+"\n---") || !strings.Contains(p, "reply with ONLY: [SILENT]") || !strings.HasPrefix(p, "You are running a startup boot checklist.") {
				t.Fatalf("prompt:\n%s", p)
			}
		})
	}
}

func TestBootDoesNotDelayStartup(t *testing.T) {
	release := make(chan struct{})
	srv := agenttest.New(t, agenttest.Reply{Func: func(*agenttest.Request) agenttest.Reply {
		<-release
		return agenttest.Reply{Content: "[SILENT]"}
	}})
	logs, h, reg := setup(t, "check", srv)
	reg.Emit(hooks.GatewayStartup, &hooks.Startup{Platforms: []string{"local"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// the hook has handled gateway:startup while the agent is still waiting
	if err := reg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if m := logs.messages(); len(m) == 0 || m[len(m)-1] != "Running BOOT.md (5 chars)" {
		t.Fatalf("logs: %q", m)
	}
	close(release)
	h.Wait()
	if m := logs.messages(); m[len(m)-1] != "boot-md completed (nothing to report)" {
		t.Fatalf("logs: %q", m)
	}
}

func TestBootMaxIterations(t *testing.T) {
	// a model that calls an unknown tool forever is stopped after 20 steps
	srv := agenttest.New(t)
	srv.Default = agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "c1", Name: "nothing", Args: "{}"}}}
	logs, h, reg := setup(t, "loop", srv)
	startup(t, reg, h)
	if n := len(srv.Requests()); n != 20 {
		t.Fatalf("%d model calls, want 20", n)
	}
	if m := logs.messages(); !strings.HasPrefix(m[len(m)-1], "boot-md agent failed: ") {
		t.Fatalf("logs: %q", m)
	}
}

func TestRunOnce(t *testing.T) {
	srv := agenttest.New(t, agenttest.Reply{Content: "Sent the summary to #ops."})
	_, h, _ := setup(t, "check", srv)
	reply, err := h.RunOnce(context.Background())
	if err != nil || reply != "Sent the summary to #ops." {
		t.Fatalf("RunOnce = %q, %v", reply, err)
	}
	os.Remove(h.Path())
	if _, err := h.RunOnce(context.Background()); err == nil {
		t.Fatal("RunOnce without BOOT.md succeeded")
	}
}
