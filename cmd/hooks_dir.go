package cmd

// Directory hooks ($HERALD_HOME/hooks/<dir>/HOOK.yaml): loaded and watched
// with the gateway only, as Hermes loads gateway hooks in its gateway and
// not in its CLI; listed by `herald hooks list`.

import (
	"context"
	"fmt"
	"os"
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
			if h.Kind == "exec" {
				what = strings.Join(h.Argv, " ")
			}
			fmt.Fprintf(e.stdout, "  %s — %s\n    events: %s\n    runs: %s\n", h.Name, h.Description, strings.Join(h.Events, ", "), what)
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
					msg := fmt.Sprintf("    ⚠ unknown event %q", ev)
					if s := hooks.Suggest(ev); s != "" {
						msg += fmt.Sprintf(" (did you mean %q?)", s)
					}
					fmt.Fprintln(e.stdout, msg)
				}
			}
		}
	}
	for _, d := range diags {
		fmt.Fprintf(e.stdout, "  ⚠ %s\n", d.Msg)
	}
	return nil
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
