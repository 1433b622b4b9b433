package cmd

import (
	"context"
	"fmt"
	"strings"
)

// hooksSubcommands are `herald hooks <sub>` handlers that live in their
// own files (test, allow, revoke, doctor).
var hooksSubcommands = map[string]func(ctx context.Context, e *env, args []string) error{}

func (e *env) hooksCmd(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("usage: herald hooks {list|test|allow|revoke|doctor}")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "list", "ls":
		return e.hooksList(ctx, rest)
	}
	if fn, ok := hooksSubcommands[sub]; ok {
		return fn(ctx, e, rest)
	}
	return usagef("unknown hooks command %q (use list, test, allow, revoke or doctor)", sub)
}

// hookListers add sections to `herald hooks list` (directory hooks, shell
// hooks).
var hookListers []func(ctx context.Context, e *env, a *app) error

func (e *env) hooksList(ctx context.Context, args []string) error {
	fs := e.flags("hooks list")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	a, err := e.newApp(appOptions{quiet: true})
	if err != nil {
		return err
	}
	defer a.close()
	if len(a.plugins) == 0 {
		fmt.Fprintln(e.stdout, "No Go plugins compiled into this herald.")
	} else {
		fmt.Fprintf(e.stdout, "Go plugins (%d):\n", len(a.plugins))
		for _, p := range a.plugins {
			fmt.Fprintf(e.stdout, "  %s — %s\n    events: %s\n", p.Name, p.Description, strings.Join(p.Events, ", "))
			if len(p.Commands) > 0 {
				fmt.Fprintf(e.stdout, "    commands: /%s\n", strings.Join(p.Commands, ", /"))
			}
		}
	}
	for _, l := range hookListers {
		if err := l(ctx, e, a); err != nil {
			return err
		}
	}
	return nil
}
