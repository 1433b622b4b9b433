package hooks

// Directory hooks: $HERALD_HOME/hooks/<dir>/HOOK.yaml plus a handler,
// Hermes' gateway-hook format. This file discovers and validates hook
// directories and keeps the registry in step with them (hot reload);
// dir_worker.go runs the handlers.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/shlex"
	"github.com/heraldgw/herald"
	"go.yaml.in/yaml/v3"
)

// DirHook is one hook directory as its HOOK.yaml describes it.
type DirHook struct {
	// Name is HOOK.yaml's name, else the directory's name.
	Name        string
	Description string
	Events      []string
	// Dir is the hook's directory (absolute).
	Dir string
	// Kind is "python" (handler.py under a long-lived worker) or "exec"
	// (an executable run once per event).
	Kind string
	// Argv is the executable and its arguments (Kind "exec"); Handler is
	// handler.py (Kind "python").
	Argv    []string
	Handler string
	// Env are the variables HOOK.yaml asks for under env:, name → value
	// template ("" passes the gateway's value through).
	Env map[string]string
	// Timeout bounds each answer (0: the registry's default, 60 s).
	Timeout time.Duration
	// Typed is the hook's type: an http, prompt or agent hook (Kind is
	// its type) needs no handler.
	Typed TypeSpec
	// Priority orders the hook among an event's attachments (higher
	// first); Matcher is an OpenHarness fnmatch pattern (globSubject);
	// BlockOnFailure makes a failure block on pre_tool_call and
	// pre_llm_call.
	Priority       int
	Matcher        string
	matchRe        *regexp.Regexp
	BlockOnFailure bool
}

// DirDiagnostic is a problem with one hook directory. It never stops the
// gateway: the directory is skipped (or loaded without the bad part).
type DirDiagnostic struct {
	Dir string
	// Msg is the log line, naming the hook.
	Msg string
	// Reason is the problem alone; Line, when not 0, is where in
	// HOOK.yaml it is.
	Reason string
	Line   int
	// Skipped is set when the directory is not loaded at all.
	Skipped bool
}

func (d DirDiagnostic) String() string { return d.Msg }

// Where is the file, and line, the problem is in: "<dir>/HOOK.yaml:3",
// else the directory.
func (d DirDiagnostic) Where() string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d", filepath.Join(d.Dir, "HOOK.yaml"), d.Line)
	}
	return d.Dir
}

// yamlLine splits yaml's "yaml: line 3: did not find …" into the line
// and the rest.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

type manifest struct {
	Name        *string   `yaml:"name"`
	Description string    `yaml:"description"`
	Events      yaml.Node `yaml:"events"`
	Command     yaml.Node `yaml:"command"`
	Env         yaml.Node `yaml:"env"`
	Timeout     yaml.Node `yaml:"timeout"`
}

// DiscoverDir reads every hook directory under root in alphabetical order,
// as Hermes does. A missing root is no error and no hook. Nothing is run.
func DiscoverDir(root string) ([]DirHook, []DirDiagnostic) {
	entries, err := os.ReadDir(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []DirDiagnostic{{Dir: root, Msg: fmt.Sprintf("[hooks] cannot read %s: %v", root, err), Skipped: true}}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var hooks []DirHook
	var diags []DirDiagnostic
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		h, ds, ok := readHookDir(dir)
		diags = append(diags, ds...)
		if ok {
			hooks = append(hooks, h)
		}
	}
	return hooks, diags
}

// ReadHookDir reads one hook directory as the gateway would, running
// nothing: the hook, what is wrong with it, and whether it loads.
func ReadHookDir(dir string) (DirHook, []DirDiagnostic, bool) { return readHookDir(dir) }

