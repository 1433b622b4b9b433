package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// Modes (tools.terminal.sandbox).
const (
	Landlock   = "landlock"
	Bubblewrap = "bubblewrap"
	None       = "none"
)

// Modes lists the valid modes, for configuration errors.
var Modes = []string{Landlock, Bubblewrap, None}

// launcherName is argv[0] of a process started as the launcher.
const launcherName = "herald-sandbox"

// Policy is what a confined command may do.
type Policy struct {
	Mode string `json:"mode"`
	// Writable are the directories it may write (and read) below:
	// the working directory and the allowed paths. The temporary
	// directories are added by the launcher.
	Writable []string `json:"writable"`
	// Hidden is herald's home: never read, never written.
	Hidden string `json:"hidden"`
	// Executable is the launcher; empty means this program
	// (/proc/self/exe).
	Executable string `json:"-"`
}

// Available reports whether mode can run on this machine, and if not,
// why.
func Available(mode string) error {
	switch mode {
	case Landlock:
		if v := landlockABI(); v < 1 {
			return errors.New("this kernel does not offer Landlock")
		}
	case Bubblewrap:
		if _, err := exec.LookPath("bwrap"); err != nil {
			return errors.New("bwrap is not installed (Debian: apt-get install bubblewrap)")
		}
	case None:
	default:
		return fmt.Errorf("unknown sandbox %q (want one of %v)", mode, Modes)
	}
	return nil
}

// Default is the mode used when none is configured: landlock where the
// kernel offers it, none otherwise.
func Default() string {
	if Available(Landlock) == nil {
		return Landlock
	}
	return None
}

// Command returns the process that runs shell -c command under p.
func (p *Policy) Command(shell, command string) (*exec.Cmd, error) {
	if p.Mode == Bubblewrap {
		return p.bwrap(shell, command)
	}
	if !launcherSupported {
		if p.Mode != None {
			return nil, fmt.Errorf("sandbox: %s is not available on this system", p.Mode)
		}
		return exec.Command(shell, "-c", command), nil
	}
	self := p.Executable
	if self == "" {
		// this very program, even when its file was replaced or removed
		// since it started (an upgrade)
		self = "/proc/self/exe"
		if _, err := os.Stat(self); err != nil {
			if self, err = os.Executable(); err != nil {
				return nil, fmt.Errorf("sandbox: cannot find herald's own executable to launch the command: %w", err)
			}
		}
	}
	pol, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, string(pol), shell, "-c", command)
	cmd.Args[0] = launcherName
	return cmd, nil
}

// tempDirs are the directories any command may write in.
func tempDirs() []string {
	out := []string{"/tmp", "/var/tmp", "/dev/shm"}
	if t := os.TempDir(); !slices.Contains(out, t) {
		out = append(out, t)
	}
	return out
}

// within reports whether p is root or below it.
func within(p, root string) bool {
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != "../")
}
