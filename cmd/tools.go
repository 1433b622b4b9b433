package cmd

// The agent's built-in tools, registered from the configuration: the
// terminal, the file tools confined to agent.workdir (and
// agent.allowed_paths, never $HERALD_HOME), send_message bound to the
// running gateway, and delegate_task. Tools from other packages (cron's)
// are added by their own files.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/agent/sandbox"
	"github.com/heraldgw/herald/config"
)

func init() {
	gatewayHooks = append(gatewayHooks, bindSendMessage)
}

// builtinToolNames are the names agent.disabled_tools may list.
var builtinToolNames = []string{"terminal", "read_file", "write_file", "patch", "send_message", "send_file", "delegate_task"}

// registerTools adds the built-in tools to a.agent.Tools. A workdir that
// does not exist is an error naming agent.workdir.
func registerTools(a *app) error {
	c := a.cfg.Agent
	wd, err := toolDir(c.Workdir)
	if err != nil {
		return fmt.Errorf("agent.workdir: %w", err)
	}
	if fi, err := os.Stat(wd); err != nil || !fi.IsDir() {
		return fmt.Errorf("agent.workdir: %s is not a directory", wd)
	}
	var allowed []string
	for _, p := range c.AllowedPaths {
		d, err := toolDir(p)
		if err != nil {
			return fmt.Errorf("agent.allowed_paths: %w", err)
		}
		allowed = append(allowed, d)
	}
	paths := &agent.Paths{Workdir: wd, Allowed: allowed, Home: a.home}
	a.agent.Workdir = wd
	var sendDirs []string
	for _, p := range a.cfg.Tools.SendFile.AllowedDirs {
		d, err := toolDir(p)
		if err != nil {
			return fmt.Errorf("tools.send_file.allowed_dirs: %w", err)
		}
		sendDirs = append(sendDirs, d)
	}
	// files may be sent from the working directory, the media cache and
	// tools.send_file.allowed_dirs
	a.sendPaths = &agent.Paths{Workdir: wd, Allowed: sendDirs, Home: a.home}
	policy, err := terminalSandbox(a, append([]string{wd}, allowed...))
	if err != nil {
		return err
	}
	tools := []agent.Tool{
		&agent.Terminal{Paths: paths, Timeout: c.ToolTimeout.D(), Env: scrubEnviron(os.Environ(), a.cfg.Secrets), Sandbox: policy},
		&agent.ReadFile{Paths: paths},
		&agent.WriteFile{Paths: paths},
		&agent.Patch{Paths: paths},
		&agent.SendMessage{},
		&agent.SendFile{Paths: a.sendPaths},
		&agent.Delegate{Agent: a.agent},
	}
	off := map[string]bool{}
	for _, n := range c.DisabledTools {
		off[n] = true
		if !toolNamed(builtinToolNames, n) {
			msg := fmt.Sprintf("agent.disabled_tools: %q is not a built-in tool", n)
			if s := herald.Closest(n, builtinToolNames); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			a.log.Warn(msg)
		}
	}
	for _, t := range tools {
		if !off[t.Name()] {
			a.agent.Tools.Add(t)
		}
	}
	return nil
}

// terminalSandbox is the terminal tool's confinement
// (tools.terminal.sandbox): the working directory and the allowed paths
// writable, the home hidden. A mode asked for and not available here is
// an error; when the tool runs without a sandbox, a.sandboxWarning says
// so for the gateway to log.
func terminalSandbox(a *app, writable []string) (*sandbox.Policy, error) {
	mode := a.cfg.Tools.Terminal.Sandbox
	switch {
	case mode == "":
		mode = sandbox.Default()
		if mode == sandbox.None {
			a.sandboxWarning = "the terminal tool runs without a sandbox: this kernel does not offer Landlock, so commands the model runs can read and write everything herald's user can, herald's home (tokens, config, hooks) included. Install bubblewrap and set tools.terminal.sandbox: bubblewrap to confine them."
		}
	case mode == sandbox.None:
		a.sandboxWarning = "tools.terminal.sandbox is none: commands the model runs can read and write everything herald's user can, herald's home (tokens, config, hooks) included."
	default:
		if err := sandbox.Available(mode); err != nil {
			return nil, fmt.Errorf("tools.terminal.sandbox: %s: %w", mode, err)
		}
	}
	return &sandbox.Policy{Mode: mode, Writable: writable, Hidden: a.home}, nil
}

// toolDir makes a configured directory absolute ("" is the current
// directory, "~/" the user's home).
func toolDir(p string) (string, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return os.Getwd()
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(h, strings.TrimPrefix(p, "~"))
	}
	return filepath.Abs(p)
}

// scrubEnviron is the environment of every process herald starts on
// someone else's behalf (hooks, the terminal tool): environ without the
// variables whose name looks like a credential (config.IsSecretName) or
// is one herald knows, nor those whose value is a secret herald knows,
// under any name. The first of two variables of one name wins.
func scrubEnviron(environ []string, secrets map[string]string) []string {
	vals := map[string]bool{}
	for _, v := range secrets {
		if len(v) >= 6 {
			vals[v] = true
		}
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		_, known := secrets[k]
		if k == "" || seen[k] || known || config.IsSecretName(k) || vals[v] {
			continue
		}
		seen[k] = true
		out = append(out, kv)
	}
	return out
}

// bindSendMessage hands the running gateway to send_message: it delivers
// through the Runner and lists the Runner's platforms.
func bindSendMessage(ctx context.Context, a *app, g *gatewayParts) (func(), error) {
	t, ok := a.agent.Tools.Get("send_message")
	if !ok || g.runner == nil {
		return nil, nil
	}
	sm, ok := t.(*agent.SendMessage)
	if !ok {
		return nil, nil
	}
	sm.Bind(g.runner, g.runner.Platforms)
	return func() { sm.Bind(nil, nil) }, nil
}

func toolNamed(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
