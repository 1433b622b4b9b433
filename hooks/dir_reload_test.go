package hooks

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func subNames(reg *Registry) []string {
	var out []string
	for _, s := range reg.Subscribers() {
		out = append(out, s.Name)
	}
	return out
}

// addHook makes a hook directory elsewhere and renames it into root, so a
// poll sees it whole or not at all.
func addHook(t *testing.T, root, dir string, files map[string]string) string {
	t.Helper()
	made := writeHook(t, t.TempDir(), dir, files)
	if err := os.Rename(made, filepath.Join(root, dir)); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, dir)
}

// replaceFile gives path new content and modification time in one step
// (a rename), so a poll never sees it half written.
func replaceFile(t *testing.T, path, content string, mtime time.Time) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(tmp, mtime, mtime)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A new, edited or removed hook directory takes effect without a
// restart, and each change is logged.
func TestDirHooksHotReload(t *testing.T) {
	root := t.TempDir()
	writeHook(t, root, "b-first", map[string]string{
		"HOOK.yaml": "events: [command:*]\n",
		"handler":   "#!/bin/sh\necho '{\"decision\":\"handled\",\"message\":\"b\"}'\n",
	})
	reg, d, lr := startDir(t, root, DirOptions{Poll: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// added: and placed before b-first, alphabetically
	addHook(t, root, "a-new", map[string]string{
		"HOOK.yaml": "events: [command:*]\n",
		"handler":   "#!/bin/sh\necho '{\"decision\":\"handled\",\"message\":\"a\"}'\n",
	})
	lr.waitLog(t, "Added hook 'a-new'")
	if got := cmdReply(t, reg, "x").Reply; got != "a" {
		t.Fatalf("after add: %q", got)
	}

	// edited: a-new stops listening to commands; it keeps its place
	hy := filepath.Join(root, "a-new", "HOOK.yaml")
	future := time.Now().Add(2 * time.Second)
	replaceFile(t, hy, "events: [agent:start]\n", future)
	lr.waitLog(t, "Reloaded hook 'a-new' for events: [agent:start]")
	if got := cmdReply(t, reg, "x").Reply; got != "b" {
		t.Fatalf("after edit: %q", got)
	}
	future = future.Add(2 * time.Second)
	replaceFile(t, hy, "events: [command:*, agent:start]\n", future)
	lr.waitLog(t, "Reloaded hook 'a-new' for events: [command:* agent:start]")
	if got := cmdReply(t, reg, "x").Reply; got != "a" {
		t.Fatalf("a reloaded hook lost its alphabetical place: %q", got)
	}

	// what a hook writes into its own directory is not an edit
	n := lr.count("Reloaded hook")
	os.WriteFile(filepath.Join(root, "a-new", "activity.log"), []byte("x\n"), 0o644)
	d.Reload()
	if lr.count("Reloaded hook") != n {
		t.Fatal("a log file in the hook's directory reloaded it")
	}

	// removed: renamed away in one step, as os.RemoveAll is not (a poll
	// could see the directory without its HOOK.yaml)
	gone := filepath.Join(t.TempDir(), "a-new")
	if err := os.Rename(filepath.Join(root, "a-new"), gone); err != nil {
		t.Fatal(err)
	}
	lr.waitLog(t, "hook removed", "hook=a-new")
	if got := subNames(reg); !slices.Equal(got, []string{"b-first"}) {
		t.Fatalf("subscribers after remove: %q", got)
	}
	if got := cmdReply(t, reg, "x").Reply; got != "b" {
		t.Fatalf("after remove: %q", got)
	}

	// a broken directory is said once, and loads once fixed
	bad := addHook(t, root, "c-broken", map[string]string{"HOOK.yaml": "events: [command:*]\n"})
	lr.waitLog(t, "Skipping c-broken")
	d.Reload()
	d.Reload()
	if n := lr.count("Skipping c-broken"); n != 1 {
		t.Fatalf("broken directory reported %d times", n)
	}
	os.WriteFile(filepath.Join(bad, "handler"), []byte("#!/bin/sh\n"), 0o755)
	lr.waitLog(t, "Added hook 'c-broken'")
}

// A loaded hook whose directory stops holding a hook (HOOK.yaml deleted,
// a handler gone) is unloaded, and the removal is logged.
func TestDirHooksUnloadLogged(t *testing.T) {
	root := t.TempDir()
	h := writeHook(t, root, "x", map[string]string{
		"HOOK.yaml": "name: guard\nevents: [command:*]\n",
		"handler":   "#!/bin/sh\necho '{\"decision\":\"handled\",\"message\":\"x\"}'\n",
	})
	reg, d, lr := startDir(t, root, DirOptions{})
	os.Remove(filepath.Join(h, "HOOK.yaml"))
	d.Reload()
	if lr.count("Skipping x: no HOOK.yaml") != 1 || lr.count("hook removed", "hook=guard") != 1 {
		t.Fatalf("log:\n%s", lr)
	}
	if got := subNames(reg); len(got) != 0 {
		t.Fatalf("subscribers: %q", got)
	}
}

// blockingLog holds the first record whose message contains match until
// release is closed: a log write that takes its time, as a slow disk or
// a full stderr pipe would.
type blockingLog struct {
	slog.Handler
	match   string
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingLog) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, b.match) {
		b.once.Do(func() { close(b.entered); <-b.release })
	}
	return b.Handler.Handle(ctx, r)
}

