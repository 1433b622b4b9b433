package pgtest

import (
	"database/sql"
	"os"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// Two tests get two databases on one server, each empty and usable.
func TestDatabasesAreSeparate(t *testing.T) {
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("one URL twice: %s", a)
	}
	for _, u := range []string{a, b} {
		db, err := sql.Open("pgx", u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`CREATE TABLE x (v int)`); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM x`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s: count = %d, %v", u, n, err)
		}
	}
}
