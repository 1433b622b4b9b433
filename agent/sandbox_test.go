package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/agent/sandbox"
	"github.com/heraldgw/herald/hooks"
)

// The launcher is this test binary: package sandbox's init turns it into
// the launcher when it is started as one.

// TestTerminalCannotReadGatewayEnviron replays "cat /proc/$PPID/environ":
// with this process non-dumpable (as the gateway makes itself) and the
// launcher's capabilities dropped (root's CAP_SYS_PTRACE among them),
// the command cannot read its parent's environ or memory.
func TestTerminalCannotReadGatewayEnviron(t *testing.T) {
	// read before ProtectSelf, after which a process that is not root
	// may no longer read its own /proc files
	initial := firstEntry(t)
	if err := sandbox.ProtectSelf(); err != nil {
		t.Fatal(err)
	}
	modes := []string{sandbox.None}
	for _, m := range []string{sandbox.Landlock, sandbox.Bubblewrap} {
		if sandbox.Available(m) == nil {
			modes = append(modes, m)
		}
	}
	pid := strconv.Itoa(os.Getpid())
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			// the command's own environment holds none of this process's
			term := &Terminal{Paths: &Paths{Workdir: dir}, Env: []string{"PATH=/usr/bin:/bin"}, Sandbox: &sandbox.Policy{Mode: mode, Writable: []string{dir}}}
			cmd := "echo ppid=$PPID; tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/" + pid + "/environ; head -c 64 /proc/" + pid + "/mem; echo end"
			r := runTerminal(t, term, hooks.NewRegistry(nil), map[string]any{"command": cmd})
			// bubblewrap's PID namespace has no parent to name
			if mode != sandbox.Bubblewrap && !strings.Contains(r.Output, "ppid="+pid) || !strings.Contains(r.Output, "end") {
				t.Fatalf("the command did not run as a child of this process: %q", r.Output)
			}
			// /proc/<pid>/environ is the environment this process
			// started with: any entry of it in the output is a read
			if strings.Contains(r.Output, initial) {
				t.Fatalf("read this process's environ: %q", r.Output)
			}
			if mode != sandbox.Bubblewrap {
				mustContain(t, r.Output, "ermission denied")
			}
		})
	}
}

// firstEntry is the longest entry of this process's /proc environ.
func firstEntry(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Skip(err)
	}
	long := ""
	for _, kv := range strings.Split(string(b), "\x00") {
		if len(kv) > len(long) && !strings.Contains(kv, "\n") {
			long = kv
		}
	}
	return long
}

// TestTerminalSandboxed: under landlock and under bubblewrap the command
// cannot read the home's local.token or .env, nor write outside the
// working directory and the temporary directories; it can do its work in
// the working directory. With "none" it behaves as it did without a
// sandbox.
func TestTerminalSandboxed(t *testing.T) {
	for _, mode := range []string{sandbox.Landlock, sandbox.Bubblewrap} {
		t.Run(mode, func(t *testing.T) {
			if err := sandbox.Available(mode); err != nil {
				t.Skip(err)
			}
			testSandboxed(t, mode)
		})
	}
}

