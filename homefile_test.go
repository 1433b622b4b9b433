package herald

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "regular")
	if err := os.WriteFile(regular, []byte("content"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"regular", regular, ""},
		{"link to regular", link, ""},
		{"fifo", fifo, "is a named pipe (FIFO), not a regular file"},
		{"directory", dir, "is a directory, not a regular file"},
		{"device", "/dev/null", "is a device, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ReadRegularFile(tc.path)
			if tc.want == "" {
				if err != nil || string(b) != "content" {
					t.Fatalf("ReadRegularFile = %q, %v", b, err)
				}
				return
			}
			var nr *NotRegularError
			if !errors.As(err, &nr) || !strings.HasPrefix(err.Error(), tc.path+" ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a *NotRegularError naming %s: %s", err, tc.path, tc.want)
			}
		})
	}
	if _, err := ReadRegularFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}
