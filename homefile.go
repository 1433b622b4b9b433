package herald

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError is returned by ReadRegularFile for a path that exists but
// is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	kind := "not a regular file"
	switch t := e.Mode.Type(); {
	case t&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO), not a regular file"
	case t&fs.ModeDir != 0:
		kind = "a directory, not a regular file"
	case t&fs.ModeSocket != 0:
		kind = "a socket, not a regular file"
	case t&fs.ModeDevice != 0:
		kind = "a device, not a regular file"
	}
	return fmt.Sprintf("%s is %s; herald reads only regular files (or links to one) there", e.Path, kind)
}

// ReadRegularFile reads a file herald finds in its home (config.yaml,
// .env, BOOT.md, …), following symbolic links, and refuses anything but a
// regular file with a *NotRegularError naming the path. It never waits on
// a named pipe: the file is opened without blocking and checked (fstat on
// the open descriptor, so nothing can be swapped in between) before any
// read. A missing file is an error satisfying errors.Is(err, fs.ErrNotExist).
func ReadRegularFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	return io.ReadAll(f)
}
