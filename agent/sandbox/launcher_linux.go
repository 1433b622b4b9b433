//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

func init() {
	if filepath.Base(os.Args[0]) == launcherName && len(os.Args) >= 3 {
		err := launch(os.Args[1], os.Args[2:])
		fmt.Fprintf(os.Stderr, "herald sandbox: %v\n", err)
		os.Exit(126)
	}
}

// launch applies the policy to this process and execs argv; it returns
// only on failure.
func launch(policy string, argv []string) error {
	var p Policy
	if err := json.Unmarshal([]byte(policy), &p); err != nil {
		return fmt.Errorf("bad policy: %w", err)
	}
	// capabilities belong to a thread: drop them on the one that execs
	runtime.LockOSThread()
	if err := dropCapabilities(); err != nil {
		return err
	}
	if p.Mode == Landlock {
		if err := restrict(p); err != nil {
			return err
		}
	}
	path := argv[0]
	if !strings.Contains(path, "/") {
		if path, _ = lookPath(path); path == "" {
			return fmt.Errorf("%s: not found", argv[0])
		}
	}
	return syscall.Exec(path, argv, os.Environ())
}

func lookPath(name string) (string, error) {
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("not found")
}

// keptCapabilities are those of a container's root (Docker's default
// set). The rest — among them CAP_SYS_PTRACE (which reads a
// non-dumpable process's memory and environment), CAP_SYS_ADMIN and
// CAP_DAC_READ_SEARCH — are dropped for good.
var keptCapabilities = map[int]bool{
	unix.CAP_CHOWN: true, unix.CAP_DAC_OVERRIDE: true, unix.CAP_FOWNER: true, unix.CAP_FSETID: true,
	unix.CAP_KILL: true, unix.CAP_SETGID: true, unix.CAP_SETUID: true, unix.CAP_SETPCAP: true,
	unix.CAP_NET_BIND_SERVICE: true, unix.CAP_NET_RAW: true, unix.CAP_SYS_CHROOT: true,
	unix.CAP_MKNOD: true, unix.CAP_AUDIT_WRITE: true, unix.CAP_SETFCAP: true,
}

// dropCapabilities removes every capability but keptCapabilities from
// the bounding, inheritable, permitted, effective and ambient sets, so
// that not even root gets them back at exec.
func dropCapabilities() error {
	last := unix.CAP_LAST_CAP
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	for c := 0; c <= last; c++ {
		if keptCapabilities[c] {
			continue
		}
		// EINVAL: a capability this kernel does not know; EPERM: no
		// CAP_SETPCAP, so nothing to drop from the bounding set that
		// an unprivileged process could use
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.EPERM) {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
		i, bit := c/32, uint32(1)<<(c%32)
		data[i].Effective &^= bit
		data[i].Permitted &^= bit
		data[i].Inheritable &^= bit
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

const launcherSupported = true

func landlockABI() int {
	v, err := llsyscall.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// restrict landlocks this process: everything but the hidden directory
// and the device files may be read and executed; the writable and
// temporary directories, and the usual device files, may be written.
func restrict(p Policy) error {
	hidden := ""
	if p.Hidden != "" {
		if h, err := filepath.EvalSymlinks(p.Hidden); err == nil {
			hidden = h
		}
	}
	// read: every top-level directory but /dev, whose disks would give
	// the filesystem away block by block; only the usual devices below
	var rules []landlock.Rule
	top, err := os.ReadDir("/")
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	for _, e := range top {
		if e.Name() == "dev" || e.Type()&os.ModeSymlink != 0 {
			continue
		}
		p := "/" + e.Name()
		if !e.IsDir() {
			rules = append(rules, landlock.ROFiles(p).IgnoreIfMissing())
			continue
		}
		rules = append(rules, except(p, hidden, landlock.RODirs, landlock.ROFiles)...)
	}
	for _, w := range append(append([]string{}, p.Writable...), tempDirs()...) {
		real, err := filepath.EvalSymlinks(w)
		if err != nil {
			continue
		}
		rules = append(rules, except(real, hidden, func(ps ...string) landlock.FSRule {
			return landlock.RWDirs(ps...).WithRefer()
		}, landlock.RWFiles)...)
	}
	rules = append(rules,
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx").WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing(),
	)
	if err := landlock.V7.BestEffort().RestrictPaths(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// except grants dir (with dirRule), or, when hidden lies inside it,
// every entry of dir except the one leading to hidden, recursively.
// Symbolic links are left out: what they point to is granted, or not,
// where it lies.
func except(dir, hidden string, dirRule, fileRule func(...string) landlock.FSRule) []landlock.Rule {
	if hidden == "" || !within(hidden, dir) {
		return []landlock.Rule{dirRule(dir).IgnoreIfMissing()}
	}
	if dir == hidden {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var rules []landlock.Rule
	var dirs, files []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		switch {
		case p == hidden:
		case e.Type()&os.ModeSymlink != 0:
		case within(hidden, p):
			rules = append(rules, except(p, hidden, dirRule, fileRule)...)
		case e.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	if len(dirs) > 0 {
		rules = append(rules, dirRule(dirs...).IgnoreIfMissing())
	}
	if len(files) > 0 {
		rules = append(rules, fileRule(files...).IgnoreIfMissing())
	}
	return rules
}

// ProtectSelf marks this process non-dumpable: no process without
// CAP_SYS_PTRACE — among them every command the launcher starts — may
// read its memory or its /proc/<pid>/environ, where herald's secrets are.
func ProtectSelf() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