// readHookDir reads one hook directory.
func readHookDir(dir string) (DirHook, []DirDiagnostic, bool) {
	h := DirHook{Name: filepath.Base(dir), Dir: dir}
	var diags []DirDiagnostic
	// diag records a problem: the log line is head, the reason, the line
	// in HOOK.yaml if known, then tail.
	diag := func(skipped bool, line int, head, tail, reason string) {
		msg := "[hooks] " + head + reason
		if line > 0 {
			msg += fmt.Sprintf(" (HOOK.yaml line %d)", line)
		}
		diags = append(diags, DirDiagnostic{Dir: dir, Msg: msg + tail, Reason: reason, Line: line, Skipped: skipped})
	}
	skip := func(line int, format string, a ...any) (DirHook, []DirDiagnostic, bool) {
		diag(true, line, "Skipping "+h.Name+": ", "", fmt.Sprintf(format, a...))
		return DirHook{}, diags, false
	}
	b, err := readManifest(filepath.Join(dir, "HOOK.yaml"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return skip(0, "no HOOK.yaml")
		}
		diag(true, 0, "Error loading hook "+h.Name+": ", "", err.Error())
		return DirHook{}, diags, false
	}
	var m manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		if sm := yamlLine.FindStringSubmatch(err.Error()); sm != nil {
			line, _ := strconv.Atoi(sm[1])
			return skip(line, "invalid HOOK.yaml: %s", sm[2])
		}
		return skip(0, "invalid HOOK.yaml: %v", err)
	}
	var probe any
	if yaml.Unmarshal(b, &probe) != nil || probe == nil {
		return skip(0, "invalid HOOK.yaml")
	}
	if _, ok := probe.(map[string]any); !ok {
		return skip(0, "invalid HOOK.yaml (not a mapping)")
	}
	h.Description = m.Description
	if m.Name != nil && strings.TrimSpace(*m.Name) != "" {
		h.Name = strings.TrimSpace(*m.Name)
	}
	events, err := stringList(&m.Events)
	if err != nil {
		return skip(m.Events.Line, "events: %v", err)
	}
	for _, e := range events {
		if e = strings.TrimSpace(e); e != "" {
			// Claude Code's and OpenHarness' names are aliases here too
			h.Events = append(h.Events, CanonicalEvent(e))
		}
	}
	if len(h.Events) == 0 {
		return skip(m.Events.Line, "no events declared")
	}
	if h.Env, err = envSpec(&m.Env); err != nil {
		diag(false, m.Env.Line, h.Name+": ", "; ignored", fmt.Sprintf("env: %v", err))
	}
	if m.Timeout.Kind != 0 {
		d, err := parseTimeout(m.Timeout.Value)
		if err != nil || m.Timeout.Kind != yaml.ScalarNode {
			diag(false, m.Timeout.Line, h.Name+": ", "; using the default", fmt.Sprintf("timeout %q is not a number of seconds or a duration", m.Timeout.Value))
		} else {
			h.Timeout = d
		}
	}

	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) == nil && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		fields := entryFields(doc.Content[0])
		ts, warns, fatal := readTypeFields(fields, "hook")
		if fatal != nil {
			return skip(fatal.Line, "%s", fatal.Msg)
		}
		for _, w := range warns {
			diag(false, w.Line, h.Name+": ", "", w.Msg)
		}
		h.Typed = ts
		if p, prob := readPriority(fields, "hook"); prob != nil {
			diag(false, prob.Line, h.Name+": ", "; using 0", prob.Msg)
		} else {
			h.Priority = p
		}
		if n := fields["matcher"]; n != nil && n.Kind == yaml.ScalarNode && strings.TrimSpace(n.Value) != "" {
			h.Matcher = strings.TrimSpace(n.Value)
			if h.matchRe, err = Fnmatch(h.Matcher); err != nil {
				diag(false, n.Line, h.Name+": ", "; it is compared literally", fmt.Sprintf("matcher %q is not a valid pattern (%v)", h.Matcher, err))
			}
		}
		on, set, _ := readBlockOnFailure(fields)
		if !set {
			on = DefaultBlockOnFailure(ts.Kind())
		}
		h.BlockOnFailure = on
		if n := fields["timeout_seconds"]; n != nil && m.Timeout.Kind == 0 {
			if d, err := parseTimeout(n.Value); err == nil && n.Kind == yaml.ScalarNode {
				h.Timeout = d
			} else {
				diag(false, n.Line, h.Name+": ", "; using the default", fmt.Sprintf("timeout_seconds %q is not a number of seconds", n.Value))
			}
		}
	}
	if k := h.Typed.Kind(); k != TypeCommand {
		if m.Command.Kind != 0 {
			diag(false, m.Command.Line, h.Name+": ", "; ignored", fmt.Sprintf("command: applies to command hooks only (this one is type %s)", k))
		}
		h.Kind = k
		return h, diags, true
	}
	if m.Command.Kind != 0 {
		argv, err := commandArgv(&m.Command)
		if err != nil {
			return skip(m.Command.Line, "command: %v", err)
		}
		if slices.ContainsFunc(argv, func(a string) bool { return strings.Contains(a, "$ARGUMENTS") }) {
			diag(false, m.Command.Line, h.Name+": ", "", "command: $ARGUMENTS is filled in only in config.yaml entries; a directory hook reads the payload on stdin, and gets $ARGUMENTS as written")
		}
		argv[0], err = resolveExecutable(dir, argv[0])
		if err != nil {
			return skip(m.Command.Line, "command: %v", err)
		}
		h.Kind, h.Argv = "exec", argv
		return h, diags, true
	}
	if st, err := os.Stat(filepath.Join(dir, "handler.py")); err == nil && st.Mode().IsRegular() {
		h.Kind, h.Handler = "python", filepath.Join(dir, "handler.py")
		return h, diags, true
	}
	cands, _ := filepath.Glob(filepath.Join(dir, "handler.*"))
	if st, err := os.Stat(filepath.Join(dir, "handler")); err == nil && !st.IsDir() {
		cands = append([]string{filepath.Join(dir, "handler")}, cands...)
	}
	var notExec []string
	for _, c := range cands {
		st, err := os.Stat(c)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		if st.Mode().Perm()&0o111 == 0 {
			notExec = append(notExec, filepath.Base(c))
			continue
		}
		h.Kind, h.Argv = "exec", []string{c}
		return h, diags, true
	}
	if len(notExec) > 0 {
		return skip(0, "%s is not executable (chmod +x it, or name it in HOOK.yaml's command:)", strings.Join(notExec, ", "))
	}
	return skip(0, "no handler.py, no executable handler and no command: in HOOK.yaml")
}

