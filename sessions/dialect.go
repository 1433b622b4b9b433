package sessions

// dialect.go: what differs between the two engines herald's state lives
// in. The SQL of the store is written once, in SQLite's spelling with ?
// placeholders, using only what PostgreSQL reads the same way (ON
// CONFLICT, RETURNING, CASE); the few places where the engines really
// differ ask the Store's dialect. On PostgreSQL the connections rewrite ?
// to $1, $2, … before pgx sees a query (pgConn below), so that code
// holding a *sql.Tx from Write — this package's, cron's — runs unchanged
// on either engine.

import (
	"context"
	"database/sql/driver"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// dialect names an engine's spelling of what the two write differently.
type dialect struct {
	name string // "sqlite" or "postgres"
	// greatest is the function of two values that returns the larger:
	// SQLite's scalar max, PostgreSQL's greatest.
	greatest string
	// kvPrefix is the WHERE clause selecting kv keys that start with a
	// prefix, and its arguments.
	kvPrefix func(prefix string) (string, []any)
	// migrations take the schema from version i to i+1, one list per
	// engine, version for version the same tables.
	migrations []string
}

var sqliteDialect = &dialect{
	name:     "sqlite",
	greatest: "max",
	// a range instead of LIKE: keys may hold % and _; the range uses
	// the key's index
	kvPrefix: func(prefix string) (string, []any) {
		return `key >= ? AND key < ?`, []any{prefix, prefixEnd(prefix)}
	},
	migrations: migrations,
}

var postgresDialect = &dialect{
	name:     "postgres",
	greatest: "greatest",
	// starts_with, not a range: the range's upper bound may not be valid
	// UTF-8, which PostgreSQL refuses, and a database's collation need
	// not sort bytewise
	kvPrefix: func(prefix string) (string, []any) {
		return `starts_with(key, ?)`, []any{prefix}
	},
	migrations: pgMigrations,
}

// retryable reports whether a PostgreSQL transaction failed only because
// it ran beside another (serialization failure, deadlock): run again, it
// will see the other's changes.
func retryable(err error) bool {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return false
	}
	return pg.Code == "40001" || pg.Code == "40P01"
}

// rebind turns the ? placeholders of q into PostgreSQL's $1, $2, …,
// leaving alone a ? inside a string literal, a quoted identifier or a
// comment.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 8)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			// copy up to the closing quote; a doubled quote is an
			// escaped one and keeps the literal open
			j := i + 1
			for j < len(q) {
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(q))
			b.WriteString(q[i:end])
			i = end - 1
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j - 1
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pgConnector hands database/sql connections that rebind every query.
type pgConnector struct{ driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		conn.Close()
		return nil, errors.New("sessions: pgx returned an unexpected connection type")
	}
	return pgConn{sc}, nil
}

// pgConn is pgx's database/sql connection with ? placeholders. It embeds
// *stdlib.Conn so that every optional interface database/sql looks for
// (transactions, pings, session reset, value checks) is pgx's own.
type pgConn struct{ *stdlib.Conn }

func (c pgConn) Prepare(q string) (driver.Stmt, error) { return c.Conn.Prepare(rebind(q)) }

func (c pgConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(q))
}

func (c pgConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(q), args)
}

// CheckNamedValue makes every string argument text PostgreSQL accepts: its
// text type holds neither NUL nor invalid UTF-8, both of which a command's
// output (a tool message) may carry. Such bytes become U+FFFD, so the row
// is stored rather than the whole write refused; keys are changed the same
// way when written and when looked up. Then pgx checks the value as usual.
func (c pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if v, ok := nv.Value.(string); ok {
		nv.Value = pgText(v)
	}
	return c.Conn.CheckNamedValue(nv)
}

// pgText is s with NUL bytes and invalid UTF-8 replaced by U+FFFD.
func pgText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

func (c pgConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(q), args)
}
