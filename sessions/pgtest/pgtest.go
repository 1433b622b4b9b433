// Package pgtest gives tests a real PostgreSQL: each test its own empty
// database on one server per test process.
//
// The server is HERALD_TEST_DATABASE_URL when that is set (a URL to a
// database whose user may CREATE DATABASE). Otherwise the first call starts
// one from the PostgreSQL binaries on this machine (Debian's postgresql
// package; scripts/test installs it) in a temporary directory, listening on
// a loopback port, as the unprivileged "postgres" (or "nobody") user when
// the tests run as root, which initdb refuses to be. Main stops it when the
// package's tests end.
//
// Where no server can be had the tests that need one skip, saying why,
// unless HERALD_TEST_POSTGRES=require (scripts/test sets it): then they fail.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// EnvURL names a server to use instead of starting one.
const EnvURL = "HERALD_TEST_DATABASE_URL"

// EnvRequire, set to "require", turns a missing server into a failure.
const EnvRequire = "HERALD_TEST_POSTGRES"

var (
	once    sync.Once
	srv     *server
	srvErr  error
	counter atomic.Int64
)

// Main runs the package's tests and then stops the server they started.
// Call it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if srv != nil {
		srv.stop()
	}
	return code
}

// URL returns the URL of a new, empty database for t, dropped when t ends.
func URL(t testing.TB) string {
	t.Helper()
	once.Do(func() { srv, srvErr = start() })
	if srvErr != nil {
		if os.Getenv(EnvRequire) == "require" {
			t.Fatalf("PostgreSQL: %v", srvErr)
		}
		t.Skipf("SKIPPED: no PostgreSQL (%v); install Debian's postgresql or set %s", srvErr, EnvURL)
	}
	name := fmt.Sprintf("herald_t%d_%d", os.Getpid(), counter.Add(1))
	admin, err := sql.Open("pgx", srv.url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("PostgreSQL: create database: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", srv.url)
		if err != nil {
			return
		}
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, _ := url.Parse(srv.url)
	u.Path = "/" + name
	return u.String()
}

type server struct {
	url    string
	dir    string // the temporary directory, when started here
	pgctl  string
	cred   *syscall.Credential
	stopMu sync.Once
}

func start() (*server, error) {
	if u := os.Getenv(EnvURL); u != "" {
		return &server{url: u}, nil
	}
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "herald-pg-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir, pgctl: filepath.Join(bin, "pg_ctl")}
	if os.Geteuid() == 0 {
		cred, err := unprivileged()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		s.cred = cred
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run(filepath.Join(bin, "initdb"), "-D", data, "-U", "herald", "-A", "trust", "-E", "UTF8", "--no-sync", "--locale=C"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	// a free port, taken and let go; another process may take it first,
	// so a start that fails is tried again on a new one
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		opts := strings.Join([]string{
			"-p " + strconv.Itoa(port),
			"-c listen_addresses=127.0.0.1",
			"-c unix_socket_directories=" + dir,
			"-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off",
			"-c max_connections=200",
		}, " ")
		out, err := s.run(s.pgctl, "-D", data, "-l", filepath.Join(dir, "log"), "-o", opts, "-w", "-t", "120", "start")
		if err == nil {
			s.url = fmt.Sprintf("postgres://herald@127.0.0.1:%d/postgres?sslmode=disable", port)
			return s, nil
		}
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		lastErr = fmt.Errorf("pg_ctl start: %v: %s %s", err, out, lastLines(string(log), 5))
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func (s *server) stop() {
	s.stopMu.Do(func() {
		if s.dir == "" {
			return
		}
		_, _ = s.run(s.pgctl, "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
		os.RemoveAll(s.dir)
	})
}

func (s *server) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = os.TempDir()
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
		cmd.Dir = s.dir
	}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd.CombinedOutput()
}

// binDir finds the PostgreSQL server binaries: on PATH, or where Debian
// puts them (/usr/lib/postgresql/<version>/bin, newest first).
func binDir() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "initdb")); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	best, bestV := "", -1
	for _, d := range dirs {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil && v > bestV {
			best, bestV = d, v
		}
	}
	if best == "" {
		return "", errors.New("pg_ctl and initdb not found")
	}
	return best, nil
}

// unprivileged is the user a root test process runs the server as.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
		}
	}
	return nil, errors.New("running as root and neither a postgres nor a nobody user exists to run the server as")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
