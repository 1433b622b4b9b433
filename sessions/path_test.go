package sessions

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A path with '#', '?' or '%' in it (a subtest named "x#01" gets such a
// temporary directory) is a file name, not a URI: two such stores are
// two files, each where its path says.
func TestOpenPathWithURICharacters(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	for i, name := range []string{"a#1", "a#2", "b?x=1", "c%23d"} {
		p := filepath.Join(dir, name, "state.db")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := Open(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, ok, _ := s.KV(ctx, "n"); ok {
			t.Fatalf("%s: the store holds another's value", name)
		}
		if err := s.SetKV(ctx, "n", name); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("store %d not at its path: %v", i, err)
		}
	}
}
