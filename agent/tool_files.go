package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// MaxReadFile is how much read_file returns at most.
const MaxReadFile = 100_000

// ReadFile is the read_file tool: a text file, or a range of its lines.
type ReadFile struct{ Paths *Paths }

// WriteFile is the write_file tool: creates or replaces a file.
type WriteFile struct{ Paths *Paths }

// Patch is the patch tool: an exact find/replace in one file.
type Patch struct{ Paths *Paths }

var (
	_ Tool = (*ReadFile)(nil)
	_ Tool = (*WriteFile)(nil)
	_ Tool = (*Patch)(nil)
)

func (*ReadFile) Name() string { return "read_file" }
func (*ReadFile) Description() string {
	return "Read a text file in the working directory. offset (1-based line) and limit (lines) read part of it."
}
func (*ReadFile) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path, relative to the working directory"},` +
		`"offset":{"type":"integer","description":"First line to read (1-based)"},` +
		`"limit":{"type":"integer","description":"Number of lines to read"}},"required":["path"]}`)
}

func (t *ReadFile) Run(ctx context.Context, c *Call) (string, error) {
	p, err := t.Paths.Resolve(c.String("path"))
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	if fi.IsDir() {
		return "", fmt.Errorf("read_file: %s is a directory", p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	if !utf8.Valid(b) && strings.ContainsRune(string(b[:min(len(b), 8000)]), 0) {
		return "", fmt.Errorf("read_file: %s looks like a binary file", p)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	total := len(lines)
	off := int(c.Number("offset", 1))
	if off < 1 {
		off = 1
	}
	lim := int(c.Number("limit", 0))
	from := min(off-1, total)
	to := total
	if lim > 0 {
		to = min(from+lim, total)
	}
	content := strings.Join(lines[from:to], "")
	truncated := false
	if len(content) > MaxReadFile {
		content = content[:runeStart(content, MaxReadFile)]
		truncated = true
	}
	out := map[string]any{"path": p, "content": content, "total_lines": total, "from_line": from + 1, "to_line": to}
	if truncated {
		out["truncated"] = true
		out["note"] = "content cut; read on with offset and limit"
	}
	res, err := json.Marshal(out)
	return string(res), err
}

func (*WriteFile) Name() string { return "write_file" }
func (*WriteFile) Description() string {
	return "Write a file in the working directory, creating it (and its directories) or replacing its content."
}
func (*WriteFile) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path, relative to the working directory"},` +
		`"content":{"type":"string","description":"The whole new content"}},"required":["path","content"]}`)
}

func (t *WriteFile) Run(ctx context.Context, c *Call) (string, error) {
	p, err := t.Paths.Resolve(c.String("path"))
	if err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	content, ok := c.Args["content"].(string)
	if !ok {
		return "", errors.New("write_file: content is required")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	if err := writeKeepingMode(p, []byte(content)); err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	res, err := json.Marshal(map[string]any{"path": p, "bytes_written": len(content)})
	return string(res), err
}

func writeKeepingMode(p string, b []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(p); err == nil {
		mode = fi.Mode().Perm()
	}
	return os.WriteFile(p, b, mode)
}

func (*Patch) Name() string { return "patch" }
func (*Patch) Description() string {
	return "Replace an exact piece of text in a file. old_string must occur exactly once unless replace_all is true."
}
func (*Patch) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"path":{"type":"string","description":"File path, relative to the working directory"},` +
		`"old_string":{"type":"string","description":"The exact text to find"},` +
		`"new_string":{"type":"string","description":"Its replacement"},` +
		`"replace_all":{"type":"boolean","description":"Replace every occurrence"}},"required":["path","old_string","new_string"]}`)
}

func (t *Patch) Run(ctx context.Context, c *Call) (string, error) {
	p, err := t.Paths.Resolve(c.String("path"))
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	old := c.String("old_string")
	repl, ok := c.Args["new_string"].(string)
	if old == "" || !ok {
		return "", errors.New("patch: old_string and new_string are required")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	s := string(b)
	n := strings.Count(s, old)
	switch {
	case n == 0:
		return "", fmt.Errorf("patch: old_string not found in %s", p)
	case n > 1 && !c.Bool("replace_all", false):
		return "", fmt.Errorf("patch: old_string occurs %d times in %s; give more context to make it unique, or set replace_all", n, p)
	}
	if c.Bool("replace_all", false) {
		s = strings.ReplaceAll(s, old, repl)
	} else {
		s = strings.Replace(s, old, repl, 1)
		n = 1
	}
	if err := writeKeepingMode(p, []byte(s)); err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	res, err := json.Marshal(map[string]any{"path": p, "replacements": n})
	return string(res), err
}
