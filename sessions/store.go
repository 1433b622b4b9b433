package sessions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Store is the SQLite state store. It is safe for concurrent use.
type Store struct {
	path string
	wdb  *sql.DB // one connection, used only by the writer goroutine
	rdb  *sql.DB // readers

	// statements on the writer's one connection, parsed once
	stInsertMsg, stBumpSession, stInsertSession *sql.Stmt

	reqs    chan *writeReq
	closed  chan struct{}
	done    chan struct{}
	closeMu sync.Once
}

type writeReq struct {
	ctx  context.Context
	fn   func(*sql.Tx) error
	done chan error
}

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("sessions: store closed")

// maxBatch bounds how many writes share one transaction.
const maxBatch = 512

// uriPath escapes what SQLite's file: URIs would read as other than a
// file name: '%' (an escape), '?' (the query) and '#' (the fragment; a
// subtest named "x#01" has it in its temporary directory).
var uriPath = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")

// Open opens (creating if needed) the database at path and migrates it.
func Open(path string) (*Store, error) {
	dsn := func(extra string) string {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "foreign_keys(ON)")
		q.Add("_txlock", "immediate")
		// a URI filename: SQLite reads ? and # in it as delimiters and
		// decodes %HH, so a path holding them (t.TempDir's "name#01")
		// would open another file
		return "file:" + uriPath.Replace(path) + "?" + q.Encode() + extra
	}
	if err := private(path); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	wdb, err := sql.Open("sqlite", dsn(""))
	if err != nil {
		return nil, fmt.Errorf("sessions: open %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	if err := migrateRetrying(wdb); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("sessions: %s: %w", path, err)
	}
	rdb, err := sql.Open("sqlite", dsn(""))
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("sessions: open %s: %w", path, err)
	}
	st := &Store{}
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&st.stInsertMsg, `INSERT INTO messages(session_id, role, content, tool_calls, tool_call_id, tool_name, platform_message_id, created_at) VALUES (?,?,?,?,?,?,?,?)`},
		{&st.stBumpSession, `UPDATE sessions SET message_count = message_count + ?, updated_at = MAX(updated_at, ?) WHERE id = ?`},
		{&st.stInsertSession, `INSERT INTO sessions(` + sessionCols + `) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,NULL,'',0) ON CONFLICT(id) DO NOTHING`},
	} {
		if *p.dst, err = wdb.Prepare(p.q); err != nil {
			wdb.Close()
			rdb.Close()
			return nil, fmt.Errorf("sessions: prepare: %w", err)
		}
	}
	rdb.SetMaxOpenConns(4)
	rdb.SetMaxIdleConns(4)
	s := st
	s.path, s.wdb, s.rdb = path, wdb, rdb
	s.reqs, s.closed, s.done = make(chan *writeReq, 4096), make(chan struct{}), make(chan struct{})
	go s.writer()
	return s, nil
}

// private makes the database at path readable by its owner only, like the
// token and the logs: a new one is created 0600 before SQLite opens it
// (SQLite gives its -wal and -shm the database file's mode), and an
// existing one, and its -wal and -shm, lose any group or other access.
func private(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Lstat(p)
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, st.Mode().Perm()&0o700); err != nil {
			return fmt.Errorf("make %s private: %w", p, err)
		}
	}
	return nil
}

// migrate brings the schema up to date. Several processes may open a new
// home at once (herald commands started together), so the version is read
// again, and the migrations run, inside one BEGIN IMMEDIATE transaction:
// whoever takes the write lock first migrates, the others wait for it
// (busy_timeout) and then find nothing left to do. An up-to-date database
// is recognised without taking the lock.
func migrate(db *sql.DB) error {
	if v, err := schemaVersion(db); err == nil && v == len(migrations) {
		return nil
	}
	tx, err := db.Begin() // BEGIN IMMEDIATE: the DSN sets _txlock
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("schema_version: %w", err)
	}
	v, err := schemaVersion(tx)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.Exec(`INSERT INTO schema_version(version) VALUES (0)`); err != nil {
			return fmt.Errorf("schema_version: %w", err)
		}
	case err != nil:
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this herald understands (%d); refusing to touch it", v, len(migrations))
	}
	if v == len(migrations) {
		return nil
	}
	for ; v < len(migrations); v++ {
		if _, err := tx.Exec(migrations[v]); err != nil {
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
	}
	if _, err := tx.Exec(`UPDATE schema_version SET version = ?`, v); err != nil {
		return fmt.Errorf("schema_version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration to %d: commit: %w", v, err)
	}
	return nil
}

