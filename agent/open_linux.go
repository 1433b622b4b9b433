//go:build linux

package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openBeneath opens rel under root with no symbolic link followed on the
// way, nor out of root: a link swapped in after the path was checked
// makes the open fail (ELOOP, EXDEV). Kernels without openat2 get
// O_NOFOLLOW on the last component only.
func openBeneath(root, rel string, flag int) (*os.File, error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	how := &unix.OpenHow{
		Flags:   uint64(flag | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flag&os.O_CREATE != 0 {
		how.Mode = 0o644 // openat2 refuses a mode without O_CREAT
	}
	full := filepath.Join(root, rel)
	fd, err := unix.Openat2(dir, rel, how)
	if errors.Is(err, unix.ENOSYS) {
		fd, err = unix.Openat(dir, rel, flag|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0o644)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: full, Err: err}
	}
	// back to blocking reads and writes for a regular file
	unix.SetNonblock(fd, false)
	return os.NewFile(uintptr(fd), full), nil
}

// mkdirBeneath creates the directories of rel under root one at a time,
// never through a symbolic link.
func mkdirBeneath(root, rel string) error {
	if rel == "." || rel == "" {
		return nil
	}
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: root, Err: err}
	}
	cur := root
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, name)
		err := unix.Mkdirat(dir, name, 0o755)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(dir)
			return &os.PathError{Op: "mkdir", Path: cur, Err: err}
		}
		next, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dir)
		if err != nil {
			return &os.PathError{Op: "open", Path: cur, Err: err}
		}
		dir = next
	}
	unix.Close(dir)
	return nil
}
