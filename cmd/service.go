package cmd

// service.go: herald gateway install | uninstall | start | stop | restart
// | status — the gateway as a service of the user's own service manager:
// a systemd user unit on Linux, a launchd agent on macOS. The unit runs
// this herald binary (its absolute path) with --home, so that each home
// gets a unit of its own: the default home (~/.herald) is
// herald-gateway.service, another one herald-gateway-<name>-<hash>.service.
// The service manager's programs (systemctl, launchctl) are looked up on
// PATH, so a test can put its own first.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/heraldgw/herald/config"
	"github.com/heraldgw/herald/hooks"
)

// serviceCommands are herald gateway's subcommands; `herald gateway` with
// none (or with flags only) runs the gateway.
var serviceCommands = map[string]func(e *env, ctx context.Context, args []string) error{
	"install":   func(e *env, ctx context.Context, a []string) error { return e.serviceInstall(ctx, a) },
	"uninstall": func(e *env, ctx context.Context, a []string) error { return e.serviceUninstall(ctx, a) },
	"start":     func(e *env, ctx context.Context, a []string) error { return e.serviceControl(ctx, "start", a) },
	"stop":      func(e *env, ctx context.Context, a []string) error { return e.serviceControl(ctx, "stop", a) },
	"restart":   func(e *env, ctx context.Context, a []string) error { return e.serviceControl(ctx, "restart", a) },
	"status":    func(e *env, ctx context.Context, a []string) error { return e.serviceStatus(ctx, a) },
}

// service is the gateway's unit for one home.
type service struct {
	e       *env
	home    string
	bin     string
	envFile string
	path    string // PATH the unit gives the gateway (its tools run with it)
	backend serviceBackend
}

// serviceBackend is one service manager.
type serviceBackend interface {
	// kind names the unit for people: "systemd user unit".
	kind() string
	// name is the unit's name; file is where its definition lives.
	name() string
	file() string
	render(s *service) string
	// tool is the manager's program (systemctl, launchctl).
	tool() string
	// afterInstall loads a new or changed definition; beforeRemove stops
	// and unloads it, afterRemove forgets it.
	afterInstall(ctx context.Context, s *service) error
	beforeRemove(ctx context.Context, s *service) error
	afterRemove(ctx context.Context, s *service) error
	control(ctx context.Context, s *service, op string) error
	// status prints the manager's view of the unit.
	status(ctx context.Context, s *service) error
}

// newService describes the unit of the home herald runs with; bin is the
// binary it runs ("" for this one). The home's configuration is not
// read: a unit can be stopped or removed whatever state it is in.
func (e *env) newService(bin string) (*service, error) {
	home, err := config.Home(e.home, e.getenv)
	if err != nil {
		return nil, err
	}
	s := &service{e: e, home: home, envFile: filepath.Join(home, ".env"), path: e.getenv("PATH")}
	userHome := e.getenv("HOME")
	if userHome == "" {
		if userHome, err = os.UserHomeDir(); err != nil {
			return nil, fmt.Errorf("no home directory to install the service in (set HOME): %w", err)
		}
	}
	defaultHome, _ := config.Home("", func(string) string { return "" })
	suffix := serviceSuffix(home, defaultHome)
	goos := e.goos
	if goos == "" {
		goos = runtime.GOOS
	}
	switch goos {
	case "linux":
		xdg := e.getenv("XDG_CONFIG_HOME")
		if xdg == "" || !filepath.IsAbs(xdg) {
			xdg = filepath.Join(userHome, ".config")
		}
		s.backend = &systemdUnit{unit: "herald-gateway" + suffix + ".service", dir: filepath.Join(xdg, "systemd", "user")}
	case "darwin":
		label := "com.github.heraldgw.herald.gateway" + suffix
		s.backend = &launchdAgent{label: label, dir: filepath.Join(userHome, "Library", "LaunchAgents"), uid: os.Getuid()}
	default:
		return nil, &exitError{code: 1, msg: fmt.Sprintf("herald gateway install knows systemd (Linux) and launchd (macOS), not %s: run `herald --home %s gateway` from your own service manager", goos, shellWord(home))}
	}
	s.bin = bin
	return s, nil
}

// serviceSuffix tells the units of two homes apart: none for the default
// home, else the home's base name and a short hash of its whole path.
func serviceSuffix(home, defaultHome string) string {
	if home == defaultHome {
		return ""
	}
	var slug []byte
	for _, c := range []byte(strings.ToLower(filepath.Base(home))) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			slug = append(slug, c)
		case len(slug) > 0 && slug[len(slug)-1] != '-':
			slug = append(slug, '-')
		}
	}
	name := strings.Trim(string(slug), "-")
	if len(name) > 24 {
		name = strings.Trim(name[:24], "-")
	}
	sum := sha256.Sum256([]byte(home))
	if name == "" {
		return "-" + hex.EncodeToString(sum[:4])
	}
	return "-" + name + "-" + hex.EncodeToString(sum[:4])
}

