package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
)

// TestExceptGrantsAroundHidden: the rules for a directory that holds the
// hidden one name every sibling on the way down, and neither the hidden
// directory nor any directory above it.
func TestExceptGrantsAroundHidden(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/b/hidden/x", "a/b/sib", "a/other", "top"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.WriteFile(filepath.Join(root, "a", "b", "file"), []byte("x"), 0o644)
	os.Symlink(filepath.Join(root, "a", "b", "hidden"), filepath.Join(root, "a", "link"))
	hidden := filepath.Join(root, "a", "b", "hidden")
	var got []string
	for _, r := range except(root, hidden, landlock.RODirs, landlock.ROFiles) {
		got = append(got, fmt.Sprint(r))
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"a/b/sib", "a/b/file", "a/other", "top"} {
		if !strings.Contains(all, filepath.Join(root, want)) {
			t.Errorf("no rule for %s in:\n%s", want, all)
		}
	}
	for _, bad := range []string{hidden, filepath.Join(root, "a", "link"), filepath.Join(root, "a") + "]", root + "]"} {
		if strings.Contains(all, bad) {
			t.Errorf("a rule names %s:\n%s", bad, all)
		}
	}
	if rules := except(root, "", landlock.RODirs, landlock.ROFiles); len(rules) != 1 {
		t.Errorf("nothing hidden: %d rules, want the directory whole", len(rules))
	}
}

func TestAvailable(t *testing.T) {
	if err := Available("chroot"); err == nil || !strings.Contains(err.Error(), "unknown sandbox") {
		t.Errorf("Available(chroot) = %v", err)
	}
	if err := Available(None); err != nil {
		t.Errorf("Available(none) = %v", err)
	}
	if d := Default(); d != Landlock && d != None {
		t.Errorf("Default() = %q", d)
	}
}
