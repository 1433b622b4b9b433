package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFileToolsRefuseHome replays the ways a model reaches herald's home
// through the file tools: each is refused and config.yaml is unchanged.
func TestFileToolsRefuseHome(t *testing.T) {
	e := newFileEnv(t)
	cfg := filepath.Join(e.home, "config.yaml")
	os.MkdirAll(filepath.Join(e.home, "hooks"), 0o755)
	os.MkdirAll(filepath.Join(e.home, "media"), 0o755)
	os.WriteFile(filepath.Join(e.home, "media", "photo.txt"), []byte("a received file"), 0o644)
	if err := os.Link(cfg, filepath.Join(e.work, "cfg-hardlink")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(cfg, filepath.Join(e.work, "cfg-symlink"))
	os.Symlink(filepath.Join(e.home, "hooks"), filepath.Join(e.work, "hooks-dir"))
	os.Symlink(e.home, filepath.Join(e.other, "home-parent"))
	attack := "hooks_auto_accept: true\n"
	tools := map[string]Tool{"read_file": &ReadFile{Paths: e.paths}, "write_file": &WriteFile{Paths: e.paths}, "patch": &Patch{Paths: e.paths}}
	args := func(tool, p string) map[string]any {
		switch tool {
		case "write_file":
			return map[string]any{"path": p, "content": attack}
		case "patch":
			return map[string]any{"path": p, "old_string": "model: x", "new_string": attack}
		}
		return map[string]any{"path": p}
	}
	for _, p := range []string{
		"cfg-hardlink",                   // a hard link to config.yaml in the working directory
		"cfg-symlink",                    // a symbolic link to config.yaml
		"link-to-home/config.yaml",       // a symbolic link to the home
		".herald/config.yaml",            // the home inside the working directory
		".herald/../.herald/config.yaml", // .. paths
		"sub/../.herald/./config.yaml",   //
		"../" + filepath.Base(e.work) + "/.herald/config.yaml", // back in through the parent
		"hooks-dir/zz/HOOK.yaml",                               // a symbolic link to a directory in the home
		".herald/media/../config.yaml",                         // out of media/ again
		filepath.Join(e.home, "config.yaml"),                   // absolute
		"/proc/self/root" + cfg,                                // another name for the same directory
	} {
		for name, tool := range tools {
			t.Run(name+" "+p, func(t *testing.T) {
				_, err := callTool(t, tool, args(name, p))
				if err == nil || !errors.Is(err, ErrOutside) {
					t.Errorf("err = %v, want a refusal", err)
				}
				if b, _ := os.ReadFile(cfg); string(b) != "model: x" {
					t.Fatalf("config.yaml now %q", b)
				}
				if _, err := os.Stat(filepath.Join(e.home, "hooks", "zz")); err == nil {
					t.Fatal("a directory was made in the home's hooks/")
				}
			})
		}
	}
	t.Run("/proc is refused even when allowed", func(t *testing.T) {
		ps := &Paths{Workdir: e.work, Allowed: []string{"/"}, Home: e.home}
		for _, p := range []string{"/proc/self/environ", "/proc/self/mem", "/proc/" + strconv.Itoa(os.Getpid()) + "/environ"} {
			if _, err := callTool(t, &ReadFile{Paths: ps}, map[string]any{"path": p}); !errors.Is(err, ErrOutside) {
				t.Errorf("%s: %v", p, err)
			}
		}
	})
	t.Run("media may be read, not written", func(t *testing.T) {
		out, err := tools["read_file"].Run(context.Background(), &Call{Args: map[string]any{"path": ".herald/media/photo.txt"}, Turn: &Turn{MediaDir: filepath.Join(e.home, "media")}})
		if err != nil || !strings.Contains(out, "a received file") {
			t.Fatalf("read: %v %v", out, err)
		}
		if _, err := callTool(t, tools["write_file"], args("write_file", ".herald/media/photo.txt")); !errors.Is(err, ErrOutside) {
			t.Errorf("write into media: %v", err)
		}
	})
	t.Run("a hard-linked file outside the home is read, not written", func(t *testing.T) {
		os.Link(filepath.Join(e.work, "a.txt"), filepath.Join(e.work, "a-link"))
		if _, err := callTool(t, tools["read_file"], map[string]any{"path": "a-link"}); err != nil {
			t.Errorf("read: %v", err)
		}
		if _, err := callTool(t, tools["write_file"], args("write_file", "a-link")); err == nil || !strings.Contains(err.Error(), "hard links") {
			t.Errorf("write: %v", err)
		}
	})
}

// TestOpenRefusesSwappedLink: a path checked while it was a plain file and
// replaced by a symbolic link (to the home's config) before the open is
// refused at the open.
func TestOpenRefusesSwappedLink(t *testing.T) {
	e := newFileEnv(t)
	cfg := filepath.Join(e.home, "config.yaml")
	for _, tc := range []struct{ name, swap string }{
		{"last component", "victim.txt"},
		{"a parent directory", "dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.MkdirAll(filepath.Join(e.work, "dir"), 0o755)
			os.WriteFile(filepath.Join(e.work, "dir", "victim.txt"), []byte("x"), 0o644)
			os.WriteFile(filepath.Join(e.work, "victim.txt"), []byte("x"), 0o644)
			p := filepath.Join(e.work, tc.swap)
			rel := "victim.txt"
			if tc.swap == "dir" {
				rel = filepath.Join("dir", "victim.txt")
			}
			real, root, err := e.paths.resolve(rel, accessWrite)
			if err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(p)
			target := cfg
			if tc.swap == "dir" {
				target = e.home
				os.WriteFile(filepath.Join(e.home, "victim.txt"), []byte("home"), 0o600)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			r, _ := filepath.Rel(root, real)
			f, err := openBeneath(root, r, os.O_WRONLY)
			if err == nil {
				f.Close()
				t.Fatal("opened through a link swapped in after the check")
			}
			os.Remove(p)
		})
	}
}