// executable is this herald's absolute path, refusing a temporary build
// (go run, go test), which would be gone when the service starts.
func executable() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell where this herald binary is (pass --binary): %w", err)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if strings.Contains(p, string(filepath.Separator)+"go-build") {
		return "", &exitError{code: 1, msg: fmt.Sprintf("this herald is a temporary build (%s, from go run or go test) that will be gone when the service starts: build one (go build -o herald ./cmd/herald, or go install github.com/heraldgw/herald/cmd/herald@latest) and install from it, or pass --binary PATH", p)}
	}
	return p, nil
}

// lookTool finds the service manager's program on the PATH herald runs
// with.
func (s *service) lookTool() (string, error) {
	name := s.backend.tool()
	for _, dir := range filepath.SplitList(s.e.getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &exitError{code: 1, msg: fmt.Sprintf("%s is not on PATH, and herald needs it to manage the %s (is this a %s system?)", name, s.backend.kind(), strings.SplitN(s.backend.kind(), " ", 2)[0])}
}

// run runs the service manager's program with args; its output is shown
// only if it fails.
func (s *service) run(ctx context.Context, args ...string) error {
	var buf bytes.Buffer
	if err := s.exec(ctx, &buf, args...); err != nil {
		msg := strings.TrimSpace(buf.String())
		if msg != "" {
			msg = ": " + msg
		}
		return &exitError{code: 1, msg: fmt.Sprintf("%s %s failed (%v)%s", s.backend.tool(), strings.Join(args, " "), err, msg)}
	}
	return nil
}

// exec runs the service manager's program with args, its output to out.
func (s *service) exec(ctx context.Context, out io.Writer, args ...string) error {
	tool, err := s.lookTool()
	if err != nil {
		return err
	}
	c := exec.CommandContext(ctx, tool, args...)
	c.Stdout, c.Stderr = out, out
	return c.Run()
}

// serviceArgs parses the flags of a service subcommand that takes no
// arguments, then describes the home's unit.
func (e *env) serviceArgs(fs *flag.FlagSet, args []string, usage string) (*service, error) {
	if pos, err := parse(fs, args); err != nil {
		return nil, err
	} else if len(pos) > 0 {
		return nil, usagef("usage: %s", usage)
	}
	return e.newService("")
}

func (e *env) serviceInstall(ctx context.Context, args []string) error {
	fs := e.flags("gateway install")
	binFlag := fs.String("binary", "", "the herald binary the service runs (default: this one)")
	if pos, err := parse(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("usage: herald gateway install [--binary PATH]")
	}
	bin := *binFlag
	if bin == "" {
		var err error
		if bin, err = executable(); err != nil {
			return err
		}
	} else if !filepath.IsAbs(bin) {
		abs, err := filepath.Abs(bin)
		if err != nil {
			return err
		}
		bin = abs
	}
	// a configuration that would stop the gateway is refused now, not
	// when the service starts
	if _, err := e.loadConfigWarned(); err != nil {
		return err
	}
	s, err := e.newService(bin)
	if err != nil {
		return err
	}
	if _, err := s.lookTool(); err != nil {
		return err
	}
	createdEnv, err := ensureEnvFile(s.envFile)
	if err != nil {
		return err
	}
	unit := s.backend.render(s)
	path := s.backend.file()
	old, readErr := os.ReadFile(path)
	changed := readErr != nil || string(old) != unit
	if changed {
		if err := writeFileAtomic(path, []byte(unit), 0o644); err != nil {
			return fmt.Errorf("install %s: %w", path, err)
		}
	}
	if err := s.backend.afterInstall(ctx, s); err != nil {
		return err
	}
	w := e.stdout
	switch {
	case readErr != nil:
		fmt.Fprintf(w, "Installed the %s %s\n", s.backend.kind(), s.backend.name())
	case changed:
		fmt.Fprintf(w, "Updated the %s %s\n", s.backend.kind(), s.backend.name())
	default:
		fmt.Fprintf(w, "The %s %s is installed and up to date\n", s.backend.kind(), s.backend.name())
	}
	fmt.Fprintf(w, "  file:     %s\n", path)
	fmt.Fprintf(w, "  runs:     %s --home %s gateway\n", shellWord(s.bin), shellWord(s.home))
	note := ""
	if createdEnv {
		note = " (created, 0600)"
	}
	fmt.Fprintf(w, "  env file: %s%s\n", s.envFile, note)
	fmt.Fprintf(w, "  log:      %s\n", filepath.Join(s.home, "logs", "gateway.log"))
	if runningGateway(s.home) != 0 && changed && readErr == nil {
		fmt.Fprintln(w, "A gateway is running: restart it to apply the change: herald gateway restart")
	} else if runningGateway(s.home) == 0 {
		fmt.Fprintf(w, "It starts when you log in. Start it now with: herald%s gateway start\n", homeFlag(e, s.home))
	}
	if _, ok := s.backend.(*systemdUnit); ok {
		fmt.Fprintln(w, "To keep it running when you are logged out: loginctl enable-linger \"$USER\"")
	}
	return nil
}

// homeFlag is " --home DIR" when herald was told the home that way.
func homeFlag(e *env, home string) string {
	if e.home == "" {
		return ""
	}
	return " --home " + shellWord(home)
}

// shellWord is s as one word a shell reads back as s.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@%=,") == "" {
		return s
	}
	return hooks.ShellQuote(s)
}

