package sandbox

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// bwrap runs the command under bubblewrap: the whole filesystem
// read-only, the writable and temporary directories read-write, an
// empty tmpfs over the home, and a PID namespace of its own with a fresh
// /proc, so the gateway's process is not there to read.
func (p *Policy) bwrap(shell, command string) (*exec.Cmd, error) {
	bin, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("sandbox: bubblewrap asked for, but %w", err)
	}
	args := []string{"--die-with-parent", "--unshare-pid", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	var rw []string
	for _, w := range append(append([]string{}, p.Writable...), tempDirs()...) {
		if real, err := filepath.EvalSymlinks(w); err == nil && !strings.HasPrefix(real, "/dev/") {
			rw = append(rw, real)
		}
	}
	// parents first, so that a child's bind is not hidden by its parent's
	sort.Strings(rw)
	for _, d := range rw {
		args = append(args, "--bind", d, d)
	}
	if p.Hidden != "" {
		if h, err := filepath.EvalSymlinks(p.Hidden); err == nil {
			args = append(args, "--tmpfs", h, "--remount-ro", h)
		}
	}
	args = append(args, "--cap-drop", "ALL")
	args = append(args, "--", shell, "-c", command)
	return exec.Command(bin, args...), nil
}
