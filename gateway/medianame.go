package gateway

import (
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNameBytes bounds a cached file's name (most file systems take 255).
const maxNameBytes = 120

// SafeName turns a file name a sender chose into one safe to create in
// the media cache: its last path element only (either slash), no control
// or invisible formatting characters (bidi overrides), none of the
// characters other systems refuse, no leading dots (hidden files, "..")
// or dashes (read as options), at most maxNameBytes bytes with its
// extension kept, and "file" when nothing is left. It never returns a
// name with a separator, "." or "..".
func SafeName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Cf, r), !unicode.IsPrint(r) && r != ' ':
			b.WriteByte('_')
		case strings.ContainsRune(`:*?"<>|`, r):
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	s := strings.TrimLeft(strings.TrimSpace(b.String()), ".-_ ")
	s = strings.TrimRight(s, ". ")
	if len(s) > maxNameBytes {
		ext := filepath.Ext(s)
		if len(ext) > 16 || len(ext) >= maxNameBytes {
			ext = ""
		}
		stem := s[:len(s)-len(ext)]
		cut := maxNameBytes - len(ext)
		for cut > 0 && !utf8.RuneStart(stem[cut]) {
			cut--
		}
		s = strings.TrimRight(stem[:cut], ". ") + ext
	}
	if s == "" || s == "." || s == ".." || strings.HasPrefix(s, ".") {
		return "file"
	}
	return s
}
