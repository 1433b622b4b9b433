package agent

// Where the file tools may reach, and how they open what they reach.
// A path is resolved (symbolic links and ..) and must lie inside the
// working directory or an allowed path, and never inside herald's home,
// which is recognised by device and inode rather than by name, so that a
// second path to it (a symbolic link, a bind mount) is the home too. The
// file is then opened beneath its root with no symbolic link followed
// (openat2 where the kernel has it, O_NOFOLLOW otherwise), so a link
// swapped in after the check is refused; a file with more than one hard
// link is never written, and never read when it is a link to a file in
// the home.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Paths confines the file tools: a path must lie inside Workdir or one of
// Allowed, and never inside Home (herald's own hooks, allowlist, config
// and state), except that files in Home's media/ (attachments received
// from chats) may be read.
type Paths struct {
	Workdir string
	Allowed []string
	Home    string
}

// ErrOutside is wrapped by every refusal of a path.
var ErrOutside = errors.New("path not allowed")

// mediaSubdir is the part of the home the file tools may read (the media
// cache; a turn reads its own session's part only).
const mediaSubdir = "media"

// access is what a tool wants to do with a path.
type access int

const (
	accessRead access = iota
	accessWrite
)

// Resolve returns the real absolute path for p (relative paths are taken
// from Workdir), or an error wrapping ErrOutside. The file need not exist
// (write_file creates it), but a dangling symbolic link is refused.
func (ps *Paths) Resolve(p string) (string, error) {
	real, _, err := ps.resolve(p, accessWrite)
	return real, err
}

// resolve returns the real path of p and the real root it lies in.
func (ps *Paths) resolve(p string, how access) (real, root string, err error) {
	if strings.TrimSpace(p) == "" {
		return "", "", errors.New("path is required")
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
	real, err = realPath(p)
	if err != nil {
		return "", "", fmt.Errorf("%w: %s: %v", ErrOutside, p, err)
	}
	if err := ps.checkHome(p, real, how); err != nil {
		return "", "", err
	}
	if within(real, "/proc") {
		// the file tools run inside herald: /proc/self is herald's own
		// memory, environment and open files
		return "", "", fmt.Errorf("%w: %s is in /proc, where herald's own process (its environment, memory and open files) can be read", ErrOutside, p)
	}
	roots := append([]string{ps.Workdir}, ps.Allowed...)
	if how == accessRead && ps.Home != "" {
		roots = append(roots, filepath.Join(ps.Home, mediaSubdir))
	}
	for _, r := range roots {
		if r == "" {
			continue
		}
		rr, err := realPath(filepath.Clean(r))
		if err != nil {
			continue
		}
		if within(real, rr) {
			return real, rr, nil
		}
	}
	return "", "", fmt.Errorf("%w: %s is outside the working directory %s (and the allowed paths)", ErrOutside, p, ps.Workdir)
}

func (ps *Paths) homeError(p string) error {
	return fmt.Errorf("%w: %s is inside herald's home (%s), which the agent may not touch", ErrOutside, p, ps.Home)
}

// checkHome refuses a path inside the home: by name (as given and
// resolved), and by the device and inode of every directory above the
// resolved path. Only reading below media/ is allowed.
func (ps *Paths) checkHome(p, real string, how access) error {
	if ps.Home == "" {
		return nil
	}
	home := filepath.Clean(ps.Home)
	realHome, _ := realPath(home)
	for _, h := range []string{home, realHome} {
		if within(real, h) || within(p, h) {
			if how == accessRead && within(real, filepath.Join(h, mediaSubdir)) && real != filepath.Join(h, mediaSubdir) {
				return nil
			}
			return ps.homeError(p)
		}
	}
	homeID, ok := fileIDOf(home)
	if !ok {
		return nil
	}
	// the same directory under another name (a bind mount, or the path under /proc/self/root)
	child := ""
	for d := real; ; d = filepath.Dir(d) {
		if id, ok := fileIDOf(d); ok && id == homeID {
			if how == accessRead && child != "" && filepath.Base(child) == mediaSubdir && child != real {
				return nil
			}
			return ps.homeError(p)
		}
		if d == filepath.Dir(d) {
			return nil
		}
		child = d
	}
}

// fileID identifies a file whatever its name.
type fileID struct{ dev, ino uint64 }

func fileIDOf(p string) (fileID, bool) {
	fi, err := os.Stat(p)
	if err != nil {
		return fileID{}, false
	}
	return idOf(fi)
}

func idOf(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), uint64(st.Ino)}, true
}

