package cmd

// service_systemd.go: the gateway as a systemd user unit (Linux), in
// $XDG_CONFIG_HOME/systemd/user, managed with systemctl --user.

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

type systemdUnit struct {
	unit string // herald-gateway[-<name>-<hash>].service
	dir  string
}

var _ serviceBackend = (*systemdUnit)(nil)

func (u *systemdUnit) kind() string { return "systemd user unit" }
func (u *systemdUnit) name() string { return u.unit }
func (u *systemdUnit) file() string { return filepath.Join(u.dir, u.unit) }
func (u *systemdUnit) tool() string { return "systemctl" }

func (u *systemdUnit) render(s *service) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# herald's gateway for %s, written by `herald gateway install`\n", s.home)
	b.WriteString("# (which rewrites it: edit the home's .env, or install again, instead);\n")
	b.WriteString("# `herald gateway uninstall` removes it.\n")
	b.WriteString("[Unit]\n")
	fmt.Fprintf(&b, "Description=herald chat gateway (%s)\n", systemdEscape(s.home))
	b.WriteString("Documentation=https://github.com/heraldgw/herald/blob/main/docs/cli.md\n")
	b.WriteString("Wants=network-online.target\n")
	b.WriteString("After=network-online.target\n")
	b.WriteString("\n[Service]\n")
	b.WriteString("Type=simple\n")
	fmt.Fprintf(&b, "ExecStart=%s --home %s gateway\n", systemdQuote(s.bin), systemdQuote(s.home))
	// herald reads .env itself too; the unit passes it on so that what
	// it sets (PATH, a proxy) reaches the gateway's environment. "-": a
	// missing file is no error.
	fmt.Fprintf(&b, "EnvironmentFile=-%s\n", systemdEscape(s.envFile))
	if s.path != "" {
		// the PATH herald was installed with, for the tools the agent
		// runs (systemd's own is short); .env may set another
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote("PATH="+s.path))
	}
	b.WriteString("Restart=on-failure\n")
	b.WriteString("RestartSec=5s\n")
	b.WriteString("\n[Install]\n")
	b.WriteString("WantedBy=default.target\n")
	return b.String()
}

func (u *systemdUnit) afterInstall(ctx context.Context, s *service) error {
	if err := s.run(ctx, "--user", "daemon-reload"); err != nil {
		return err
	}
	return s.run(ctx, "--user", "enable", u.unit)
}

func (u *systemdUnit) beforeRemove(ctx context.Context, s *service) error {
	return s.run(ctx, "--user", "disable", "--now", u.unit)
}

func (u *systemdUnit) afterRemove(ctx context.Context, s *service) error {
	return s.run(ctx, "--user", "daemon-reload")
}

func (u *systemdUnit) control(ctx context.Context, s *service, op string) error {
	return s.run(ctx, "--user", op, u.unit)
}

func (u *systemdUnit) status(ctx context.Context, s *service) error {
	// exit status 3 is "not running", which the lines below say too;
	// only a systemctl that could not run at all is worth an error
	err := s.exec(ctx, s.e.stdout, "--user", "status", "--no-pager", "--lines=0", u.unit)
	if _, exited := errors.AsType[*exec.ExitError](err); exited {
		return nil
	}
	return err
}

// systemdEscape escapes what systemd would expand in a unit setting:
// specifiers (%h, %n, …).
func systemdEscape(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// systemdQuote writes one word of a command line (ExecStart=) or one
// assignment (Environment=): as it is when nothing in it is special, else
// double-quoted with C escapes; % and $ are doubled, so that neither a
// specifier nor a variable is expanded.
func systemdQuote(s string) string {
	s = strings.NewReplacer("%", "%%", "$", "$$").Replace(s)
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\;") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}
