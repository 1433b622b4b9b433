package cmd

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/hooks"
)

// Option changes how Main runs.
type Option func(*env)

// WithPlugins compiles Go plugins into this herald.
func WithPlugins(p ...hooks.Plugin) Option {
	return func(e *env) { e.plugins = append(e.plugins, p...) }
}

// WithStdio replaces standard input, output and error (tests).
func WithStdio(in io.Reader, out, errw io.Writer) Option {
	return func(e *env) { e.stdin, e.stdout, e.stderr = in, out, errw }
}

// WithGetenv replaces the environment lookup (tests).
func WithGetenv(fn func(string) string) Option {
	return func(e *env) { e.getenv = fn }
}

// WithSignals makes Main stop on SIGINT/SIGTERM (a second signal exits at
// once). cmd/herald sets it; tests cancel the context instead.
func WithSignals() Option { return func(e *env) { e.signals = true } }

type env struct {
	plugins []hooks.Plugin
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	getenv  func(string) string
	signals bool
	home    string
	// acceptHooks is --accept-hooks: consent to every configured shell hook.
	acceptHooks bool
	// interactive is set for herald chat on a terminal: consent may be asked.
	interactive bool
	// goos chooses the service manager of herald gateway install
	// (runtime.GOOS when empty; tests set it)
	goos string
	// configWarned is set once the configuration's warnings are printed.
	configWarned bool
}

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// usageHead and usageTail frame the command list in herald's usage text;
// the list itself comes from the command table, so a command added in its
// own file shows up in usage and in shell completion alike.
const usageHead = `herald — a chat gateway for your own assistant bot

Usage:
  herald [--home DIR] <command> [flags]

Commands:
`

const usageTail = `
Every command takes --home DIR (default $HERALD_HOME, else ~/.herald).
`

// command is one of herald's commands.
type command struct {
	name string
	// synopsis is the left column of the usage line, e.g. "chat [-q TEXT]";
	// the name alone when empty
	synopsis string
	summary  string
	// subcommands are offered by shell completion after the name
	subcommands []string
	run         func(ctx context.Context, e *env, args []string) error
}

// commands is the command table, in the order usage lists them. Commands
// in files of their own add themselves with registerCommand from init.
var commands []command

// registerCommand adds c to the command table. A name registered twice is
// a programming error.
func registerCommand(c command) {
	for _, have := range commands {
		if have.name == c.name {
			panic("herald: command registered twice: " + c.name)
		}
	}
	commands = append(commands, c)
}

func init() {
	registerCommand(command{name: "gateway", synopsis: "gateway [<command>]", summary: "run the gateway, or manage it as a service (install, start, status…)",
		subcommands: []string{"install", "uninstall", "start", "stop", "restart", "status"},
		run:         func(ctx context.Context, e *env, a []string) error { return e.gateway(ctx, a) }})
	registerCommand(command{name: "chat", synopsis: "chat [-q TEXT]", summary: "talk to the agent in this terminal",
		run: func(ctx context.Context, e *env, a []string) error { return e.chat(ctx, a) }})
	registerCommand(command{name: "sessions", synopsis: "sessions <command>", summary: "list, show, export, delete and prune stored sessions", subcommands: []string{"list", "show", "export", "delete", "prune"},
		run: func(ctx context.Context, e *env, a []string) error { return e.sessions(ctx, a) }})
	registerCommand(command{name: "hooks", synopsis: "hooks <subcommand>", summary: "list, test, allow, revoke and check hooks",
		subcommands: []string{"list", "test", "allow", "revoke", "doctor"},
		run:         func(ctx context.Context, e *env, a []string) error { return e.hooksCmd(ctx, a) }})
	registerCommand(command{name: "logs", synopsis: "logs [errors]", summary: "show the gateway log (--since 1h, --follow)", subcommands: []string{"errors"},
		run: func(ctx context.Context, e *env, a []string) error { return e.logs(ctx, a) }})
}

// usageOrder puts the everyday commands first in usage; others follow in
// alphabetical order.
var usageOrder = []string{"gateway", "chat", "status", "doctor", "config", "sessions", "hooks", "cron", "boot", "pairing", "logs", "version", "completion"}

