package cmd

// Directory hooks ($HERALD_HOME/hooks/<dir>/HOOK.yaml): loaded and watched
// with the gateway only, as Hermes loads gateway hooks in its gateway and
// not in its CLI; listed by `herald hooks list`.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/hooks"
	"go.yaml.in/yaml/v3"
)

func init() {
	gatewayHooks = append(gatewayHooks, startDirHooks)
	hookListers = append(hookListers, listDirHooks)
}

func startDirHooks(ctx context.Context, a *app, _ *gatewayParts) (func(), error) {
	d := hooks.NewDirHooks(a.hooks, hooks.DirOptions{
		Root:    filepath.Join(a.home, "hooks"),
		Python:  hooksPython(a.cfg),
		Environ: dirHookEnviron(a),
		Home:    a.home,
		Lookup: func(name string) (string, bool) {
			if v := a.e.getenv(name); v != "" {
				return v, true
			}
			if v, ok := a.cfg.Env[name]; ok {
				return v, true
			}
			v, ok := os.LookupEnv(name)
			return v, ok
		},
		Consent:  &hooks.DirConsent{List: a.dirAllowlist(), AcceptSwitch: a.acceptHooks()},
		Redactor: a.redactor,
		Judge:    a.judge,
		Log:      a.log.With("component", "hooks"),
	})
	d.Load()
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(wctx)
	}()
	return func() {
		cancel()
		<-done
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		d.Stop(sctx)
		scancel()
	}, nil
}

// hooksPython reads hooks.python, a reserved sub-key of the hooks: block
// (the rest of the block is shell hooks).
func hooksPython(cfg *config.Config) string {
	n := cfg.Hooks.Node
	if n == nil || n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "python" && n.Content[i+1].Kind == yaml.ScalarNode {
			return strings.TrimSpace(n.Content[i+1].Value)
		}
	}
	return ""
}

// gatewayEnviron is the gateway's environment as a child would inherit
// it: HERALD_HOME, the process's variables, then .env values not already
// set (the process's win, as config.Load applies them).
func gatewayEnviron(a *app) []string {
	env := append([]string{"HERALD_HOME=" + a.home}, os.Environ()...)
	keys := make([]string, 0, len(a.cfg.Env))
	for k := range a.cfg.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+a.cfg.Env[k])
	}
	return env
}

// hookEnviron is the environment shell hooks run with: the gateway's,
// minus every secret herald knows (scrubEnviron).
func hookEnviron(a *app) []string {
	return scrubEnviron(gatewayEnviron(a), a.cfg.Secrets)
}

// dirHookEnviron is the environment directory hooks run with: the
// gateway's, whole, as a Hermes handler inside the gateway's process sees
// it. They are code the operator installed and approved, trusted as a Go
// plugin is (DirOptions.Home adds HERMES_HOME).
func dirHookEnviron(a *app) []string {
	env := gatewayEnviron(a)
	seen := make(map[string]bool, len(env))
	out := env[:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, kv)
	}
	return out
}

func listDirHooks(ctx context.Context, e *env, a *app) error {
	root := filepath.Join(a.home, "hooks")
	found, diags := hooks.DiscoverDir(root)
	if len(found) == 0 {
		fmt.Fprintf(e.stdout, "No directory hooks in %s.\n", root)
	} else {
		fmt.Fprintf(e.stdout, "Directory hooks in %s (%d):\n", root, len(found))
		list := a.dirAllowlist()
		for _, h := range found {
			what := "handler.py (python worker)"
			switch h.Kind {
			case "exec":
				what = strings.Join(h.Argv, " ")
			case hooks.TypeHTTP:
				what = "POST " + h.Typed.URL
			case hooks.TypePrompt, hooks.TypeAgent:
				what = fmt.Sprintf("%s hook: %q", h.Kind, h.Typed.Prompt)
			}
			fmt.Fprintf(e.stdout, "  %s — %s\n    events: %s\n    runs: %s\n", h.Name, h.Description, strings.Join(h.Events, ", "), what)
			fmt.Fprintf(e.stdout, "    type=%s priority=%d matcher=%q\n", h.Typed.Kind(), h.Priority, h.Matcher)
			switch approved, changed := list.DirApproved(h.Dir); {
			case approved:
				fmt.Fprintln(e.stdout, "    ✓ approved, code unchanged since")
			case changed:
				fmt.Fprintf(e.stdout, "    ✗ changed since it was approved: not loaded (herald hooks allow %s)\n", h.Dir)
			default:
				fmt.Fprintf(e.stdout, "    ✗ not approved: not loaded (herald hooks allow %s)\n", h.Dir)
			}
			for _, ev := range h.Events {
				if !hooks.Known(ev) {
					fmt.Fprintf(e.stdout, "    ⚠ %s\n", unknownEvent(ev))
				}
			}
		}
	}
	for _, d := range diags {
		fmt.Fprintf(e.stdout, "  ⚠ %s\n", d.Msg)
	}
	return nil
}