// maxManifest bounds a HOOK.yaml; a real one is a few lines.
const maxManifest = 1 << 20

// readManifest reads a HOOK.yaml that is a regular file of at most
// maxManifest bytes. It is opened without blocking, so a FIFO (or a
// device) in its place is refused instead of stalling every scan.
func readManifest(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &herald.NotRegularError{Path: p, Mode: st.Mode()}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxManifest+1))
	if err == nil && len(b) > maxManifest {
		err = fmt.Errorf("HOOK.yaml is over %d bytes", maxManifest)
	}
	return b, err
}

func stringList(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: each entry must be a string", c.Line)
			}
			out = append(out, c.Value)
		}
		return out, nil
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return nil, nil
		}
		return nil, fmt.Errorf("must be a list (got the string %q; write it as - %s)", n.Value, n.Value)
	}
	return nil, errors.New("must be a list of strings")
}

func commandArgv(n *yaml.Node) ([]string, error) {
	var argv []string
	switch n.Kind {
	case yaml.ScalarNode:
		var err error
		if argv, err = shlex.Split(n.Value); err != nil {
			return nil, fmt.Errorf("cannot be parsed: %v", err)
		}
	case yaml.SequenceNode:
		var err error
		if argv, err = stringList(n); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("must be a string or a list of strings")
	}
	if len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
		return nil, errors.New("empty command")
	}
	return argv, nil
}

// resolveExecutable finds argv[0]: a path is relative to the hook's
// directory; a bare name is a file in that directory if there is one,
// else looked up on PATH.
func resolveExecutable(dir, name string) (string, error) {
	if strings.HasPrefix(name, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			name = filepath.Join(h, name[2:])
		}
	}
	check := func(p string) (string, error) {
		st, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("%s: not found", p)
		}
		if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			return "", fmt.Errorf("%s is not executable", p)
		}
		return p, nil
	}
	switch {
	case filepath.IsAbs(name):
		return check(name)
	case strings.Contains(name, "/"):
		return check(filepath.Join(dir, name))
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
		return check(filepath.Join(dir, name))
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s: not in the hook's directory nor on PATH", name)
	}
	return p, nil
}

