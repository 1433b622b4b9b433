package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
	f, p, err := t.Paths.openFile(c.String("path"), accessRead, os.O_RDONLY)
	if err == nil {
		if err = t.Paths.checkMedia(c.String("path"), p, c.mediaDir()); err != nil {
			f.Close()
		}
	}
	if err != nil {
		return "", fmt.Errorf("read_file: %w", err)
	}
	b, err := io.ReadAll(f)
	f.Close()
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
	content, ok := c.Args["content"].(string)
	if !ok {
		return "", errors.New("write_file: content is required")
	}
	f, p, err := t.Paths.openFile(c.String("path"), accessWrite, os.O_WRONLY|os.O_CREATE)
	if err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	if err := replaceContent(f, []byte(content)); err != nil {
		return "", fmt.Errorf("write_file: %w", err)
	}
	res, err := json.Marshal(map[string]any{"path": p, "bytes_written": len(content)})
	return string(res), err
}

// replaceContent writes b over the whole of f, in place (so the file
// keeps its mode and owner), and closes it.
func replaceContent(f *os.File, b []byte) error {
	err := f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt(b, 0)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
	old := c.String("old_string")
	repl, ok := c.Args["new_string"].(string)
	if old == "" || !ok {
		return "", errors.New("patch: old_string and new_string are required")
	}
	f, p, err := t.Paths.openFile(c.String("path"), accessWrite, os.O_RDWR)
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return "", fmt.Errorf("patch: %w", err)
	}
	s := string(b)
	n := strings.Count(s, old)
	switch {
	case n == 0:
		f.Close()
		return "", fmt.Errorf("patch: old_string not found in %s", p)
	case n > 1 && !c.Bool("replace_all", false):
		f.Close()
		return "", fmt.Errorf("patch: old_string occurs %d times in %s; give more context to make it unique, or set replace_all", n, p)
	}
	if c.Bool("replace_all", false) {
		s = strings.ReplaceAll(s, old, repl)
	} else {
		s = strings.Replace(s, old, repl, 1)
		n = 1
	}
	if err := replaceContent(f, []byte(s)); err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	res, err := json.Marshal(map[string]any{"path": p, "replacements": n})
	return string(res), err
}
