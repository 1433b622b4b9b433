package sessions

import (
	"strconv"
	"strings"
	"testing"

	"github.com/heraldgw/herald/sessions/pgtest"
)

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`a = ? AND b = ?`, `a = $1 AND b = $2`},
		{`x LIKE ? ESCAPE '\' AND y = ?`, `x LIKE $1 ESCAPE '\' AND y = $2`},
		{`'it''s ?' = ?`, `'it''s ?' = $1`},
		{`"odd?col" = ? -- why?` + "\n" + `AND z = ?`, `"odd?col" = $1 -- why?` + "\n" + `AND z = $2`},
		{`'unterminated ?`, `'unterminated ?`},
	} {
		if got := rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Both engines know the same schema versions: a migration added to one
// list and not the other would let the two stores drift apart.
func TestMigrationListsMatch(t *testing.T) {
	if len(pgMigrations) != len(migrations) {
		t.Fatalf("%d PostgreSQL migrations, %d SQLite ones", len(pgMigrations), len(migrations))
	}
}

// Replicas starting together on a new PostgreSQL database: every one
// opens, and the schema is migrated once.
func TestConcurrentFirstOpenPostgres(t *testing.T) {
	u := pgtest.URL(t)
	openTogether(t, 6, func() (*Store, error) { return OpenURL(t.Context(), u) })
	s, err := OpenURL(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var rows, v int
	if err := s.DB().QueryRowContext(t.Context(), `SELECT count(*), max(version) FROM schema_version`).Scan(&rows, &v); err != nil || rows != 1 || v != len(pgMigrations) {
		t.Fatalf("schema_version: %d rows at %d (%v); want 1 at %d", rows, v, err, len(pgMigrations))
	}
}

// A URL that is not one is refused with a message that keeps its password
// out.
func TestOpenURLBadURL(t *testing.T) {
	_, err := OpenURL(t.Context(), "postgres://u:s3cret@127.0.0.1:1/db?sslmode=bogus")
	if err == nil {
		t.Fatal("a bad URL opened")
	}
	if got := err.Error(); strings.Contains(got, "s3cret") {
		t.Fatalf("the password is in the error: %s", got)
	}
	_, err = OpenURL(t.Context(), "postgres://u:s3cret@127.0.0.1:1/db?sslmode=disable&connect_timeout=5")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("no server: %v", err)
	}
}

// FuzzRebind: rebinding numbers the placeholders from $1 without a gap,
// leaves what it already rebound alone (no ? is left outside a literal or
// a comment), and changes nothing but the placeholders.
func FuzzRebind(f *testing.F) {
	for _, s := range []string{
		`SELECT 1`, `a = ? AND b = ?`, `'it''s ?' = ?`, `"x?" -- ?` + "\n?", `'open ?`, `--?`, `??`, `-?-`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		out := rebind(q)
		if again := rebind(out); again != out {
			t.Fatalf("rebind(%q) = %q, and again %q", q, out, again)
		}
		// undo: each $n inserted, in order, back to ?
		n := 0
		var b strings.Builder
		for i := 0; i < len(out); i++ {
			want := "$" + strconv.Itoa(n+1)
			if strings.HasPrefix(out[i:], want) && !strings.HasPrefix(q[min(b.Len(), len(q)):], want) {
				n++
				b.WriteByte('?')
				i += len(want) - 1
				continue
			}
			b.WriteByte(out[i])
		}
		if b.String() != q {
			t.Fatalf("rebind(%q) = %q: more than the placeholders changed", q, out)
		}
	})
}
