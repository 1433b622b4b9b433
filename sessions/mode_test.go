package sessions_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/heraldgw/herald/sessions"
)

// state.db, its -wal and its -shm are the owner's only (0600), like the
// token and the logs, whatever the umask; an existing database readable by
// others is made private when opened.
func TestStateDBIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, existing := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "state.db")
		if existing {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		st, err := sessions.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetKV(context.Background(), "k", "v"); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if m := fi.Mode().Perm(); m != 0o600 {
				t.Errorf("existing=%v: %s is %o, want 600", existing, filepath.Base(p), m)
			}
		}
		st.Close()
	}
}
