package sessions_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heraldgw/herald/sessions"
)

// A path with ?, # or % (t.TempDir names subtests "name#01") opens that
// file, not one cut at the character.
func TestOpenPathWithURICharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a#b?c%41 d")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.db")
	st, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the store is not at %s: %v", path, err)
	}
}
