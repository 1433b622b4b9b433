// Package sessionstest helps tests of code that stands on a state store.
package sessionstest

import (
	"os"
	"strings"
	"testing"

	"github.com/heraldgw/herald/sessions"
)

// DamageTable overwrites the root pages of table (and of its indexes) in
// the SQLite state store at path, as a disk fault would: reading the table
// fails, and the store's Check reports the damage. The store must not be
// open elsewhere.
func DamageTable(t testing.TB, path, table string) {
	t.Helper()
	st, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var pageSize int64
	if err := st.DB().QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	rows, err := st.DB().Query("SELECT rootpage FROM sqlite_master WHERE tbl_name = ? AND rootpage > 0", table)
	if err != nil {
		t.Fatal(err)
	}
	var roots []int64
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, p)
	}
	rows.Close()
	st.Close()
	if len(roots) == 0 {
		t.Fatalf("sessionstest: no table %q in %s", table, path)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := []byte(strings.Repeat("\xff\x13", int(pageSize/2)))
	for _, p := range roots {
		if _, err := f.WriteAt(junk, (p-1)*pageSize); err != nil {
			t.Fatal(err)
		}
	}
}