func envSpec(n *yaml.Node) (map[string]string, error) {
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.SequenceNode:
		names, err := stringList(n)
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, k := range names {
			if k = strings.TrimSpace(k); k != "" {
				out[k] = ""
			}
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s: value must be a string", k.Value)
			}
			val := v.Value
			if v.Tag == "!!null" {
				val = ""
			}
			out[k.Value] = val
		}
		return out, nil
	}
	return nil, errors.New("must be a list of variable names or a mapping NAME: value")
}

func parseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f <= 0 {
			return 0, errors.New("not positive")
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d <= 0 {
		err = errors.New("not positive")
	}
	return d, err
}

// fingerprint identifies, by name, time, size and mode, the files that
// make a hook (codeFiles: HOOK.yaml, handlers, modules, executables),
// never what a hook writes into its own directory (the seed's example
// keeps its activity.log there).
func fingerprint(dir string) string {
	var b strings.Builder
	files, _ := codeFiles(dir)
	for _, f := range files {
		if st, err := os.Stat(f.abs); err == nil {
			fmt.Fprintf(&b, "%s:%d:%d:%o;", f.rel, st.ModTime().UnixNano(), st.Size(), st.Mode())
		}
	}
	return b.String()
}

// DefaultDirTimeout bounds a directory hook's answer unless its HOOK.yaml
// says timeout:, as for shell hooks.
const DefaultDirTimeout = 60 * time.Second

// DirOptions configure directory hooks.
type DirOptions struct {
	// Root is $HERALD_HOME/hooks.
	Root string
	// Python is the interpreter for handler.py (hooks.python in config);
	// "" looks up python3 on PATH.
	Python string
	// Environ is the environment every hook gets: the gateway's, whole.
	// A directory hook is code the operator installed and approved, as
	// trusted as a Go plugin, and a Hermes handler runs inside the
	// gateway's own process and sees all of it.
	Environ []string
	// Home is the herald home. It is set as HERALD_HOME and, for handlers
	// written for Hermes, HERMES_HOME ("" leaves both as Environ has them).
	Home string
	// WorkDir is the working directory of handler.py workers ("": the
	// gateway's own, which is what an in-process Hermes handler sees).
	WorkDir string
	// Lookup gives the value of a variable a HOOK.yaml names under env:
	// (secrets included: the hook asked for it by name).
	Lookup func(name string) (string, bool)
	// Poll is how often the directory is checked for changes (default
	// 2 s; negative turns hot reload off).
	Poll time.Duration
	// Consent, when set, loads only the hook directories approved with
	// their current contents (the gateway always sets it).
	Consent *DirConsent
	// Backoff bounds the restart delay of a dead Python worker (defaults
	// 500 ms doubling to 30 s).
	MinBackoff, MaxBackoff time.Duration
	Log                    *slog.Logger
	// Redactor masks known secrets in every payload before a hook reads
	// it (nil: credential shapes only).
	Redactor *herald.Redactor
	// Judge is the model behind prompt and agent hooks; without one they
	// do not load.
	Judge Judge
}

// DirHooks keeps the registry subscribed to the hook directories under
// Root, and their workers running.
type DirHooks struct {
	reg *Registry
	o   DirOptions
	log *slog.Logger

	// scan serialises Load, Reload and the poll: it is held across the
	// directory reads, and no turn ever waits on it.
	scan sync.Mutex
	// mu guards loaded, failed and stopped; it is never held across file
	// I/O, a spawn or a log write, so Hooks and Stop are never kept
	// waiting behind a slow directory.
	mu      sync.Mutex
	loaded  map[string]*loadedDir // by directory
	failed  map[string]string     // directory → fingerprint of a skipped one, said once
	stopped bool
	wg      sync.WaitGroup  // workers and drains
	ctx     context.Context // workers' context: ends at Stop, not with the gateway's
	cancel  context.CancelFunc
}