// firstOpenWait bounds how long Open retries a database that other
// processes are creating at the same moment.
const firstOpenWait = 30 * time.Second

// migrateRetrying runs migrate, trying again while the database is busy.
// busy_timeout does not cover every lock on a new file: when several
// connections switch it to WAL at once, or one upgrades a read lock while
// another waits to write, SQLite answers SQLITE_BUSY at once rather than
// risk a deadlock. Such an answer means someone else is creating the
// schema, so a short, growing, jittered pause and another attempt is all
// it takes.
func migrateRetrying(db *sql.DB) error {
	deadline := time.Now().Add(firstOpenWait)
	pause := 5 * time.Millisecond
	for {
		err := migrate(db)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause/2 + time.Duration(rand.Int64N(int64(pause))))
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED, in
// any of their extended forms.
func isBusy(err error) bool {
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	c := coded.Code() & 0xff
	return c == 5 || c == 6 // SQLITE_BUSY, SQLITE_LOCKED
}

// schemaVersion reads the version row; sql.ErrNoRows when there is none.
func schemaVersion(q interface {
	QueryRow(string, ...any) *sql.Row
}) (int, error) {
	var v int
	err := q.QueryRow(`SELECT version FROM schema_version`).Scan(&v)
	return v, err
}

// SchemaVersion returns the database's schema version.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.rdb.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
	return v, err
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Write runs fn inside a write transaction and returns once that
// transaction has committed (or failed). fn may share its transaction with
// other writers' functions; each runs under its own savepoint, so one
// failing fn rolls back only its own changes.
func (s *Store) Write(ctx context.Context, fn func(*sql.Tx) error) error {
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case <-s.closed:
		return ErrClosed
	default:
	}
	select {
	case s.reqs <- r:
	case <-s.closed:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once queued, a write is always carried out: waiting for it keeps
	// "returned nil" meaning "committed".
	return <-r.done
}

func (s *Store) writer() {
	defer close(s.done)
	batch := make([]*writeReq, 0, maxBatch)
	for {
		var first *writeReq
		select {
		case first = <-s.reqs:
		case <-s.closed:
			// drain what is already queued, then stop
			for {
				select {
				case r := <-s.reqs:
					s.commit([]*writeReq{r})
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
	fill:
		for len(batch) < maxBatch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		s.commit(batch)
		// drop the references, or the largest batch seen keeps its
		// writes (and the rows they captured) alive until it is reused
		clear(batch)
	}
}

func (s *Store) commit(batch []*writeReq) {
	tx, err := s.wdb.Begin()
	if err != nil {
		for _, r := range batch {
			r.done <- fmt.Errorf("sessions: begin: %w", err)
		}
		return
	}
	errs := make([]error, len(batch))
	single := len(batch) == 1
	for i, r := range batch {
		if r.ctx.Err() != nil {
			errs[i] = r.ctx.Err()
			continue
		}
		if single {
			errs[i] = safeRun(r.fn, tx)
			continue
		}
		if _, err := tx.Exec(`SAVEPOINT w`); err != nil {
			errs[i] = err
			continue
		}
		if err := safeRun(r.fn, tx); err != nil {
			errs[i] = err
			tx.Exec(`ROLLBACK TO w`)
		}
		tx.Exec(`RELEASE w`)
	}
	if single && errs[0] != nil {
		tx.Rollback()
		batch[0].done <- errs[0]
		return
	}
	if err := tx.Commit(); err != nil {
		for _, r := range batch {
			r.done <- fmt.Errorf("sessions: commit: %w", err)
		}
		return
	}
	for i, r := range batch {
		r.done <- errs[i]
	}
}

func safeRun(fn func(*sql.Tx) error, tx *sql.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sessions: write panicked: %v", p)
		}
	}()
	return fn(tx)
}

// DB returns the read pool, for packages that keep their own tables in
// state.db (cron) and for tests.
func (s *Store) DB() *sql.DB { return s.rdb }

// Close waits for queued writes and closes the database.
func (s *Store) Close() error {
	var err error
	s.closeMu.Do(func() {
		close(s.closed)
		<-s.done
		err = errors.Join(s.rdb.Close(), s.wdb.Close())
	})
	return err
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v) }

func fromNullMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMS(v.Int64)
	return &t
}