// maxHomeScan bounds the look for a hard link's other names in the home;
// a home too large to scan refuses the link.
const maxHomeScan = 20_000

// linkedIntoHome reports whether the file fi (a file with more than one
// link) is also a file in the home, media/ aside.
func (ps *Paths) linkedIntoHome(fi fs.FileInfo) bool {
	if ps.Home == "" {
		return false
	}
	id, ok := idOf(fi)
	homeID, ok2 := fileIDOf(ps.Home)
	if !ok || !ok2 || id.dev != homeID.dev {
		// hard links do not cross filesystems
		return false
	}
	found, seen := false, 0
	filepath.WalkDir(ps.Home, func(p string, d fs.DirEntry, err error) error {
		seen++
		if seen > maxHomeScan {
			found = true
			return fs.SkipAll
		}
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p == filepath.Join(ps.Home, mediaSubdir) {
				return fs.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err == nil && d.Type().IsRegular() {
			if fid, ok := idOf(info); ok && fid == id {
				found = true
				return fs.SkipAll
			}
		}
		return nil
	})
	return found
}

// openFile resolves p and opens it for a file tool: reading, or writing
// (flag holds O_CREATE to create it, with its directories). What is
// opened is checked again through the open descriptor: a regular file,
// and for writing one with a single link.
func (ps *Paths) openFile(p string, how access, flag int) (*os.File, string, error) {
	real, root, err := ps.resolve(p, how)
	if err != nil {
		return nil, "", err
	}
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %s: %v", ErrOutside, p, err)
	}
	if how == accessWrite && flag&os.O_CREATE != 0 {
		if err := mkdirBeneath(root, filepath.Dir(rel)); err != nil {
			return nil, "", fmt.Errorf("%s: %w", p, err)
		}
	}
	f, err := openBeneath(root, rel, flag)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EXDEV) {
			return nil, "", fmt.Errorf("%w: %s: a symbolic link appeared in the path after it was checked", ErrOutside, p)
		}
		return nil, "", err
	}
	fi, err := f.Stat()
	if err == nil {
		err = ps.checkOpened(p, real, fi, how)
	}
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return f, real, nil
}

func (ps *Paths) checkOpened(p, real string, fi fs.FileInfo, how access) error {
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", real)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrOutside, p)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink <= 1 {
		return nil
	}
	if how == accessWrite {
		return fmt.Errorf("%w: %s has %d hard links; a file with more than one name is never written, since another of its names may be one the agent may not touch", ErrOutside, p, st.Nlink)
	}
	if ps.linkedIntoHome(fi) {
		return ps.homeError(p + " (a hard link)")
	}
	return nil
}

// checkMedia refuses a resolved path in the home's media cache unless it
// lies in mediaDir (the turn's session's cache; "" allows none of it).
// Both are recognised by device and inode, as the home is.
func (ps *Paths) checkMedia(p, real, mediaDir string) error {
	if ps.Home == "" {
		return nil
	}
	cacheID, ok := fileIDOf(filepath.Join(ps.Home, mediaSubdir))
	if !ok {
		return nil // no cache: nothing in it to protect
	}
	ownID, hasOwn := fileID{}, false
	if mediaDir != "" {
		ownID, hasOwn = fileIDOf(mediaDir)
	}
	for d := filepath.Dir(real); ; d = filepath.Dir(d) {
		if id, ok := fileIDOf(d); ok {
			if hasOwn && id == ownID {
				return nil
			}
			if id == cacheID {
				return fmt.Errorf("%w: %s is in the media cache of another conversation", ErrOutside, p)
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
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
