package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{
		"photo.jpg":                       "photo.jpg",
		"../../.env":                      "env",
		`..\..\windows\win.ini`:           "win.ini",
		"/etc/passwd":                     "passwd",
		"..":                              "file",
		"":                                "file",
		".hidden":                         "hidden",
		"-rf":                             "rf",
		"a\x00b\nc.txt":                   "a_b_c.txt",
		"evil\u202etxt.exe":               "evil_txt.exe",
		"what?.pdf":                       "what_.pdf",
		"trailing. . .":                   "trailing",
		"résumé 2026.pdf":                 "résumé 2026.pdf",
		strings.Repeat("a", 300) + ".pdf": strings.Repeat("a", maxNameBytes-4) + ".pdf",
	} {
		if got := SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q; want %q", in, got, want)
		}
	}
}

// FuzzSafeName: whatever a sender names a file, the name is one plain,
// visible element that stays inside the directory it is created in.
func FuzzSafeName(f *testing.F) {
	for _, s := range []string{"photo.jpg", "../../.env", "..", "/", "\\..\\x", "a/../../b", "\u202e", "\xff\xfe", ". .", "-", strings.Repeat("é", 100) + ".txt"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, name string) {
		got := SafeName(name)
		if got == "" || got == "." || got == ".." || strings.ContainsAny(got, "/\\\x00") || strings.HasPrefix(got, ".") || strings.HasPrefix(got, "-") {
			t.Fatalf("SafeName(%q) = %q", name, got)
		}
		if !utf8.ValidString(got) || len(got) > maxNameBytes {
			t.Fatalf("SafeName(%q) = %q: invalid UTF-8 or too long (%d bytes)", name, got, len(got))
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("SafeName(%q) = %q keeps %U", name, got, r)
			}
		}
		if filepath.Dir(filepath.Join(dir, got)) != dir {
			t.Fatalf("SafeName(%q) = %q leaves the directory", name, got)
		}
		if got != SafeName(got) {
			t.Fatalf("SafeName is not stable: %q → %q → %q", name, got, SafeName(got))
		}
		f, p, err := createUnique(dir, got)
		if err != nil {
			t.Fatalf("create %q: %v", got, err)
		}
		f.Close()
		os.Remove(p)
	})
}