func (e *env) serviceUninstall(ctx context.Context, args []string) error {
	s, err := e.serviceArgs(e.flags("gateway uninstall"), args, "herald gateway uninstall")
	if err != nil {
		return err
	}
	path := s.backend.file()
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(e.stdout, "The %s %s is not installed (no %s): nothing to remove\n", s.backend.kind(), s.backend.name(), path)
		return nil
	}
	if err := s.backend.beforeRemove(ctx, s); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := s.backend.afterRemove(ctx, s); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Stopped, disabled and removed the %s %s (%s)\n", s.backend.kind(), s.backend.name(), path)
	fmt.Fprintf(e.stdout, "The home %s and its .env are kept.\n", s.home)
	return nil
}

func (e *env) serviceControl(ctx context.Context, op string, args []string) error {
	s, err := e.serviceArgs(e.flags("gateway "+op), args, "herald gateway "+op)
	if err != nil {
		return err
	}
	if err := s.requireInstalled(op); err != nil {
		return err
	}
	if err := s.backend.control(ctx, s, op); err != nil {
		return err
	}
	past := map[string]string{"start": "Started", "stop": "Stopped", "restart": "Restarted"}[op]
	fmt.Fprintf(e.stdout, "%s %s (herald gateway status shows how it is doing)\n", past, s.backend.name())
	return nil
}

func (s *service) requireInstalled(op string) error {
	if _, err := os.Lstat(s.backend.file()); errors.Is(err, os.ErrNotExist) {
		return &exitError{code: 1, msg: fmt.Sprintf("the %s %s is not installed, so there is nothing to %s: run herald gateway install first", s.backend.kind(), s.backend.name(), op)}
	}
	return nil
}

func (e *env) serviceStatus(ctx context.Context, args []string) error {
	fs := e.flags("gateway status")
	lines := fs.Int("lines", 20, "how many lines of the gateway log to show")
	fs.IntVar(lines, "n", 20, "short for --lines")
	s, err := e.serviceArgs(fs, args, "herald gateway status [--lines N]")
	if err != nil {
		return err
	}
	w := e.stdout
	installed := s.requireInstalled("status") == nil
	if installed {
		fmt.Fprintf(w, "%s %s: %s\n", s.backend.kind(), s.backend.name(), s.backend.file())
		if err := s.backend.status(ctx, s); err != nil {
			fmt.Fprintf(e.stderr, "herald: %v\n", err)
		}
	} else {
		fmt.Fprintf(w, "%s %s: not installed (herald gateway install)\n", s.backend.kind(), s.backend.name())
	}
	pid := runningGateway(s.home)
	switch pid {
	case 0:
		fmt.Fprintf(w, "Gateway: not running on %s\n", s.home)
	case -1:
		fmt.Fprintf(w, "Gateway: running on %s\n", s.home)
	default:
		fmt.Fprintf(w, "Gateway: running on %s (pid %d)\n", s.home, pid)
	}
	logPath := filepath.Join(s.home, "logs", "gateway.log")
	if *lines > 0 {
		fmt.Fprintf(w, "\nLast lines of %s:\n", logPath)
		if err := tailFile(w, logPath, *lines); err != nil {
			return err
		}
	}
	if pid == 0 {
		return &exitError{code: 3} // as systemctl status says "not running"
	}
	return nil
}

// ensureEnvFile creates the home's .env (0600, a commented header) when
// there is none, and reports whether it did.
func ensureEnvFile(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create %s: %w", path, err)
	}
	_, err = io.WriteString(f, envFileHeader)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return true, err
}

const envFileHeader = `# herald's environment: one NAME=value a line. herald reads this file at
# start, and the service manager (herald gateway install) passes it to the
# gateway too. Keep it private (0600): it holds credentials.
#
# OPENAI_API_KEY=...
# TELEGRAM_BOT_TOKEN=...
`

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so that a reader never sees half of it.
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