type loadedDir struct {
	hook   DirHook
	fp     string
	unsub  func()
	worker *pyWorker
	done   chan struct{} // closed when its queue is drained and its worker stopped
}

// NewDirHooks prepares directory hooks for reg; nothing is read until
// Load.
func NewDirHooks(reg *Registry, o DirOptions) *DirHooks {
	if o.Poll == 0 {
		o.Poll = 2 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	log := o.Log
	if log == nil {
		log = reg.log
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &DirHooks{reg: reg, o: o, log: log, loaded: map[string]*loadedDir{}, ctx: ctx, cancel: cancel}
}

// Load discovers every hook directory and subscribes it, in alphabetical
// order. Problems are logged, naming the directory; none is an error.
func (d *DirHooks) Load() []DirHook {
	d.sync(true)
	return d.Hooks()
}

// Hooks lists the loaded hooks in alphabetical order of directory.
func (d *DirHooks) Hooks() []DirHook {
	d.mu.Lock()
	defer d.mu.Unlock()
	dirs := make([]string, 0, len(d.loaded))
	for k := range d.loaded {
		dirs = append(dirs, k)
	}
	sort.Strings(dirs)
	out := make([]DirHook, 0, len(dirs))
	for _, k := range dirs {
		out = append(out, d.loaded[k].hook)
	}
	return out
}

// Run polls the hook directories until ctx ends, applying changes: a new,
// edited or removed hook takes effect within one poll interval. It does
// not stop the hooks; Stop does.
func (d *DirHooks) Run(ctx context.Context) error {
	if d.o.Poll < 0 {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(d.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			d.sync(false)
		}
	}
}

// Reload applies what changed on disk now (Run does it every poll).
func (d *DirHooks) Reload() { d.sync(false) }

// dirState is one hook directory as a scan found it: its fingerprint
// and, when it changed, what reading it gave.
type dirState struct {
	dir, fp string
	read    bool // readHookDir ran (the directory is new or changed)
	hook    DirHook
	ok      bool
	python  string // the interpreter, for a handler.py hook
}

// sync brings subscriptions in line with the directories: it reads them
// with no lock held, then applies the changes under d.mu, then logs.
func (d *DirHooks) sync(initial bool) {
	d.scan.Lock()
	defer d.scan.Unlock()
	entries, err := os.ReadDir(d.o.Root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.log.Warn("[hooks] cannot read the hooks directory", "dir", d.o.Root, "err", err)
		return
	}
	d.mu.Lock()
	known := make(map[string]string, len(d.loaded)) // dir → fingerprint, loaded or said-once failed
	for dir, l := range d.loaded {
		known[dir] = l.fp
	}
	for dir, fp := range d.failed {
		if _, ok := known[dir]; !ok && !initial {
			known[dir] = fp
		}
	}
	d.mu.Unlock()
	// An approval given while the gateway runs (or revoked) is a change
	// to every directory: each is looked at again.
	consentStamp := ""
	if d.o.Consent != nil {
		if st, err := os.Stat(d.o.Consent.List.Path); err == nil {
			consentStamp = fmt.Sprintf("consent:%d:%d;", st.ModTime().UnixNano(), st.Size())
		}
	}
	var found []dirState
	for _, e := range entries {
		dir := filepath.Join(d.o.Root, e.Name())
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		ds := dirState{dir: dir, fp: fingerprint(dir) + consentStamp}
		if fp, ok := known[dir]; !ok || fp != ds.fp {
			ds.read = true
			var diags []DirDiagnostic
			ds.hook, diags, ds.ok = readHookDir(dir)
			for _, dg := range diags {
				d.log.Warn(dg.Msg, "dir", dir)
			}
			if ds.ok && ds.hook.Kind == "python" {
				if ds.python, err = d.python(); err != nil {
					d.log.Warn(fmt.Sprintf("[hooks] Skipping %s: %v", ds.hook.Name, err), "hook", ds.hook.Name, "dir", dir)
					ds.ok = false
				}
			}
			if k := ds.hook.Kind; ds.ok && (k == TypePrompt || k == TypeAgent) && d.o.Judge == nil {
				d.log.Warn(fmt.Sprintf("[hooks] Skipping %s: %s hook cannot load: no model to ask (no model endpoint is configured) (%s)", ds.hook.Name, k, filepath.Join(dir, "HOOK.yaml")), "hook", ds.hook.Name, "dir", dir)
				ds.ok = false
			}
			if ds.ok && d.o.Consent != nil {
				v := d.o.Consent.Check(ds.hook)
				switch {
				case !v.OK:
					d.log.Warn(v.Msg, "hook", ds.hook.Name, "dir", dir)
				case v.Msg != "":
					d.log.Info(v.Msg, "hook", ds.hook.Name, "dir", dir)
				}
				ds.ok = v.OK
			}
		}
		found = append(found, ds)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].dir < found[j].dir })
	d.mu.Lock()
	logs := d.applyLocked(found, initial)
	d.mu.Unlock()
	for _, l := range logs {
		l()
	}
}

