package cmd_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd"
)

// watchBuf is an output sink that tests can wait on: every write wakes
// the waiters, so nothing polls or sleeps.
type watchBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
	ch chan struct{}
}

func newWatchBuf() *watchBuf { return &watchBuf{ch: make(chan struct{})} }

func (w *watchBuf) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	close(w.ch)
	w.ch = make(chan struct{})
	return n, err
}

func (w *watchBuf) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFor waits until the output contains s (or the bound passes).
func (w *watchBuf) waitFor(t *testing.T, s string, bound time.Duration) {
	t.Helper()
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		ok := strings.Contains(w.b.String(), s)
		ch := w.ch
		w.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("waited %s for %q; output so far:\n%s", bound, s, w.String())
		}
	}
}

func cronEnv(home string, extra map[string]string) func(string) string {
	env := map[string]string{"HERALD_HOME": home, "HOME": home}
	for k, v := range extra {
		env[k] = v
	}
	return func(k string) string { return env[k] }
}

// cronCLI runs one herald command and returns its exit status and output.
func cronCLI(t *testing.T, home string, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), append([]string{"--home", home}, args...),
		cmd.WithStdio(strings.NewReader(""), &out, &errw), cmd.WithGetenv(cronEnv(home, nil)))
	return code, out.String(), errw.String()
}

var createdRE = regexp.MustCompile(`Created job: ([0-9a-f]{12})`)

func mustContain(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}

func TestCronCLI(t *testing.T) {
	home := t.TempDir()
	code, out, _ := cronCLI(t, home, "cron", "list")
	if code != 0 {
		t.Fatalf("list: exit %d", code)
	}
	mustContain(t, "empty list", out, "No scheduled jobs.", "⚠ The gateway is not running, so jobs will not fire. Start it with: herald gateway")

	code, out, errOut := cronCLI(t, home, "cron", "add", "every 30m", "check", "the", "deploy", "log", "--name", "deploy", "--deliver", "telegram")
	if code != 0 {
		t.Fatalf("add: exit %d: %s", code, errOut)
	}
	m := createdRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("add output:\n%s", out)
	}
	deploy := m[1]
	mustContain(t, "add output", out,
		"  "+deploy+" [active]\n",
		"    Name:      deploy\n",
		"    Schedule:  every 30m\n",
		"    Repeat:    0/∞\n",
		"    Deliver:   telegram\n",
		"    Next run:  ")

	code, out, _ = cronCLI(t, home, "cron", "add", "2h", "say hi")
	if code != 0 {
		t.Fatalf("add once: exit %d", code)
	}
	hi := createdRE.FindStringSubmatch(out)[1]
	mustContain(t, "once job", out, "    Name:      say hi\n", "    Schedule:  once in 2h\n", "    Repeat:    0/1\n", "    Deliver:   local\n")

	code, _, errOut = cronCLI(t, home, "cron", "add", "CRON_TZ=", "x")
	if code != 1 || !strings.Contains(errOut, "invalid schedule") {
		t.Fatalf("bad schedule: exit %d, %q", code, errOut)
	}
	code, _, errOut = cronCLI(t, home, "cron", "add", "every 1h")
	if code != 2 || !strings.Contains(errOut, "usage: herald cron add") {
		t.Fatalf("missing prompt: exit %d, %q", code, errOut)
	}

	_, out, _ = cronCLI(t, home, "cron", "list")
	mustContain(t, "list", out, "│                         Scheduled Jobs                                  │", deploy+" [active]", hi+" [active]")
	if strings.Index(out, deploy) > strings.Index(out, hi) {
		t.Fatalf("list is not soonest first:\n%s", out)
	}

	_, out, _ = cronCLI(t, home, "cron", "pause", deploy[:6])
	mustContain(t, "pause", out, "Paused job: "+deploy+" (deploy)")
	_, out, _ = cronCLI(t, home, "cron", "list")
	if strings.Contains(out, deploy) {
		t.Fatalf("a paused job is listed without --all:\n%s", out)
	}
	_, out, _ = cronCLI(t, home, "cron", "list", "--all")
	mustContain(t, "list --all", out, deploy+" [paused]")
	_, out, _ = cronCLI(t, home, "cron", "resume", deploy)
	mustContain(t, "resume", out, "Resumed job: "+deploy+" (deploy), next run: ")

	// no gateway: the job runs here (echo model); delivery is impossible
	code, out, errOut = cronCLI(t, home, "cron", "run", deploy)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	mustContain(t, "run stderr", errOut, "no gateway is running, so the job runs here and nothing can be delivered")
	mustContain(t, "run output", out, "Ran job "+deploy+" (deploy): delivery_failed", "Output saved to: "+filepath.Join(home, "cron", "output", deploy),
		"⚠ Delivery failed: ", "[echo model — offline] check the deploy log")
	_, out, _ = cronCLI(t, home, "cron", "list")
	mustContain(t, "list after run", out, "    Repeat:    1/∞\n", "  delivery_failed\n", "    ⚠ Delivery failed: ")

	code, out, _ = cronCLI(t, home, "cron", "run", hi)
	if code != 0 {
		t.Fatalf("run once: exit %d", code)
	}
	mustContain(t, "run once", out, "Ran job "+hi+" (say hi): ok", "[echo model — offline] say hi")
	files, _ := filepath.Glob(filepath.Join(home, "cron", "output", hi, "*.md"))
	if len(files) != 1 {
		t.Fatalf("outputs: %v", files)
	}
	if b, _ := os.ReadFile(files[0]); !strings.Contains(string(b), "# Cron Job: say hi") || !strings.Contains(string(b), "## Response\n\n[echo model — offline] say hi") {
		t.Fatalf("output file:\n%s", b)
	}
	// its one run used it up
	_, out, _ = cronCLI(t, home, "cron", "list", "--all")
	if strings.Contains(out, hi) {
		t.Fatalf("a used-up once job is still listed:\n%s", out)
	}

	_, out, _ = cronCLI(t, home, "cron", "rm", deploy)
	mustContain(t, "rm", out, "Removed job: "+deploy+" (deploy)")
	code, _, errOut = cronCLI(t, home, "cron", "rm", deploy)
	if code != 1 || !strings.Contains(errOut, "no such cron job") {
		t.Fatalf("rm again: exit %d %q", code, errOut)
	}
}
