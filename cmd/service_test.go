package cmd_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/heraldgw/herald/cmd"
)

// fakeTool writes an executable /bin/sh script named name into a new
// directory that records each call's arguments, one line each, in the
// returned log, then runs body.
func fakeTool(t *testing.T, name, body string) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	calls = filepath.Join(dir, "calls.log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + calls + "'\n" + body + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, calls
}

func readCalls(t *testing.T, calls string) []string {
	t.Helper()
	b, err := os.ReadFile(calls)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// serviceEnv is a user's environment for herald gateway install: HOME,
// XDG_CONFIG_HOME and a PATH holding only the fake systemctl, so that the
// real one is never found.
type serviceEnv struct {
	user, xdg, home, bin string
	env                  map[string]string
}

func newServiceEnv(t *testing.T, toolDir string) *serviceEnv {
	user := t.TempDir()
	s := &serviceEnv{user: user, xdg: filepath.Join(user, "xdg"), home: filepath.Join(user, "herald home"), bin: toolDir}
	s.env = map[string]string{"HOME": user, "XDG_CONFIG_HOME": s.xdg, "PATH": toolDir + ":/usr/bin:/bin"}
	return s
}

func (s *serviceEnv) herald(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), append([]string{"--home", s.home}, args...),
		cmd.WithStdio(strings.NewReader(""), &out, &errw), cmd.WithGetenv(func(k string) string { return s.env[k] }))
	return code, out.String(), errw.String()
}

func (s *serviceEnv) norm() *normaliser {
	n := &normaliser{}
	n.add(s.home, "$HERALD_HOME")
	n.add(s.xdg, "$XDG_CONFIG_HOME")
	n.add(s.bin, "$FAKEBIN")
	return n
}

var unitNameRE = regexp.MustCompile(`herald-gateway-herald-home-[0-9a-f]{8}\.service`)

func TestGatewayInstallWritesASystemdUserUnit(t *testing.T) {
	toolDir, calls := fakeTool(t, "systemctl", `case "$2" in status) echo "● unit - herald chat gateway"; echo "     Active: inactive (dead)"; exit 3;; esac`)
	s := newServiceEnv(t, toolDir)
	code, out, errw := s.herald(t, "gateway", "install", "--binary", "/opt/herald/bin/herald")
	if code != 0 {
		t.Fatalf("install: exit %d\n%s%s", code, out, errw)
	}
	unit := unitNameRE.FindString(out)
	if unit == "" {
		t.Fatalf("no unit name derived from the home in:\n%s", out)
	}
	norm := s.norm()
	norm.add(unit, "herald-gateway-herald-home-HASH.service")
	goldenCompare(t, "service/install.golden", norm.apply(out))
	path := filepath.Join(s.xdg, "systemd", "user", unit)
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	goldenCompare(t, "service/herald-gateway.service.golden", norm.apply(string(content)))
	if st, err := os.Stat(filepath.Join(s.home, ".env")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf(".env: %v %v", st, err)
	}
	want := []string{"--user daemon-reload", "--user enable " + unit}
	if got := readCalls(t, calls); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("systemctl calls %q, want %q", got, want)
	}

	// again: the same unit, the same calls, nothing lost
	os.WriteFile(filepath.Join(s.home, ".env"), []byte("OPENAI_BASE_URL=http://127.0.0.1:1\n"), 0o600)
	code, out, errw = s.herald(t, "gateway", "install", "--binary", "/opt/herald/bin/herald")
	if code != 0 || !strings.Contains(out, "is installed and up to date") || strings.Contains(out, "(created, 0600)") {
		t.Fatalf("install again: exit %d\n%s%s", code, out, errw)
	}
	if again, _ := os.ReadFile(path); string(again) != string(content) {
		t.Fatalf("the unit changed:\n%s", again)
	}
	if env, _ := os.ReadFile(filepath.Join(s.home, ".env")); string(env) != "OPENAI_BASE_URL=http://127.0.0.1:1\n" {
		t.Fatalf(".env was rewritten: %q", env)
	}
	if got := readCalls(t, calls); len(got) != 4 || got[2] != want[0] || got[3] != want[1] {
		t.Fatalf("systemctl calls after a second install: %q", got)
	}
	// another binary: the unit is updated
	code, out, _ = s.herald(t, "gateway", "install", "--binary", "/usr/local/bin/herald")
	if code != 0 || !strings.Contains(out, "Updated the systemd user unit") {
		t.Fatalf("install with another binary: %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "ExecStart=/usr/local/bin/herald --home \"") {
		t.Fatalf("unit after update:\n%s", b)
	}

	os.Remove(calls)
	for _, op := range []string{"start", "stop", "restart"} {
		if code, out, errw := s.herald(t, "gateway", op); code != 0 || !strings.Contains(out, unit) {
			t.Fatalf("%s: %d\n%s%s", op, code, out, errw)
		}
	}
	want = []string{"--user start " + unit, "--user stop " + unit, "--user restart " + unit}
	if got := readCalls(t, calls); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("systemctl calls %q, want %q", got, want)
	}

	os.MkdirAll(filepath.Join(s.home, "logs"), 0o700)
	var log strings.Builder
	for i := range 30 {
		log.WriteString("time=2027-01-15T08:00:00.000Z level=INFO msg=line" + strings.Repeat("x", i%3) + " n=" + string(rune('a'+i%26)) + "\n")
	}
	os.WriteFile(filepath.Join(s.home, "logs", "gateway.log"), []byte(log.String()), 0o600)
	code, out, _ = s.herald(t, "gateway", "status", "--lines", "3")
	if code != 3 {
		t.Fatalf("status without a gateway: exit %d, want 3\n%s", code, out)
	}
	goldenCompare(t, "service/status.golden", norm.apply(out))

	os.Remove(calls)
	code, out, errw = s.herald(t, "gateway", "uninstall")
	if code != 0 {
		t.Fatalf("uninstall: %d %s%s", code, out, errw)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the unit is still there: %v", err)
	}
	want = []string{"--user disable --now " + unit, "--user daemon-reload"}
	if got := readCalls(t, calls); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("systemctl calls %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(s.home, ".env")); err != nil {
		t.Fatalf("uninstall removed .env: %v", err)
	}
	os.Remove(calls)
	code, out, _ = s.herald(t, "gateway", "uninstall")
	if code != 0 || !strings.Contains(out, "is not installed") || len(readCalls(t, calls)) != 0 {
		t.Fatalf("uninstall again: %d %q %q", code, out, readCalls(t, calls))
	}
	code, _, errw = s.herald(t, "gateway", "start")
	if code != 1 || !strings.Contains(errw, "is not installed, so there is nothing to start: run herald gateway install first") {
		t.Fatalf("start when not installed: %d %q", code, errw)
	}
}

