package sessions

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/heraldgw/herald/sessions/pgtest"
)

// envOpenHelper switches the test binary into a helper that opens the
// store named by its value and exits: how the tests get separate processes
// racing over one fresh database.
const envOpenHelper = "HERALD_SESSIONS_TEST_OPEN"

func TestMain(m *testing.M) {
	if p := os.Getenv(envOpenHelper); p != "" {
		s, err := Open(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(pgtest.Main(m))
}

// checkMigrated opens p once more and checks it is at the latest version
// with exactly one version row.
func checkMigrated(t *testing.T, p string) {
	t.Helper()
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, err := s.SchemaVersion(t.Context())
	if err != nil || v != len(migrations) {
		t.Fatalf("schema version = %d, %v; want %d", v, err, len(migrations))
	}
	var rows int
	if err := s.DB().QueryRowContext(t.Context(), `SELECT count(*) FROM schema_version`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("schema_version has %d rows (%v), want 1", rows, err)
	}
}

// Many stores opened at once on a fresh path, each with its own
// connections: every one opens, and the schema is migrated once.
func TestConcurrentFirstOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.db")
	openTogether(t, 16, func() (*Store, error) { return Open(p) })
	checkMigrated(t, p)
}

// openTogether opens n stores at once with open and closes them; each
// must open.
func openTogether(t *testing.T, n int, open func() (*Store, error)) {
	t.Helper()
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			s, err := open()
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = s.Close()
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i, err)
		}
	}
}

// The same race between processes, as when several herald commands start
// at once on a new home.
func TestConcurrentFirstOpenProcesses(t *testing.T) {
	const n = 8
	p := filepath.Join(t.TempDir(), "state.db")
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	for i := range n {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envOpenHelper+"="+p)
		outs[i] = new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v: %s", i, err, outs[i])
		}
	}
	checkMigrated(t, p)
}

// isBusy must recognise the driver's own lock error, or Open would give up
// on the first SQLITE_BUSY of a database being created beside it.
func TestIsBusyOnDriverError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hold, err := s.wdb.Begin() // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	other, err := sql.Open("sqlite", "file:"+uriPath.Replace(p)+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.Begin()
	if err == nil {
		t.Fatal("a second writer took the lock")
	}
	if !isBusy(err) {
		t.Fatalf("isBusy(%v) = false", err)
	}
	if isBusy(fmt.Errorf("wrapped: %w", os.ErrNotExist)) {
		t.Fatal("isBusy took a file error for a lock")
	}
}
