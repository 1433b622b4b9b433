package cmd

// service_launchd.go: the gateway as a launchd agent (macOS), a plist in
// ~/Library/LaunchAgents, managed with launchctl in the user's gui domain.
// launchd has no environment file: herald reads the home's .env itself.

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

type launchdAgent struct {
	label string // com.github.heraldgw.herald.gateway[-<name>-<hash>]
	dir   string
	uid   int
}

var _ serviceBackend = (*launchdAgent)(nil)

func (l *launchdAgent) kind() string { return "launchd agent" }
func (l *launchdAgent) name() string { return l.label }
func (l *launchdAgent) file() string { return filepath.Join(l.dir, l.label+".plist") }
func (l *launchdAgent) tool() string { return "launchctl" }

// target is the agent in the user's gui domain, as launchctl names it.
func (l *launchdAgent) target() string { return fmt.Sprintf("gui/%d/%s", l.uid, l.label) }

func (l *launchdAgent) render(s *service) string {
	var b strings.Builder
	str := func(indent, v string) {
		b.WriteString(indent + "<string>")
		xml.EscapeText(&b, []byte(v))
		b.WriteString("</string>\n")
	}
	key := func(indent, k string) { fmt.Fprintf(&b, "%s<key>%s</key>\n", indent, k) }
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
`)
	b.WriteString("<!-- herald's gateway, written by `herald gateway install` (which rewrites it);\n")
	b.WriteString("     `herald gateway uninstall` removes it. herald reads its home's .env itself. -->\n")
	b.WriteString("<plist version=\"1.0\">\n<dict>\n")
	key("\t", "Label")
	str("\t", l.label)
	key("\t", "ProgramArguments")
	b.WriteString("\t<array>\n")
	for _, a := range []string{s.bin, "--home", s.home, "gateway"} {
		str("\t\t", a)
	}
	b.WriteString("\t</array>\n")
	if s.path != "" {
		key("\t", "EnvironmentVariables")
		b.WriteString("\t<dict>\n")
		key("\t\t", "PATH")
		str("\t\t", s.path)
		b.WriteString("\t</dict>\n")
	}
	key("\t", "RunAtLoad")
	b.WriteString("\t<true/>\n")
	// restarted when it fails, as systemd's Restart=on-failure
	key("\t", "KeepAlive")
	b.WriteString("\t<dict>\n")
	key("\t\t", "SuccessfulExit")
	b.WriteString("\t\t<false/>\n")
	b.WriteString("\t</dict>\n")
	key("\t", "ThrottleInterval")
	b.WriteString("\t<integer>5</integer>\n")
	// what the gateway prints before its own log is open
	for _, k := range []string{"StandardOutPath", "StandardErrorPath"} {
		key("\t", k)
		str("\t", filepath.Join(s.home, "logs", "launchd.log"))
	}
	b.WriteString("</dict>\n</plist>\n")
	return b.String()
}

// loaded reports whether launchd has the agent loaded.
func (l *launchdAgent) loaded(ctx context.Context, s *service) bool {
	return s.exec(ctx, io.Discard, "print", l.target()) == nil
}

func (l *launchdAgent) afterInstall(ctx context.Context, s *service) error {
	// a definition loaded before stays until the agent is loaded again
	// (herald gateway restart); at login launchd loads the new one
	return s.run(ctx, "enable", l.target())
}

func (l *launchdAgent) beforeRemove(ctx context.Context, s *service) error {
	if !l.loaded(ctx, s) {
		return nil
	}
	return s.run(ctx, "bootout", l.target())
}

func (l *launchdAgent) afterRemove(ctx context.Context, s *service) error { return nil }

func (l *launchdAgent) control(ctx context.Context, s *service, op string) error {
	domain := fmt.Sprintf("gui/%d", l.uid)
	switch op {
	case "start":
		if l.loaded(ctx, s) {
			return s.run(ctx, "kickstart", l.target())
		}
		return s.run(ctx, "bootstrap", domain, l.file())
	case "stop":
		if !l.loaded(ctx, s) {
			return nil
		}
		return s.run(ctx, "bootout", l.target())
	}
	// restart loads the plist again, so that an install's change applies
	if l.loaded(ctx, s) {
		if err := s.run(ctx, "bootout", l.target()); err != nil {
			return err
		}
	}
	return s.run(ctx, "bootstrap", domain, l.file())
}

func (l *launchdAgent) status(ctx context.Context, s *service) error {
	if !l.loaded(ctx, s) {
		fmt.Fprintln(s.e.stdout, "launchd: not loaded (herald gateway start loads and starts it)")
		return nil
	}
	return s.exec(ctx, s.e.stdout, "print", l.target())
}
