package gateway

import (
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/agent/agenttest"
)

// logSink is a log that tells when it grew.
type logSink struct {
	mu   sync.Mutex
	b    strings.Builder
	grew chan struct{}
}

func newLogSink() *logSink { return &logSink{grew: make(chan struct{}, 1)} }

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	select {
	case l.grew <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lines returns the lines whose message is msg.
func (l *logSink) lines(msg string) []string {
	var out []string
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, " msg="+msg+" ") || strings.Contains(line, ` msg="`+msg+`" `) {
			out = append(out, line)
		}
	}
	return out
}

// waitLines waits until n lines have message msg (a bound for a failing
// test only).
func (l *logSink) waitLines(t *testing.T, msg string, n int) []string {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		if got := l.lines(msg); len(got) >= n {
			return got
		}
		select {
		case <-l.grew:
		case <-deadline.C:
			t.Fatalf("not %d %q lines after 20 s:\n%s", n, msg, l.String())
		}
	}
}

func withLog(l *logSink) harnessOpt {
	return func(c *Config) { c.Log = slog.New(slog.NewTextHandler(l, nil)) }
}

// secretWords is in every message the tests below send: no log line may
// carry it.
const secretWords = "tangerine-4471"

// Each turn leaves one INFO line: platform, chat, session, duration, the
// tools it called, how it ended; never what anyone said.
func TestTurnLogLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := newLogSink()
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, nil, withLog(logs), func(c *Config) { c.Agent.ApprovalMode = agent.ModeOff })
		defer b.stop()
		o := outcome(t, b.send("c1", "u1", "run: echo "+secretWords))
		outcome(t, b.send("c1", "u1", "and "+secretWords))
		synctest.Wait()
		lines := logs.lines("turn")
		if len(lines) != 2 {
			t.Fatalf("%d turn lines, want 2:\n%s", len(lines), logs)
		}
		want := regexp.MustCompile(`level=INFO msg=turn platform=fake chat=c1 session_id=` + regexp.QuoteMeta(o.SessionID) + ` duration=\S+ tools=(\S*) outcome=answered$`)
		for i, tools := range []string{"terminal", `""`} {
			m := want.FindStringSubmatch(lines[i])
			if m == nil || m[1] != tools {
				t.Errorf("turn line %d %q, want tools=%s and %s", i+1, lines[i], tools, want)
			}
		}
		if strings.Contains(logs.String(), secretWords) {
			t.Errorf("a message's text in the log:\n%s", logs)
		}
	})
}

// A turn whose model call fails is one ERROR line with the reason in one
// line (status, URL, the page's gist), not the server's HTML page.
func TestFailedTurnLogLine(t *testing.T) {
	page := agenttest.Reply{Status: 502, ContentType: "text/html",
		Body: "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n"}
	srv := agenttest.New(t, page, page, page, page)
	logs := newLogSink()
	h := newHarness(t, nil, withLog(logs), func(c *Config) {
		c.Agent.Model = agent.NewOpenAI(srv.BaseURL(), "sk-test-0123456789abcdefghij", nil)
		c.Agent.Backoff = func(int) time.Duration { return time.Millisecond }
	})
	r := h.post(msg{User: "u1", Text: "hello " + secretWords})
	if r.text() != ApologyText {
		t.Fatalf("replies %q", r.texts())
	}
	lines := logs.waitLines(t, "turn", 1)
	want := `level=ERROR msg=turn platform=local chat=c1 session_id=` + r.SessionID + ` duration=`
	reason := `outcome=failed err="agent: model call: the model endpoint ` + srv.BaseURL() + `/chat/completions answered 502 Bad Gateway: nginx/1.24.0"`
	if len(lines) != 1 || !strings.Contains(lines[0], want) || !strings.HasSuffix(lines[0], reason) {
		t.Fatalf("turn lines %q, want one with %q … %q", lines, want, reason)
	}
	if s := logs.String(); strings.Contains(s, "<") || strings.Count(s, "502") != 1 || strings.Contains(s, secretWords) {
		t.Errorf("the page, a second report or the message in the log:\n%s", s)
	}
}

// A reply that cannot be delivered is one line (platform, chat, why),
// without the reply's text.
func TestDeliveryFailureLogLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := newLogSink()
		ad := &fakeAdapter{name: "fake", fail: func(int, adapters.Outgoing) error {
			return &adapters.FatalError{Msg: "bot was blocked by the user", Err: errors.New("403 Forbidden")}
		}}
		b := newBubble(t, ad, nil, withLog(logs))
		defer b.stop()
		outcome(t, b.send("c9", "u1", "hi "+secretWords))
		synctest.Wait()
		lines := logs.lines("delivery failed")
		if len(lines) != 1 || !strings.Contains(lines[0], "level=ERROR") || !strings.Contains(lines[0], "platform=fake chat=c9") || !strings.Contains(lines[0], "bot was blocked") {
			t.Fatalf("delivery failure lines %q, want one naming the platform, the chat and why:\n%s", lines, logs)
		}
		if strings.Contains(logs.String(), secretWords) {
			t.Errorf("the reply's text in the log:\n%s", logs)
		}
	})
}
