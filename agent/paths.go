package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Paths confines the file tools: a path must lie inside Workdir or one of
// Allowed, and never inside Home (herald's own hooks, allowlist, config
// and state). Symbolic links are resolved before either check.
type Paths struct {
	Workdir string
	Allowed []string
	Home    string
}

// ErrOutside is wrapped by every refusal of a path.
var ErrOutside = errors.New("path not allowed")

// Resolve returns the real absolute path for p (relative paths are taken
// from Workdir), or an error wrapping ErrOutside. The file need not exist
// (write_file creates it), but a dangling symbolic link is refused.
func (ps *Paths) Resolve(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("path is required")
	}
	if strings.HasPrefix(p, "~/") || p == "~" {
		if h, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(h, strings.TrimPrefix(p, "~"))
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ps.Workdir, p)
	}
	p = filepath.Clean(p)
	real, err := realPath(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrOutside, p, err)
	}
	if ps.Home != "" {
		home, _ := realPath(filepath.Clean(ps.Home))
		if within(real, home) || within(p, filepath.Clean(ps.Home)) {
			return "", fmt.Errorf("%w: %s is inside herald's home (%s), which the agent may not touch", ErrOutside, p, ps.Home)
		}
	}
	roots := append([]string{ps.Workdir}, ps.Allowed...)
	for _, r := range roots {
		if r == "" {
			continue
		}
		rr, err := realPath(filepath.Clean(r))
		if err != nil {
			continue
		}
		if within(real, rr) {
			return real, nil
		}
	}
	return "", fmt.Errorf("%w: %s is outside the working directory %s (and the allowed paths)", ErrOutside, p, ps.Workdir)
}

// realPath resolves symbolic links in the longest existing prefix of p
// and appends the rest.
func realPath(p string) (string, error) {
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return "", fmt.Errorf("dangling symbolic link")
		}
		return r, nil
	}
	rest := ""
	cur := p
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func within(p, root string) bool {
	if root == "" {
		return false
	}
	if p == root {
		return true
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