// applyLocked subscribes, replaces and removes hooks as the scan found
// them; it returns the log lines to write once d.mu is released.
func (d *DirHooks) applyLocked(found []dirState, initial bool) (logs []func()) {
	if d.stopped {
		return nil
	}
	present := make(map[string]bool, len(found))
	for _, ds := range found {
		present[ds.dir] = true
	}
	for dir, l := range d.loaded {
		if !present[dir] {
			logs = append(logs, func() { d.log.Info("[hooks] hook removed", "hook", l.hook.Name, "dir", dir) })
			d.unloadLocked(dir)
		}
	}
	for _, ds := range found {
		if !ds.read {
			continue
		}
		prev, had := d.loaded[ds.dir]
		if had {
			d.unloadLocked(ds.dir)
		}
		if !ds.ok {
			d.markFailed(ds.dir, ds.fp)
			if had {
				name := prev.hook.Name
				logs = append(logs, func() {
					d.log.Info("[hooks] hook removed: its directory no longer holds a hook that loads", "hook", name, "dir", ds.dir)
				})
			}
			continue
		}
		d.loadLocked(ds.hook, ds.fp, ds.python)
		delete(d.failed, ds.dir)
		verb := "Added"
		switch {
		case initial:
			verb = "Loaded"
		case had:
			verb = "Reloaded"
		}
		h := ds.hook
		logs = append(logs, func() {
			d.log.Info(fmt.Sprintf("[hooks] %s hook '%s' for events: %v", verb, h.Name, h.Events), "hook", h.Name, "dir", h.Dir, "kind", h.Kind)
		})
	}
	for dir := range d.failed {
		if !present[dir] {
			delete(d.failed, dir)
		}
	}
	return logs
}

func (d *DirHooks) markFailed(dir, fp string) {
	if d.failed == nil {
		d.failed = map[string]string{}
	}
	d.failed[dir] = fp
}

