package hooks

// Consent for directory hooks. A hook directory is code that runs inside
// the gateway's trust (it sees the gateway's whole environment, secrets
// included), so it runs only once the operator has approved its exact
// contents with `herald hooks allow`. Approvals live in their own file beside Hermes' shell-hook
// allowlist, in the same format: event "hook_dir", the directory as the
// command, and the SHA-256 of the directory's contents.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// DirAllowlistFile is the directory-hook consent file's name in the home.
const DirAllowlistFile = "hook-dirs-allowlist.json"

// dirConsentEvent marks a directory approval in the allowlist format.
const dirConsentEvent = "hook_dir"

// maxHashedBytes bounds how much of a hook directory DirHash reads.
const maxHashedBytes = 64 << 20

// codeFile is one file that makes up what a hook runs.
type codeFile struct{ rel, abs string }

// codeFiles lists, in a fixed order, the files that make up what a hook
// directory runs: HOOK.yaml, its handlers, every Python module and every
// executable file below it (symlinks followed), and an executable that
// HOOK.yaml's command: names outside it. What a hook writes as it runs
// (logs, JSON state, caches) is not code and is left out, so a hook
// that keeps state in its own directory does not un-approve itself.
func codeFiles(dir string) ([]codeFile, error) {
	var files []codeFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "__pycache__" || (p != dir && strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		code := name == "HOOK.yaml" || strings.HasPrefix(name, "handler") || strings.HasSuffix(name, ".py")
		if !code {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
				code = true
			}
		}
		if code {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, codeFile{rel, p})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if h, _, ok := readHookDir(dir); ok && h.Kind == "exec" && !strings.HasPrefix(h.Argv[0], dir+string(filepath.Separator)) {
		files = append(files, codeFile{"command:" + h.Argv[0], h.Argv[0]})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].rel < files[j].rel })
	return files, nil
}

// DirHash is the SHA-256 over a hook directory's code files (codeFiles),
// by relative path and contents: any change to what the hook runs
// changes it.
func DirHash(dir string) (string, error) {
	files, err := codeFiles(dir)
	if err != nil {
		return "", fmt.Errorf("hash hook directory %s: %w", dir, err)
	}
	sum := sha256.New()
	budget := int64(maxHashedBytes)
	for _, f := range files {
		st, err := os.Stat(f.abs)
		if err != nil || !st.Mode().IsRegular() {
			fmt.Fprintf(sum, "%s\x00special\x00", f.rel)
			continue
		}
		fh, err := os.Open(f.abs)
		if err != nil {
			return "", fmt.Errorf("hash hook directory %s: %w", dir, err)
		}
		fmt.Fprintf(sum, "%s\x00%d\x00", f.rel, st.Size())
		n, err := io.Copy(sum, io.LimitReader(fh, budget))
		fh.Close()
		if err != nil {
			return "", fmt.Errorf("hash hook directory %s: %w", dir, err)
		}
		if budget -= n; budget <= 0 {
			return "", fmt.Errorf("hash hook directory %s: more than %d MiB of code", dir, maxHashedBytes>>20)
		}
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// DirConsent decides whether a hook directory may be loaded. Only an
// approval of its exact contents (`herald hooks allow <name>`) lets it
// load: a directory hook gets the gateway's whole environment, so the
// accept switches that approve shell hooks (--accept-hooks,
// HERMES_ACCEPT_HOOKS, hooks_auto_accept) do not approve it — set once in
// a service's environment, they would approve whatever later appears in
// the hooks directory.
type DirConsent struct {
	List Allowlist
	// AcceptSwitch says an accept switch is on, so that a refusal can say
	// it does not cover directory hooks.
	AcceptSwitch bool
}

// DirVerdict is what DirConsent.Check decided.
type DirVerdict struct {
	OK bool
	// Hash is the directory's hash now.
	Hash string
	// Msg says why a hook is refused; "" when an approval matched.
	Msg string
}

// Check looks up the approval of h's directory. Without one (or with one
// for other contents), the hook is refused.
func (c *DirConsent) Check(h DirHook) DirVerdict {
	if abs, err := filepath.Abs(h.Dir); err == nil {
		h.Dir = abs
	}
	hash, err := DirHash(h.Dir)
	if err != nil {
		return DirVerdict{Msg: fmt.Sprintf("[hooks] Skipping %s: %v", h.Name, err)}
	}
	v := DirVerdict{Hash: hash}
	e, found := c.List.Find(dirConsentEvent, h.Dir)
	if found && e.ScriptSHA256 == hash {
		v.OK = true
		return v
	}
	why := "is new"
	if found {
		why = "changed since it was approved"
	}
	v.Msg = fmt.Sprintf("[hooks] Skipping %s: the hook directory %s, so it does not run%s; review it, then approve it with `herald hooks allow %s`", h.Name, why, envNote(h), h.Dir)
	if c.AcceptSwitch {
		v.Msg += " (the accept-hooks switch approves shell hooks only: a directory hook sees every secret of the gateway)"
	}
	return v
}

// envNote names the variables a hook asks for, for consent messages.
func envNote(h DirHook) string {
	if len(h.Env) == 0 {
		return ""
	}
	names := make([]string, 0, len(h.Env))
	for k := range h.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	return fmt.Sprintf(" (it asks for env: %s)", strings.Join(names, ", "))
}

// ApproveHash records consent for (event, command) bound to hash,
// replacing an earlier entry for the same pair.
func (a Allowlist) ApproveHash(event, command, hash string) error {
	entry := Consented{Event: event, Command: command, ApprovedAt: time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"), ScriptSHA256: hash}
	return a.update(func(list []Consented) []Consented {
		out := list[:0:0]
		for _, x := range list {
			if !(x.Event == event && x.Command == command) {
				out = append(out, x)
			}
		}
		return append(out, entry)
	})
}

// ApproveDir records consent for the hook directory dir as it is now.
func (a Allowlist) ApproveDir(dir string) (DirHook, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	h, diags, ok := readHookDir(dir)
	if !ok {
		msg := "not a hook directory"
		if len(diags) > 0 {
			msg = diags[len(diags)-1].Msg
		}
		return DirHook{}, fmt.Errorf("%s: %s", dir, msg)
	}
	hash, err := DirHash(dir)
	if err != nil {
		return DirHook{}, err
	}
	return h, a.ApproveHash(dirConsentEvent, h.Dir, hash)
}

// RevokeDir removes the approval of the hook directory dir.
func (a Allowlist) RevokeDir(dir string) (int, error) {
	n := 0
	err := a.update(func(list []Consented) []Consented {
		out := list[:0:0]
		for _, x := range list {
			if x.Event == dirConsentEvent && x.Command == dir {
				n++
				continue
			}
			out = append(out, x)
		}
		return out
	})
	return n, err
}

// DirApproved reports whether dir is approved with its current contents.
func (a Allowlist) DirApproved(dir string) (approved, changed bool) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	e, found := a.Find(dirConsentEvent, dir)
	if !found {
		return false, false
	}
	hash, err := DirHash(dir)
	return err == nil && hash == e.ScriptSHA256, err != nil || hash != e.ScriptSHA256
}