// Two homes get two units, each running its own home.
func TestGatewayInstallTwoHomes(t *testing.T) {
	toolDir, _ := fakeTool(t, "systemctl", "")
	s := newServiceEnv(t, toolDir)
	other := filepath.Join(s.user, "work", "herald home")
	if code, out, errw := s.herald(t, "gateway", "install", "--binary", "/opt/herald"); code != 0 {
		t.Fatalf("install: %d %s%s", code, out, errw)
	}
	if code, out, errw := s.herald(t, "--home", other, "gateway", "install", "--binary", "/opt/herald"); code != 0 {
		t.Fatalf("install other: %d %s%s", code, out, errw)
	}
	units, _ := filepath.Glob(filepath.Join(s.xdg, "systemd", "user", "herald-gateway-*.service"))
	if len(units) != 2 {
		t.Fatalf("units: %v", units)
	}
	for i, home := range []string{s.home, other} {
		found := false
		for _, u := range units {
			if b, _ := os.ReadFile(u); strings.Contains(string(b), "--home \""+home+"\" gateway") {
				found = true
			}
		}
		if !found {
			t.Errorf("home %d (%s) has no unit", i, home)
		}
	}
}

func TestGatewayInstallRefusals(t *testing.T) {
	// no systemctl on PATH: nothing is written
	s := newServiceEnv(t, t.TempDir())
	s.env["PATH"] = s.bin
	code, _, errw := s.herald(t, "gateway", "install", "--binary", "/opt/herald")
	if code != 1 || !strings.Contains(errw, "systemctl is not on PATH, and herald needs it to manage the systemd user unit") {
		t.Fatalf("no systemctl: %d %q", code, errw)
	}
	if _, err := os.Stat(filepath.Join(s.xdg, "systemd")); !os.IsNotExist(err) {
		t.Fatalf("a unit was written without systemctl: %v", err)
	}

	// status still says what it knows, and why the manager's part is missing
	unitDir := filepath.Join(s.xdg, "systemd", "user")
	os.MkdirAll(unitDir, 0o755)
	units, _ := filepath.Glob(filepath.Join(unitDir, "*"))
	if len(units) != 0 {
		t.Fatalf("units: %v", units)
	}
	name := "herald-gateway" + cmd.ServiceSuffix(s.home, filepath.Join(os.Getenv("HOME"), ".herald")) + ".service"
	os.WriteFile(filepath.Join(unitDir, name), []byte("[Unit]\n"), 0o644)
	code, out, errw := s.herald(t, "gateway", "status")
	if code != 3 || !strings.Contains(errw, "systemctl is not on PATH") || !strings.Contains(out, "Gateway: not running on "+s.home) {
		t.Fatalf("status without systemctl: %d %q %q", code, out, errw)
	}

	// this test binary is a temporary build: installing it is refused
	toolDir, calls := fakeTool(t, "systemctl", "")
	s = newServiceEnv(t, toolDir)
	code, _, errw = s.herald(t, "gateway", "install")
	if code != 1 || !strings.Contains(errw, "is a temporary build") || !strings.Contains(errw, "--binary PATH") {
		t.Fatalf("temporary build: %d %q", code, errw)
	}
	if len(readCalls(t, calls)) != 0 {
		t.Fatalf("systemctl called: %q", readCalls(t, calls))
	}

	// systemctl fails: its message is shown
	toolDir, _ = fakeTool(t, "systemctl", `echo "Failed to connect to bus: No medium found" >&2; exit 1`)
	s = newServiceEnv(t, toolDir)
	code, _, errw = s.herald(t, "gateway", "install", "--binary", "/opt/herald")
	if code != 1 || !strings.Contains(errw, "systemctl --user daemon-reload failed (exit status 1): Failed to connect to bus: No medium found") {
		t.Fatalf("systemctl failing: %d %q", code, errw)
	}

	// a configuration the gateway would stop on is refused at install
	toolDir, calls = fakeTool(t, "systemctl", "")
	s = newServiceEnv(t, toolDir)
	os.MkdirAll(s.home, 0o700)
	os.WriteFile(filepath.Join(s.home, "config.yaml"), []byte("model: [\n"), 0o600)
	code, _, errw = s.herald(t, "gateway", "install", "--binary", "/opt/herald")
	if code != 2 || !strings.Contains(errw, "config.yaml") {
		t.Fatalf("bad config: %d %q", code, errw)
	}
	if _, err := os.Stat(filepath.Join(s.xdg, "systemd")); !os.IsNotExist(err) || len(readCalls(t, calls)) != 0 {
		t.Fatalf("installed with a bad config: %v %q", err, readCalls(t, calls))
	}

	code, _, errw = s.herald(t, "gateway", "instal")
	if code != 2 || !strings.Contains(errw, `unknown gateway command "instal"`) {
		t.Fatalf("a typo: %d %q", code, errw)
	}
}

