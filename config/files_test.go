package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loadWatching runs Load on home and reports whether it opened fifo for
// reading (a blocking read): a writer that opens the FIFO without
// blocking succeeds only once a reader is there, and closing it releases
// that reader with end-of-file, so a failing test still ends.
func loadWatching(t *testing.T, home, fifo string) (err error, blocked bool) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, _, err := Load(home, func(string) string { return "" })
		done <- err
	}()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err, blocked
		case <-tick.C:
			if fifo == "" {
				continue
			}
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				blocked = true
				w.Close()
			}
		}
	}
}

// A named pipe, a directory or a device where herald expects config.yaml
// or .env is refused with an error naming the path, and never opened for
// a blocking read (a FIFO would hold start-up until something wrote to it,
// and the first SIGTERM with it).
func TestNonRegularFilesAreRefused(t *testing.T) {
	for _, name := range []string{"config.yaml", ".env"} {
		for _, kind := range []string{"fifo", "directory", "device"} {
			t.Run(name+" "+kind, func(t *testing.T) {
				home := t.TempDir()
				p := filepath.Join(home, name)
				fifo := ""
				switch kind {
				case "fifo":
					if err := syscall.Mkfifo(p, 0o600); err != nil {
						t.Skipf("mkfifo: %v", err)
					}
					fifo = p
				case "directory":
					if err := os.Mkdir(p, 0o700); err != nil {
						t.Fatal(err)
					}
				case "device":
					if err := os.Symlink("/dev/null", p); err != nil {
						t.Fatal(err)
					}
				}
				err, blocked := loadWatching(t, home, fifo)
				if blocked {
					t.Errorf("Load opened the %s %s for a blocking read", kind, name)
				}
				var ce *Error
				if !errors.As(err, &ce) || ce.File != name {
					t.Fatalf("err = %v, want a *Error for %s", err, name)
				}
				if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not a regular file") {
					t.Fatalf("err = %q, want it to name %s as not a regular file", err, p)
				}
			})
		}
	}
}

// A config.yaml that is a symbolic link to a regular file is read.
func TestSymlinkToRegularFileIsRead(t *testing.T) {
	home := t.TempDir()
	real := filepath.Join(t.TempDir(), "shared.yaml")
	if err := os.WriteFile(real, []byte("agent:\n  max_iterations: 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(home, "config.yaml")); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := Load(home, func(string) string { return "" })
	if err != nil || cfg.Agent.MaxIterations != 7 {
		t.Fatalf("Load through a symlink: %v %+v", err, cfg)
	}
}