// A scan that is slow (here: its log write) keeps nobody waiting: the
// hook list and Stop go ahead, and a scan that ends after Stop applies
// nothing.
func TestDirHooksScanHoldsNoLock(t *testing.T) {
	root := t.TempDir()
	writeHook(t, root, "a", map[string]string{"HOOK.yaml": "events: [command:*]\n", "handler": "#!/bin/sh\necho '{}'\n"})
	bl := &blockingLog{Handler: newLogRecorder(), match: "Skipping b-broken", entered: make(chan struct{}), release: make(chan struct{})}
	_, d, _ := startDir(t, root, DirOptions{Log: slog.New(bl)})
	writeHook(t, root, "b-broken", map[string]string{"HOOK.yaml": "events: [command:*]\n"})
	writeHook(t, root, "c-new", map[string]string{"HOOK.yaml": "events: [command:*]\n", "handler": "#!/bin/sh\necho '{}'\n"})
	scanned := make(chan struct{})
	go func() { defer close(scanned); d.Reload() }()
	<-bl.entered
	returns := func(what string, f func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { defer close(done); f() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			close(bl.release)
			t.Fatalf("%s waited 10 s behind a directory scan", what)
		}
	}
	returns("Hooks", func() {
		if got := d.Hooks(); len(got) != 1 || got[0].Name != "a" {
			t.Errorf("hooks during a scan: %+v", got)
		}
	})
	returns("Stop", func() { d.Stop(context.Background()) })
	close(bl.release)
	<-scanned
	if got := d.Hooks(); len(got) != 0 {
		t.Fatalf("a scan that ended after Stop loaded %+v", got)
	}
}

// A reloaded handler.py gets a fresh worker; the old one is stopped.
func TestDirHooksReloadPython(t *testing.T) {
	needPython(t)
	root := t.TempDir()
	h := writeHook(t, root, "py", map[string]string{
		"HOOK.yaml":  "events: [command:*]\n",
		"handler.py": "def handle(e, c):\n    return {'decision': 'handled', 'message': 'v1'}\n",
	})
	reg, d, lr := startDir(t, root, DirOptions{})
	if got := cmdReply(t, reg, "x").Reply; got != "v1" {
		t.Fatalf("got %q", got)
	}
	d.mu.Lock()
	old := d.loaded[h].worker
	d.mu.Unlock()
	p := filepath.Join(h, "handler.py")
	os.WriteFile(p, []byte("def handle(e, c):\n    return {'decision': 'handled', 'message': 'v2'}\n"), 0o644)
	future := time.Now().Add(2 * time.Second)
	os.Chtimes(p, future, future)
	d.Reload()
	lr.waitLog(t, "Reloaded hook 'py'")
	if got := cmdReply(t, reg, "x").Reply; got != "v2" {
		t.Fatalf("got %q", got)
	}
	waitFor(t, func() bool {
		old.mu.Lock()
		defer old.mu.Unlock()
		return old.proc == nil
	}, "the old worker to stop")
}