func testSandboxed(t *testing.T, mode string) {
	// herald's home lives outside the temporary directories, as it does
	// on a real machine (~/.herald): landlock cannot grant /tmp while
	// keeping a directory below it shut
	root := outsideTemp(t, "sandbox-test-")
	home, work, outside := filepath.Join(root, "home"), filepath.Join(root, "work"), filepath.Join(root, "outside")
	os.MkdirAll(outside, 0o755)
	os.MkdirAll(home, 0o700)
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(home, "local.token"), []byte("local-token-value-93d1"), 0o600)
	os.WriteFile(filepath.Join(home, ".env"), []byte("OPENAI_API_KEY=env-file-value-77a2\n"), 0o600)
	os.WriteFile(filepath.Join(work, "in.txt"), []byte("workdir-file\n"), 0o644)
	os.Symlink(home, filepath.Join(work, "home-link"))

	run := func(mode, cmd string) terminalResult {
		term := &Terminal{Paths: &Paths{Workdir: work, Home: home}, Sandbox: &sandbox.Policy{Mode: mode, Writable: []string{work}, Hidden: home}}
		return runTerminal(t, term, hooks.NewRegistry(nil), map[string]any{"command": cmd})
	}
	attack := "cat " + home + "/local.token; cat " + home + "/.env; cat home-link/local.token; ls " + home + "; " +
		"echo pwned > " + outside + "/f; mkdir -p " + home + "/hooks/zz; echo x > " + home + "/config.yaml; ln " + home + "/local.token hl; " +
		"for d in /dev/vda /dev/sda /dev/nvme0n1 /dev/xvda /dev/loop0 /dev/zram0; do [ -e $d ] && head -c 4096 $d | wc -c; done; echo done"
	r := run(mode, attack)
	for _, leak := range []string{"local-token-value-93d1", "env-file-value-77a2"} {
		if strings.Contains(r.Output, leak) {
			t.Errorf(mode+": read %s: %q", leak, r.Output)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Error(mode + ": wrote outside the working directory")
	}
	if _, err := os.Stat(filepath.Join(home, "hooks")); err == nil {
		t.Error(mode + ": made a directory in the home")
	}
	if _, err := os.Stat(filepath.Join(work, "hl")); err == nil {
		t.Error(mode + ": hard-linked a file of the home into the working directory")
	}
	mustContain(t, r.Output, "done")
	for _, line := range strings.Split(r.Output, "\n") {
		if strings.TrimSpace(line) == "4096" {
			t.Errorf(mode+": read a disk's raw blocks: %q", r.Output)
		}
	}

	r = run(mode, "cat in.txt && echo made > new.txt && mkdir -p sub/dir && mv new.txt sub/dir/ && echo tmp > "+os.TempDir()+"/herald-sbx-$$ && rm "+os.TempDir()+"/herald-sbx-$$ && ls /usr/bin >/dev/null && echo ok")
	if r.ExitCode != 0 || !strings.Contains(r.Output, "workdir-file") || !strings.Contains(r.Output, "ok") {
		t.Fatalf(mode+": ordinary work failed: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "sub", "dir", "new.txt")); string(b) != "made\n" {
		t.Errorf(mode+": new.txt = %q", b)
	}

	r = run(sandbox.None, "cat "+home+"/local.token; echo pwned > "+outside+"/f")
	if !strings.Contains(r.Output, "local-token-value-93d1") {
		t.Errorf("none: expected no filesystem confinement: %q", r.Output)
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err != nil {
		t.Errorf("none: expected the write outside to happen: %v", err)
	}
}

// TestSandboxHomeInsideWorkdir: a working directory that holds the home
// (workdir ~, home ~/.herald) stays writable around it, and the home
// stays shut.
func TestSandboxHomeInsideWorkdir(t *testing.T) {
	for _, mode := range []string{sandbox.Landlock, sandbox.Bubblewrap} {
		t.Run(mode, func(t *testing.T) {
			if err := sandbox.Available(mode); err != nil {
				t.Skip(err)
			}
			work := outsideTemp(t, "sandbox-work-")
			home := filepath.Join(work, ".herald")
			os.MkdirAll(filepath.Join(work, "src"), 0o755)
			os.MkdirAll(home, 0o700)
			os.WriteFile(filepath.Join(home, "local.token"), []byte("inner-token-value-1b2c"), 0o600)
			term := &Terminal{Paths: &Paths{Workdir: work, Home: home}, Sandbox: &sandbox.Policy{Mode: mode, Writable: []string{work}, Hidden: home}}
			r := runTerminal(t, term, hooks.NewRegistry(nil), map[string]any{"command": "cat .herald/local.token; echo x > .herald/new; echo a > src/a.txt && cat src/a.txt && echo ok"})
			if strings.Contains(r.Output, "inner-token-value-1b2c") {
				t.Errorf("read the home: %q", r.Output)
			}
			if _, err := os.Stat(filepath.Join(home, "new")); err == nil {
				t.Error("wrote into the home")
			}
			if !strings.Contains(r.Output, "ok") {
				t.Errorf("could not work beside the home: %q", r.Output)
			}
		})
	}
}

// TestSandboxedTimeoutKillsGroup: a confined command that outlives its
// timeout is killed with its children, as an unconfined one is.
func TestSandboxedTimeoutKillsGroup(t *testing.T) {
	for _, mode := range []string{sandbox.None, sandbox.Landlock, sandbox.Bubblewrap} {
		t.Run(mode, func(t *testing.T) {
			if err := sandbox.Available(mode); err != nil {
				t.Skip(err)
			}
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pid")
			term := &Terminal{Paths: &Paths{Workdir: dir}, KillGrace: 200 * time.Millisecond, Sandbox: &sandbox.Policy{Mode: mode, Writable: []string{dir}}}
			cmd := fmt.Sprintf(`trap '' TERM; sleep 30 & echo $! > %s; wait; wait`, pidFile)
			r := runTerminal(t, term, hooks.NewRegistry(nil), map[string]any{"command": cmd, "timeout": 1})
			if r.Error == nil || !strings.Contains(*r.Error, "timed out") || r.ExitCode != 124 {
				t.Errorf("result %+v", r)
			}
			if mode == sandbox.Bubblewrap {
				return // its PIDs are those of its own namespace
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Skipf("the command had not started its child within the timeout: %v", err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			waitGone(t, pid)
		})
	}
}

// outsideTemp makes a directory that lies outside every temporary
// directory the sandbox grants (the checkout may itself sit in /tmp): the
// package's directory when it can, else the user's home or cache.
func outsideTemp(t *testing.T, pattern string) string {
	t.Helper()
	var bases []string
	if wd, err := os.Getwd(); err == nil {
		bases = append(bases, wd)
	}
	if h, err := os.UserHomeDir(); err == nil {
		bases = append(bases, h)
	}
	if c, err := os.UserCacheDir(); err == nil {
		bases = append(bases, c)
	}
	temps := []string{"/tmp", "/var/tmp", "/dev/shm", os.TempDir()}
	for _, b := range bases {
		b, _ = filepath.Abs(b)
		inTemp := false
		for _, tmp := range temps {
			if b == tmp || strings.HasPrefix(b, strings.TrimSuffix(tmp, "/")+"/") {
				inTemp = true
			}
		}
		if inTemp {
			continue
		}
		dir, err := os.MkdirTemp(b, pattern)
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	t.Skipf("no writable directory outside the temporary ones among %q", bases)
	return ""
}
