package hooks

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// logRecorder is a slog handler that keeps every record, for tests that
// check what was logged.
type logRecorder struct {
	mu   sync.Mutex
	recs []string
	ch   chan struct{}
}

func newLogRecorder() *logRecorder { return &logRecorder{ch: make(chan struct{}, 1)} }

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, b.String())
	l.mu.Unlock()
	select {
	case l.ch <- struct{}{}:
	default:
	}
	return nil
}
func (l *logRecorder) WithAttrs(as []slog.Attr) slog.Handler { return &attrHandler{l, as} }
func (l *logRecorder) WithGroup(string) slog.Handler         { return l }

type attrHandler struct {
	l  *logRecorder
	as []slog.Attr
}

func (h *attrHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *attrHandler) Handle(ctx context.Context, r slog.Record) error {
	r.AddAttrs(h.as...)
	return h.l.Handle(ctx, r)
}
func (h *attrHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &attrHandler{h.l, append(append([]slog.Attr(nil), h.as...), as...)}
}
func (h *attrHandler) WithGroup(string) slog.Handler { return h }

func (l *logRecorder) logger() *slog.Logger { return slog.New(l) }

// count returns how many records contain every one of subs.
func (l *logRecorder) count(subs ...string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
outer:
	for _, r := range l.recs {
		for _, s := range subs {
			if !strings.Contains(r, s) {
				continue outer
			}
		}
		n++
	}
	return n
}

func (l *logRecorder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.recs, "\n")
}

// waitLog waits (in real time: hooks are real processes) until a record
// containing every one of subs has been logged.
func (l *logRecorder) waitLog(t *testing.T, subs ...string) {
	t.Helper()
	waitFor(t, func() bool { return l.count(subs...) > 0 }, "log line %q; log:\n%s", subs, l)
}

// waitFor polls cond with a generous bound; used only where real
// processes make real time unavoidable.
func waitFor(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for "+format, args...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// writeHook makes $root/<dir> with the given files (name → content;
// names ending in .sh or named "handler" are made executable).
func writeHook(t testing.TB, root, dir string, files map[string]string) string {
	t.Helper()
	d := filepath.Join(root, dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") || name == "handler" || strings.HasPrefix(body, "#!") {
			mode = 0o755
		}
		p := filepath.Join(d, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func needPython(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is needed for handler.py tests (scripts/test installs it)")
	}
	return p
}

// startDir loads the hooks under root into a new registry.
func startDir(t *testing.T, root string, o DirOptions) (*Registry, *DirHooks, *logRecorder) {
	t.Helper()
	lr := newLogRecorder()
	reg := NewRegistry(lr.logger())
	o.Root = root
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.MinBackoff == 0 {
		o.MinBackoff = 10 * time.Millisecond
		o.MaxBackoff = 40 * time.Millisecond
	}
	if o.Poll == 0 {
		o.Poll = -1
	}
	d := NewDirHooks(reg, o)
	d.Load()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		d.Stop(ctx)
		reg.Close(ctx)
	})
	return reg, d, lr
}

// cmdReply asks command:<name> hooks and returns the combined outcome.
func cmdReply(t *testing.T, reg *Registry, name string) CommandOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return reg.Command(ctx, &Command{Platform: "local", UserID: "u1", Command: name, RawCommand: name})
}