func TestGatewayInstallWritesALaunchdAgent(t *testing.T) {
	toolDir, calls := fakeTool(t, "launchctl", `case "$1" in print) exit 113;; esac`)
	s := newServiceEnv(t, toolDir)
	run := func(args ...string) (int, string, string) {
		var out, errw bytes.Buffer
		code := cmd.Main(context.Background(), append([]string{"--home", s.home}, args...), cmd.WithGOOS("darwin"),
			cmd.WithStdio(strings.NewReader(""), &out, &errw), cmd.WithGetenv(func(k string) string { return s.env[k] }))
		return code, out.String(), errw.String()
	}
	code, out, errw := run("gateway", "install", "--binary", "/opt/herald & co/herald")
	if code != 0 {
		t.Fatalf("install: %d\n%s%s", code, out, errw)
	}
	plists, _ := filepath.Glob(filepath.Join(s.user, "Library", "LaunchAgents", "com.github.heraldgw.herald.gateway-herald-home-*.plist"))
	if len(plists) != 1 {
		t.Fatalf("plists: %v\n%s", plists, out)
	}
	label := strings.TrimSuffix(filepath.Base(plists[0]), ".plist")
	norm := s.norm()
	norm.add(s.user, "$HOME")
	norm.add(label, "com.github.heraldgw.herald.gateway-herald-home-HASH")
	uid := strconv.Itoa(os.Getuid())
	norm.add("gui/"+uid, "gui/UID")
	b, _ := os.ReadFile(plists[0])
	goldenCompare(t, "service/launchd.plist.golden", norm.apply(string(b)))
	for _, op := range []string{"start", "stop", "restart", "uninstall"} {
		if code, out, errw := run("gateway", op); code != 0 {
			t.Fatalf("%s: %d\n%s%s", op, code, out, errw)
		}
	}
	goldenCompare(t, "service/launchctl-calls.golden", norm.apply(strings.Join(readCalls(t, calls), "\n")+"\n"))
	if _, err := os.Stat(plists[0]); !os.IsNotExist(err) {
		t.Fatalf("the plist is still there: %v", err)
	}
}

func TestServiceNames(t *testing.T) {
	if got := cmd.ServiceSuffix("/home/ada/.herald", "/home/ada/.herald"); got != "" {
		t.Errorf("default home: %q", got)
	}
	a := cmd.ServiceSuffix("/srv/bots/Work Bot", "/home/ada/.herald")
	b := cmd.ServiceSuffix("/home/ada/Work Bot", "/home/ada/.herald")
	if !regexp.MustCompile(`^-work-bot-[0-9a-f]{8}$`).MatchString(a) || a == b {
		t.Errorf("suffixes %q and %q", a, b)
	}
	if got := cmd.ServiceSuffix("/srv/ééé", "/x"); !regexp.MustCompile(`^-[0-9a-f]{8}$`).MatchString(got) {
		t.Errorf("a home with no ASCII in its name: %q", got)
	}
	for in, want := range map[string]string{
		"/usr/local/bin/herald": "/usr/local/bin/herald",
		"/home/ada/my bots":     `"/home/ada/my bots"`,
		`/a"b\c`:                `"/a\"b\\c"`,
		"/50%/$HOME":            "/50%%/$$HOME",
		"PATH=/a b:/c":          `"PATH=/a b:/c"`,
	} {
		if got := cmd.SystemdQuote(in); got != want {
			t.Errorf("systemdQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