// sortedCommands is the command table in usage order.
func sortedCommands() []command {
	rank := func(name string) int {
		if i := slices.Index(usageOrder, name); i >= 0 {
			return i
		}
		return len(usageOrder)
	}
	cs := slices.Clone(commands)
	slices.SortStableFunc(cs, func(a, b command) int {
		if r := cmp.Compare(rank(a.name), rank(b.name)); r != 0 {
			return r
		}
		return strings.Compare(a.name, b.name)
	})
	return cs
}

// usage is herald's usage text, listing every registered command.
func usage() string {
	var b strings.Builder
	b.WriteString(usageHead)
	for _, c := range sortedCommands() {
		syn := c.synopsis
		if syn == "" {
			syn = c.name
		}
		fmt.Fprintf(&b, "  %-20s %s\n", syn, c.summary)
	}
	b.WriteString(usageTail)
	return b.String()
}

// Main runs herald with args (without the program name) and returns the
// exit status.
func Main(ctx context.Context, args []string, opts ...Option) int {
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	for _, o := range opts {
		o(e)
	}
	if e.signals {
		var stop context.CancelFunc
		ctx, stop = signalContext(ctx, e.stderr)
		defer stop()
	}
	err := e.run(ctx, args)
	if err == nil {
		return 0
	}
	var ue *usageError
	var ce *config.Error
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "herald: %s\n\n%s", ue.msg, usage())
		return 2
	case errors.As(err, &ce):
		// every wrong value in config.yaml, not only the first
		if _, joined := err.(interface{ Unwrap() []error }); joined {
			for _, x := range splitErrors(err) {
				fmt.Fprintf(e.stderr, "herald: %s\n", x)
			}
		} else {
			fmt.Fprintf(e.stderr, "herald: %s\n", ce)
		}
		return 2
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.msg != "" {
			fmt.Fprintf(e.stderr, "herald: %s\n", ex.msg)
		}
		return ex.code
	}
	fmt.Fprintf(e.stderr, "herald: %v\n", err)
	return 1
}

// exitError carries a specific exit status.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func signalContext(parent context.Context, errw io.Writer) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		n := 0
		for {
			select {
			case <-ch:
				n++
				if n == 1 {
					fmt.Fprintln(errw, "herald: stopping (press Ctrl-C again to exit at once)")
					cancel()
					continue
				}
				fmt.Fprintln(errw, "herald: exiting now")
				// the running tools' commands are in process groups
				// of their own: the terminal's Ctrl-C does not reach
				// them, and nothing else will end them after this
				agent.KillProcessGroups()
				os.Exit(130)
			case <-parent.Done():
				return
			}
		}
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

func (e *env) run(ctx context.Context, args []string) error {
	// global --home before the command
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "--home" || args[0] == "-home":
			if len(args) < 2 {
				return usagef("--home needs a directory")
			}
			e.home, args = args[1], args[2:]
		case strings.HasPrefix(args[0], "--home="):
			e.home, args = strings.TrimPrefix(args[0], "--home="), args[1:]
		case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
			fmt.Fprint(e.stdout, usage())
			return nil
		case args[0] == "--version":
			args = []string{"version"}
		default:
			return usagef("unknown flag %s", args[0])
		}
	}
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage())
		return &exitError{code: 2}
	}
	name, rest := args[0], args[1:]
	if name == "help" {
		fmt.Fprint(e.stdout, usage())
		return nil
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(ctx, e, rest)
		}
	}
	return usagef("unknown command %q", name)
}

// loadConfigWarned loads the configuration and prints its warnings.
func (e *env) loadConfigWarned() (*config.Config, error) {
	cfg, warns, err := e.loadConfig()
	if err != nil {
		return nil, err
	}
	e.warnConfig(warns)
	return cfg, nil
}

// warnConfig prints the configuration's warnings on stderr, one line
// each, as every command shows them: once per command, however many
// times the command loads the configuration (cron run loads it, then
// builds an app that loads it again).
func (e *env) warnConfig(warns []config.Warning) {
	if e.configWarned {
		return
	}
	e.configWarned = true
	for _, w := range warns {
		fmt.Fprintf(e.stderr, "herald: warning: %s\n", w)
	}
}

// flags returns a FlagSet for a subcommand with --home on it.
func (e *env) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("herald "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.StringVar(&e.home, "home", e.home, "herald home directory")
	return fs
}

// parse parses flags, allowing them after positional arguments too.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
