package sessions

import (
	"context"
	cryptorand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Store is the state store, on SQLite (Open) or PostgreSQL (OpenURL). It
// is safe for concurrent use.
type Store struct {
	path    string // the SQLite file; "" on PostgreSQL
	where   string // the file, or the URL without its password, for errors
	dialect *dialect
	replica string
	wdb     *sql.DB // SQLite: one connection, used only by the writer goroutine; PostgreSQL: the pool
	rdb     *sql.DB // readers (on PostgreSQL the same pool)

	// statements parsed once
	stInsertMsg, stBumpSession, stInsertSession *sql.Stmt

	// SQLite: the writer goroutine's queue
	reqs   chan *writeReq
	closed chan struct{}
	done   chan struct{}
	// PostgreSQL: writes under way, which Close waits for
	inflight sync.WaitGroup
	// closeMu guards isClosed and inflight.Add against Close
	closeMu  sync.RWMutex
	isClosed bool
	closing  sync.Once
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

// Spec says which database a Store opens: PostgreSQL when URL is set,
// else the SQLite file at Path.
type Spec struct {
	Path string
	URL  string
	// ReplicaID names this process among the replicas sharing a
	// PostgreSQL database ("": hostname-pid-random).
	ReplicaID string
}

// OpenStore opens the database spec names.
func OpenStore(ctx context.Context, spec Spec) (*Store, error) {
	var (
		s   *Store
		err error
	)
	if spec.URL != "" {
		s, err = OpenURL(ctx, spec.URL)
	} else {
		s, err = Open(spec.Path)
	}
	if err != nil {
		return nil, err
	}
	if spec.ReplicaID != "" {
		s.replica = spec.ReplicaID
	}
	return s, nil
}

// Open opens (creating if needed) the SQLite database at path and migrates
// it.
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
	rdb.SetMaxOpenConns(4)
	rdb.SetMaxIdleConns(4)
	s := &Store{path: path, where: path, dialect: sqliteDialect, replica: newReplicaID(), wdb: wdb, rdb: rdb}
	if err := s.prepare(); err != nil {
		wdb.Close()
		rdb.Close()
		return nil, err
	}
	s.reqs, s.closed, s.done = make(chan *writeReq, 4096), make(chan struct{}), make(chan struct{})
	go s.writer()
	return s, nil
}

// pgPoolSize bounds the connections one process opens to PostgreSQL.
const pgPoolSize = 16

// OpenURL opens the PostgreSQL database at rawURL (postgres://…) and
// migrates it. Writes go straight to the connection pool, each in its own
// serializable transaction that is run again when PostgreSQL reports it
// collided with another (see Write); the group commit of the SQLite store
// buys nothing on a server that commits many connections at once.
func OpenURL(ctx context.Context, rawURL string) (*Store, error) {
	where := redactURL(rawURL)
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		// pgx's message quotes the URL, password and all
		return nil, fmt.Errorf("sessions: %s: not a PostgreSQL URL", where)
	}
	db := sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg)})
	db.SetMaxOpenConns(pgPoolSize)
	db.SetMaxIdleConns(pgPoolSize)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := migratePG(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("sessions: %s: %w", where, err)
	}
	s := &Store{where: where, dialect: postgresDialect, replica: newReplicaID(), wdb: db, rdb: db}
	if err := s.prepare(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// redactURL is rawURL without its password, for messages.
func redactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "the database URL"
	}
	return u.Redacted()
}

// newReplicaID names this process: host, pid and a random part, so that
// a restarted process with a recycled pid is another replica.
func newReplicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "herald"
	}
	var b [3]byte
	cryptorand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// ReplicaID names this process among the replicas sharing the database
// (replica_id in config.yaml, or hostname-pid-random).
func (s *Store) ReplicaID() string { return s.replica }

// Backend is "sqlite" or "postgres".
func (s *Store) Backend() string { return s.dialect.name }

func (s *Store) prepare() error {
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&s.stInsertMsg, `INSERT INTO messages(session_id, role, content, tool_calls, tool_call_id, tool_name, platform_message_id, created_at) VALUES (?,?,?,?,?,?,?,?)`},
		{&s.stBumpSession, `UPDATE sessions SET message_count = message_count + ?, updated_at = ` + s.dialect.greatest + `(updated_at, ?) WHERE id = ?`},
		{&s.stInsertSession, `INSERT INTO sessions(` + sessionCols + `) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,NULL,'',0) ON CONFLICT(id) DO NOTHING`},
	} {
		var err error
		if *p.dst, err = s.wdb.Prepare(p.q); err != nil {
			return fmt.Errorf("sessions: prepare: %w", err)
		}
	}
	return nil
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