func (d *DirHooks) loadLocked(h DirHook, fp, python string) {
	if h.Timeout <= 0 {
		h.Timeout = DefaultDirTimeout
	}
	l := &loadedDir{hook: h, fp: fp, done: make(chan struct{})}
	env := d.environ(h)
	var handler Handler
	switch h.Kind {
	case "python":
		l.worker = newPyWorker(h, python, env, d.log, d.o.MinBackoff, d.o.MaxBackoff)
		l.worker.red, l.worker.dir = d.o.Redactor, d.o.WorkDir
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			l.worker.run(d.ctx)
		}()
		handler = l.worker.handle
	case TypeHTTP, TypePrompt, TypeAgent:
		handler = (&typedHook{spec: h.Typed, label: h.Name, timeout: h.Timeout, encode: GatewayEnvelope,
			red: d.o.Redactor, judge: d.o.Judge, lookup: envLookup(env, d.o.Lookup), log: d.log}).handle
	default:
		handler = (&execHook{hook: h, env: env, log: d.log, red: d.o.Redactor}).handle
	}
	drained := make(chan struct{})
	sub := Subscription{
		Name: h.Name, Attach: AttachDir, Events: h.Events, Handler: handler,
		Timeout: h.Timeout, Concurrent: true, Order: filepath.Base(h.Dir),
		OnClosed: func() { close(drained) }, Priority: h.Priority, FailClosed: h.BlockOnFailure,
	}
	if h.Matcher != "" {
		match := func(s string) bool {
			if h.matchRe != nil {
				return h.matchRe.MatchString(s)
			}
			return s == h.Matcher
		}
		// the event name is the subject only of a hook on one event
		one := ""
		if len(h.Events) == 1 {
			one = h.Events[0]
		}
		sub.Accept = globAccept(one, match)
	}
	l.unsub = d.reg.Subscribe(sub)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer close(l.done)
		select {
		case <-drained:
		case <-d.ctx.Done():
		}
		if l.worker != nil {
			l.worker.stop()
		}
	}()
	d.loaded[h.Dir] = l
}

func (d *DirHooks) unloadLocked(dir string) {
	l := d.loaded[dir]
	delete(d.loaded, dir)
	if l != nil && l.unsub != nil {
		l.unsub()
	}
}

// Stop unsubscribes every directory hook, lets each deliver what is
// already queued for it (waiting at most until ctx ends), then stops the
// workers.
func (d *DirHooks) Stop(ctx context.Context) {
	d.mu.Lock()
	d.stopped = true // a scan under way applies nothing
	var waits []chan struct{}
	for dir, l := range d.loaded {
		waits = append(waits, l.done)
		d.unloadLocked(dir)
	}
	d.mu.Unlock()
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
		}
	}
	d.cancel()
	d.wg.Wait()
}

// python finds the interpreter for handler.py hooks.
func (d *DirHooks) python() (string, error) { return FindPython(d.o.Python) }

// FindPython finds the interpreter for handler.py hooks: configured
// (hooks.python in config.yaml) if set, else python3 on PATH.
func FindPython(configured string) (string, error) {
	if configured != "" {
		p, err := exec.LookPath(configured)
		if err != nil {
			return "", fmt.Errorf("hooks.python %q cannot be run: %v", configured, err)
		}
		return p, nil
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		return "", errors.New("handler.py needs Python, and no python3 is on PATH (install it, or set hooks.python in config.yaml)")
	}
	return p, nil
}

// environ is the environment one hook runs with: the gateway's, the
// herald home as HERALD_HOME and HERMES_HOME, then what its HOOK.yaml asks
// for under env:.
func (d *DirHooks) environ(h DirHook) []string {
	env := slices.Clone(d.o.Environ)
	if d.o.Home != "" {
		env = setEnv(env, "HERALD_HOME", d.o.Home)
		env = setEnv(env, "HERMES_HOME", d.o.Home)
	}
	if len(h.Env) == 0 {
		return env
	}
	names := make([]string, 0, len(h.Env))
	for k := range h.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	lookup := func(k string) string {
		if d.o.Lookup != nil {
			if v, ok := d.o.Lookup(k); ok {
				return v
			}
		}
		for _, kv := range env {
			if name, v, ok := strings.Cut(kv, "="); ok && name == k {
				return v
			}
		}
		return ""
	}
	for _, k := range names {
		v := h.Env[k]
		if v == "" {
			v = lookup(k)
		} else {
			v = os.Expand(v, lookup)
		}
		env = setEnv(env, k, v)
	}
	return env
}

// envLookup finds a variable in env, or else through lookup (a header's
// ${VAR}).
func envLookup(env []string, lookup func(string) (string, bool)) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for _, kv := range env {
			if name, v, ok := strings.Cut(kv, "="); ok && name == k {
				return v, true
			}
		}
		if lookup != nil {
			return lookup(k)
		}
		return "", false
	}
}

func setEnv(env []string, k, v string) []string {
	for i, kv := range env {
		if name, _, ok := strings.Cut(kv, "="); ok && name == k {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}
