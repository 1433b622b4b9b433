//go:build !linux

package agent

import (
	"os"
	"path/filepath"
	"syscall"
)

// openBeneath opens root/rel with O_NOFOLLOW on its last component;
// without openat2 a parent directory swapped for a link is not caught.
func openBeneath(root, rel string, flag int) (*os.File, error) {
	return os.OpenFile(filepath.Join(root, rel), flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
}

func mkdirBeneath(root, rel string) error {
	return os.MkdirAll(filepath.Join(root, rel), 0o755)
}