// migrate brings the SQLite schema up to date. Several processes may open
// a new home at once (herald commands started together), so the version is
// read again, and the migrations run, inside one BEGIN IMMEDIATE
// transaction: whoever takes the write lock first migrates, the others
// wait for it (busy_timeout) and then find nothing left to do. An
// up-to-date database is recognised without taking the lock.
func migrate(db *sql.DB) error {
	if v, err := schemaVersion(db); err == nil && v == len(migrations) {
		return nil
	}
	tx, err := db.Begin() // BEGIN IMMEDIATE: the DSN sets _txlock
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback()
	return migrateTx(tx, migrations)
}

// migrateLockKey is the PostgreSQL advisory lock that replicas starting
// together take to migrate one at a time ("herald" and 1).
const migrateLockKey int64 = 0x686572616c640001

// migratePG brings the PostgreSQL schema up to date under a
// transaction-scoped advisory lock: replicas starting together migrate
// once, the others wait and then find nothing left to do. PostgreSQL's DDL
// is transactional, so a failed migration leaves the schema as it was.
func migratePG(ctx context.Context, db *sql.DB) error {
	if v, err := schemaVersion(db); err == nil && v == len(pgMigrations) {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: begin: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`SELECT pg_advisory_xact_lock(?)`, migrateLockKey); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	return migrateTx(tx, pgMigrations)
}

// migrateTx runs the migrations a database inside tx lacks and commits.
func migrateTx(tx *sql.Tx, list []string) error {
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
	if v > len(list) {
		return fmt.Errorf("database schema version %d is newer than this herald understands (%d); refusing to touch it", v, len(list))
	}
	if v == len(list) {
		return nil
	}
	for ; v < len(list); v++ {
		if _, err := tx.Exec(list[v]); err != nil {
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

// Path is the SQLite database file ("" on PostgreSQL).
func (s *Store) Path() string { return s.path }

// Write runs fn inside a write transaction and returns once that
// transaction has committed (or failed).
//
// On SQLite fn may share its transaction with other writers' functions;
// each runs under its own savepoint, so one failing fn rolls back only its
// own changes. On PostgreSQL fn has a serializable transaction of its own,
// and is run again (up to pgMaxAttempts times in all) when PostgreSQL
// refuses that transaction because another ran beside it; fn must
// therefore set what it reports from scratch each time it runs. Either
// way fn sees the database as if it ran alone, as a step that reads and
// then decides needs.
func (s *Store) Write(ctx context.Context, fn func(*sql.Tx) error) error {
	return s.write(ctx, sql.LevelSerializable, fn)
}

// writeSimple is Write for the hot paths whose statements stand each on
// its own — inserts, conflict-ignoring upserts, updates whose new value
// depends only on the row they update — and so are right under
// PostgreSQL's read committed, which spares them serializable's
// bookkeeping and retries. A step that reads something and then decides
// what to write uses Write.
func (s *Store) writeSimple(ctx context.Context, fn func(*sql.Tx) error) error {
	return s.write(ctx, sql.LevelReadCommitted, fn)
}

func (s *Store) write(ctx context.Context, level sql.IsolationLevel, fn func(*sql.Tx) error) error {
	if s.reqs == nil {
		return s.writePG(ctx, level, fn)
	}
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

// pgMaxAttempts bounds how often a PostgreSQL write is tried when it keeps
// colliding with others.
const pgMaxAttempts = 20

func (s *Store) writePG(ctx context.Context, level sql.IsolationLevel, fn func(*sql.Tx) error) error {
	s.closeMu.RLock()
	if s.isClosed {
		s.closeMu.RUnlock()
		return ErrClosed
	}
	s.inflight.Add(1)
	s.closeMu.RUnlock()
	defer s.inflight.Done()
	pause := time.Millisecond
	for attempt := 1; ; attempt++ {
		err := s.writeOncePG(ctx, level, fn)
		if err == nil || !retryable(err) || attempt == pgMaxAttempts {
			return err
		}
		t := time.NewTimer(pause/2 + time.Duration(rand.Int64N(int64(pause))))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

func (s *Store) writeOncePG(ctx context.Context, level sql.IsolationLevel, fn func(*sql.Tx) error) error {
	tx, err := s.wdb.BeginTx(ctx, &sql.TxOptions{Isolation: level})
	if err != nil {
		return fmt.Errorf("sessions: begin: %w", err)
	}
	if err := safeRun(fn, tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sessions: commit: %w", err)
	}
	return nil
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

// DB returns the read pool, for tests.
func (s *Store) DB() *sql.DB { return s.rdb }

// Close waits for the writes under way and closes the database.
func (s *Store) Close() error {
	var err error
	s.closing.Do(func() {
		if s.reqs != nil {
			close(s.closed)
			<-s.done
			err = errors.Join(s.rdb.Close(), s.wdb.Close())
			return
		}
		s.closeMu.Lock()
		s.isClosed = true
		s.closeMu.Unlock()
		s.inflight.Wait()
		err = s.wdb.Close()
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
