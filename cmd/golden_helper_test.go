package cmd_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goldenCompare compares got with testdata/<name>; with
// HERALD_UPDATE_GOLDEN=1 in the environment it writes got there instead.
// got should already have its home directory, times and other varying
// parts replaced by placeholders.
func goldenCompare(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if os.Getenv("HERALD_UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with HERALD_UPDATE_GOLDEN=1 to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (HERALD_UPDATE_GOLDEN=1 rewrites it):\n--- got\n%s\n--- want\n%s", p, got, want)
	}
}

// normaliser replaces varying parts of a command's output (the home
// directory, times) with placeholders, longest first.
type normaliser struct{ pairs [][2]string }

func (n *normaliser) add(from, to string) {
	if from != "" {
		n.pairs = append(n.pairs, [2]string{from, to})
	}
}

func (n *normaliser) apply(s string) string {
	pairs := slices.Clone(n.pairs)
	// longest first, so that a path inside a longer one goes with it
	slices.SortStableFunc(pairs, func(a, b [2]string) int { return len(b[0]) - len(a[0]) })
	for _, p := range pairs {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return s
}
