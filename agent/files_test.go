package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type fileEnv struct {
	work, other, home, allowed string
	paths                      *Paths
}

func newFileEnv(t *testing.T) *fileEnv {
	root := t.TempDir()
	e := &fileEnv{work: filepath.Join(root, "work"), other: filepath.Join(root, "other"), home: filepath.Join(root, "work", ".herald"), allowed: filepath.Join(root, "shared")}
	for _, d := range []string{e.work, e.other, e.home, e.allowed} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(e.work, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	os.WriteFile(filepath.Join(e.other, "secret.txt"), []byte("nope"), 0o644)
	os.WriteFile(filepath.Join(e.home, "config.yaml"), []byte("model: x"), 0o600)
	os.WriteFile(filepath.Join(e.allowed, "s.txt"), []byte("shared"), 0o644)
	os.Symlink(e.home, filepath.Join(e.work, "link-to-home"))
	os.Symlink(e.other, filepath.Join(e.work, "link-out"))
	os.Symlink(filepath.Join(e.other, "missing"), filepath.Join(e.work, "dangling"))
	e.paths = &Paths{Workdir: e.work, Allowed: []string{e.allowed}, Home: e.home}
	return e
}

func callTool(t *testing.T, tool Tool, args map[string]any) (map[string]any, error) {
	t.Helper()
	out, err := tool.Run(context.Background(), &Call{Args: args})
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("tool output %q: %v", out, err)
	}
	return m, nil
}

func TestFilePathsConfined(t *testing.T) {
	e := newFileEnv(t)
	for _, tc := range []struct {
		path   string
		ok     bool
		reason string
	}{
		{"a.txt", true, ""},
		{filepath.Join(e.work, "a.txt"), true, ""},
		{"new/dir/file.txt", true, ""},
		{filepath.Join(e.allowed, "s.txt"), true, ""},
		{"../other/secret.txt", false, "outside the working directory"},
		{filepath.Join(e.other, "secret.txt"), false, "outside the working directory"},
		{".herald/config.yaml", false, "inside herald's home"},
		{filepath.Join(e.home, "hooks", "new.sh"), false, "inside herald's home"},
		{"link-to-home/config.yaml", false, "inside herald's home"},
		{"link-out/secret.txt", false, "outside the working directory"},
		{"dangling", false, "dangling"},
		{"", false, "required"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			_, err := e.paths.Resolve(tc.path)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v", err)
			}
			if err != nil && !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("err %q lacks %q", err, tc.reason)
			}
			if err != nil && tc.path != "" && !errors.Is(err, ErrOutside) {
				t.Errorf("err %v does not wrap ErrOutside", err)
			}
		})
	}
}

func TestFileTools(t *testing.T) {
	e := newFileEnv(t)
	rd, wr, pt := &ReadFile{Paths: e.paths}, &WriteFile{Paths: e.paths}, &Patch{Paths: e.paths}

	t.Run("read", func(t *testing.T) {
		m, err := callTool(t, rd, map[string]any{"path": "a.txt"})
		if err != nil || m["content"] != "one\ntwo\nthree\n" || m["total_lines"] != float64(3) {
			t.Fatalf("%v %v", m, err)
		}
		m, _ = callTool(t, rd, map[string]any{"path": "a.txt", "offset": 2, "limit": 1})
		if m["content"] != "two\n" || m["from_line"] != float64(2) {
			t.Errorf("range %v", m)
		}
	})
	t.Run("write creates directories", func(t *testing.T) {
		if _, err := callTool(t, wr, map[string]any{"path": "sub/b.txt", "content": "hello"}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(e.work, "sub", "b.txt"))
		if string(b) != "hello" {
			t.Errorf("wrote %q", b)
		}
	})
	for _, tool := range []Tool{rd, wr, pt} {
		t.Run(tool.Name()+" refuses the home", func(t *testing.T) {
			_, err := callTool(t, tool, map[string]any{"path": "link-to-home/config.yaml", "content": "x", "old_string": "model", "new_string": "y"})
			if !errors.Is(err, ErrOutside) {
				t.Errorf("err %v", err)
			}
			b, _ := os.ReadFile(filepath.Join(e.home, "config.yaml"))
			if string(b) != "model: x" {
				t.Errorf("home file changed: %q", b)
			}
		})
		t.Run(tool.Name()+" refuses outside", func(t *testing.T) {
			_, err := callTool(t, tool, map[string]any{"path": "../other/secret.txt", "content": "x", "old_string": "nope", "new_string": "y"})
			if !errors.Is(err, ErrOutside) {
				t.Errorf("err %v", err)
			}
		})
	}
	t.Run("patch", func(t *testing.T) {
		os.WriteFile(filepath.Join(e.work, "p.txt"), []byte("a b a c"), 0o640)
		for _, tc := range []struct {
			name string
			args map[string]any
			err  string
			want string
		}{
			{"not found", map[string]any{"old_string": "zzz", "new_string": "q"}, "not found", "a b a c"},
			{"ambiguous", map[string]any{"old_string": "a", "new_string": "q"}, "occurs 2 times", "a b a c"},
			{"unique", map[string]any{"old_string": "b", "new_string": "B"}, "", "a B a c"},
			{"replace all", map[string]any{"old_string": "a", "new_string": "x", "replace_all": true}, "", "x B x c"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tc.args["path"] = "p.txt"
				_, err := callTool(t, pt, tc.args)
				if (err != nil) != (tc.err != "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
					t.Errorf("err %v, want %q", err, tc.err)
				}
				b, _ := os.ReadFile(filepath.Join(e.work, "p.txt"))
				if string(b) != tc.want {
					t.Errorf("file %q, want %q", b, tc.want)
				}
			})
		}
		if fi, _ := os.Stat(filepath.Join(e.work, "p.txt")); fi.Mode().Perm() != 0o640 {
			t.Errorf("mode changed to %v", fi.Mode())
		}
	})
}