// unknownEvent says that ev is not in the catalogue, with a suggestion.
func unknownEvent(ev string) string {
	msg := fmt.Sprintf("unknown event %q", ev)
	if s := hooks.Suggest(ev); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

// doctorDirHooks is the directory-hook part of `herald hooks doctor`:
// for each directory under $HERALD_HOME/hooks, its HOOK.yaml (each
// problem with file:line), its events, its handler, Python for a
// handler.py, and its consent. Nothing is run but `python3 --version`.
// It returns the number of issues and whether any hook directory exists.
func doctorDirHooks(ctx context.Context, e *env, a *app) (problems int, any bool) {
	root := filepath.Join(a.home, "hooks")
	entries, err := os.ReadDir(root)
	var dirs []string
	for _, en := range entries {
		if st, err := os.Stat(filepath.Join(root, en.Name())); err == nil && st.IsDir() {
			dirs = append(dirs, filepath.Join(root, en.Name()))
		}
	}
	switch {
	case err != nil && !os.IsNotExist(err):
		fmt.Fprintf(e.stdout, "✗ cannot read %s: %v\n", root, err)
		return 1, true
	case len(dirs) == 0:
		fmt.Fprintf(e.stdout, "No directory hooks in %s.\n", root)
		return 0, false
	}
	fmt.Fprintf(e.stdout, "Directory hooks in %s (%d):\n", root, len(dirs))
	list := a.dirAllowlist()
	py := pythonCheck(ctx, hooksPython(a.cfg))
	for _, dir := range dirs {
		base := filepath.Base(dir)
		h, diags, ok := hooks.ReadHookDir(dir)
		name := base
		if ok && h.Name != base {
			name = h.Name + " (" + base + ")"
		}
		fmt.Fprintf(e.stdout, "%s [directory hook]\n", name)
		for _, d := range diags {
			mark := "⚠"
			if d.Skipped {
				mark = "✗"
			}
			fmt.Fprintf(e.stdout, "  %s %s: %s\n", mark, d.Where(), d.Reason)
			problems++
		}
		if !ok {
			fmt.Fprintln(e.stdout, "  ℹ not loaded, so consent is not checked")
			continue
		}
		fmt.Fprintf(e.stdout, "  ✓ HOOK.yaml: events %s\n", strings.Join(h.Events, ", "))
		for _, ev := range h.Events {
			if !hooks.Known(ev) {
				fmt.Fprintf(e.stdout, "  ⚠ %s\n", unknownEvent(ev))
				problems++
			}
		}
		switch h.Kind {
		case hooks.TypeHTTP:
			fmt.Fprintf(e.stdout, "  ✓ http hook: POST %s (priority %d)\n", h.Typed.URL, h.Priority)
		case hooks.TypePrompt, hooks.TypeAgent:
			if a.judge == nil {
				fmt.Fprintf(e.stdout, "  ✗ %s hook: no model to ask (no model endpoint is configured): not loaded\n", h.Kind)
				problems++
			} else {
				fmt.Fprintf(e.stdout, "  ✓ %s hook (priority %d), a model is there to ask\n", h.Kind, h.Priority)
			}
		case "python":
			fmt.Fprintln(e.stdout, "  ✓ handler.py (python worker)")
			if py.err != nil {
				fmt.Fprintf(e.stdout, "  ✗ %v\n", py.err)
				problems++
			} else {
				fmt.Fprintf(e.stdout, "  ✓ python: %s (%s)\n", py.path, py.version)
			}
		default:
			fmt.Fprintf(e.stdout, "  ✓ executable: %s\n", strings.Join(h.Argv, " "))
		}
		switch approved, changed := list.DirApproved(dir); {
		case approved:
			fmt.Fprintln(e.stdout, "  ✓ approved, code unchanged since approval")
		case changed:
			fmt.Fprintf(e.stdout, "  ✗ changed since it was approved: not loaded; review it, then: herald hooks allow %s\n", base)
			problems++
		default:
			fmt.Fprintf(e.stdout, "  ✗ not approved: not loaded (herald hooks allow %s)\n", base)
			problems++
		}
	}
	return problems, true
}

// pythonFound is the interpreter handler.py hooks would get.
type pythonFound struct {
	path, version string
	err           error
}

// pythonCheck finds the interpreter and runs it once, so that one that
// is on PATH but cannot start (a broken virtualenv) is reported.
func pythonCheck(ctx context.Context, configured string) pythonFound {
	p, err := hooks.FindPython(configured)
	if err != nil {
		return pythonFound{err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "--version").CombinedOutput()
	if err != nil {
		return pythonFound{path: p, err: fmt.Errorf("python %s does not run: %v (%s)", p, err, strings.TrimSpace(string(out)))}
	}
	return pythonFound{path: p, version: strings.TrimSpace(string(out))}
}

// dirAllowlist is the consent file for directory hooks.
func (a *app) dirAllowlist() hooks.Allowlist {
	return hooks.Allowlist{Path: filepath.Join(a.home, hooks.DirAllowlistFile), Log: a.log}
}

// hookDirArg reads the argument of `hooks allow|revoke` as a hook
// directory: the name of one under $HERALD_HOME/hooks, or a path to one.
func (a *app) hookDirArg(arg string) (string, bool) {
	cands := []string{arg, filepath.Join(a.home, "hooks", arg)}
	if !strings.ContainsRune(arg, filepath.Separator) {
		cands[0], cands[1] = cands[1], cands[0] // a bare name is a hook of this home first
	}
	for _, p := range cands {
		if st, err := os.Stat(filepath.Join(p, "HOOK.yaml")); err == nil && !st.IsDir() {
			if abs, err := filepath.Abs(p); err == nil {
				return abs, true
			}
		}
	}
	return "", false
}
