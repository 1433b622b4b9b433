package hooks

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/heraldgw/herald"
)

// AllowlistFile is the consent file's name in the herald home, the same
// as Hermes' so both can share a home.
const AllowlistFile = "shell-hooks-allowlist.json"

// Consented is one allowlist entry: Hermes' keys plus the script's SHA-256
// at approval, so an edited script is noticed rather than trusted.
type Consented struct {
	Event        string  `json:"event"`
	Command      string  `json:"command"`
	ApprovedAt   string  `json:"approved_at"`
	ScriptMtime  *string `json:"script_mtime_at_approval"`
	ScriptSHA256 string  `json:"script_sha256,omitempty"`
}

// Allowlist is the consent file at Path. Log, if set, receives the
// warnings about entries that cannot be read (default: slog.Default).
type Allowlist struct {
	Path string
	Log  *slog.Logger
}

// allowlistFile is the file as read: the entries that decode, and the
// raw text of every entry, so a rewrite keeps the ones skipped.
type allowlistFile struct {
	entries []Consented
	raw     []json.RawMessage
	valid   []bool // per raw entry: decoded into entries
}

// read decodes the file. A missing file is empty; a file that cannot be
// read or is not an allowlist is an error naming it. A malformed entry
// is skipped with a warning naming it and its place; the others stand.
func (a Allowlist) read() (*allowlistFile, error) {
	b, err := herald.ReadRegularFile(a.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return &allowlistFile{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the shell-hook allowlist: %w", err)
	}
	var doc struct {
		Approvals []json.RawMessage `json:"approvals"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("the shell-hook allowlist %s is not valid: %w (fix or remove it; it is left as it is)", a.Path, err)
	}
	f := &allowlistFile{raw: doc.Approvals, valid: make([]bool, len(doc.Approvals))}
	for i, raw := range doc.Approvals {
		e, err := decodeConsented(raw)
		if err != nil {
			a.log().Warn(fmt.Sprintf("%s: approvals[%d] skipped: %v", a.Path, i, err), "entry", clip400(string(raw)))
			continue
		}
		f.entries = append(f.entries, e)
		f.valid[i] = true
	}
	return f, nil
}

// decodeConsented decodes one entry; it needs an event and a command.
func decodeConsented(raw json.RawMessage) (Consented, error) {
	var e Consented
	if err := json.Unmarshal(raw, &e); err != nil {
		return Consented{}, err
	}
	if e.Event == "" || e.Command == "" {
		return Consented{}, errors.New("an approval needs an event and a command")
	}
	return e, nil
}

func (a Allowlist) log() *slog.Logger {
	if a.Log != nil {
		return a.Log
	}
	return slog.Default()
}

// Load returns the entries that can be read; a file that cannot be read
// at all is logged and reads as empty (nothing is approved).
func (a Allowlist) Load() []Consented {
	f, err := a.read()
	if err != nil {
		a.log().Warn(err.Error())
		return nil
	}
	return f.entries
}

// update runs fn on the entries under an exclusive flock on the sibling
// .lock file and writes the result atomically (temp file + rename, 0600).
// Entries skipped as malformed are written back as they were; a file that
// cannot be read or parsed is never rewritten (the error says why).
func (a Allowlist) update(fn func([]Consented) []Consented) error {
	lf, err := os.OpenFile(a.Path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("allowlist lock: %w", err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("allowlist lock: %w", err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	f, err := a.read()
	if err != nil {
		return err
	}
	out := []json.RawMessage{}
	for i, raw := range f.raw {
		if !f.valid[i] {
			out = append(out, raw)
		}
	}
	for _, e := range fn(f.entries) {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		out = append(out, b)
	}
	b, err := json.MarshalIndent(struct {
		Approvals []json.RawMessage `json:"approvals"`
	}{out}, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(a.Path), ".shell-hooks-allowlist-*.tmp")
	if err != nil {
		return fmt.Errorf("allowlist write: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), a.Path)
}

// Approve records consent for (event, command), replacing an earlier
// entry for the same pair.
func (a Allowlist) Approve(event, command string) error {
	entry := Consented{Event: event, Command: command, ApprovedAt: time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")}
	if p := ScriptPath(command); p != "" {
		if st, err := os.Stat(p); err == nil {
			m := st.ModTime().UTC().Format("2006-01-02T15:04:05.000000Z")
			entry.ScriptMtime = &m
		}
	}
	entry.ScriptSHA256 = ScriptHash(command)
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

// Revoke removes every entry for command (any event) and says how many.
func (a Allowlist) Revoke(command string) (int, error) {
	n := 0
	err := a.update(func(list []Consented) []Consented {
		out := list[:0:0]
		for _, x := range list {
			if x.Command == command {
				n++
				continue
			}
			out = append(out, x)
		}
		return out
	})
	return n, err
}

// Find returns the entry for (event, command).
func (a Allowlist) Find(event, command string) (Consented, bool) {
	return Approvals(a.Load()).Find(event, command)
}

// Approvals is the allowlist as loaded once, for a listing that looks up
// many hooks (and warns about a malformed entry once).
type Approvals []Consented

// Find returns the entry for (event, command).
func (l Approvals) Find(event, command string) (Consented, bool) {
	for _, x := range l {
		if x.Event == event && x.Command == command {
			return x, true
		}
	}
	return Consented{}, false
}

var scriptExts = []string{".sh", ".bash", ".zsh", ".fish", ".py", ".pyw", ".rb", ".pl", ".lua", ".js", ".mjs", ".cjs", ".ts"}

// ScriptPath resolves the script a command runs, as Hermes does: the
// first word ending in a script extension, else the first containing "/"
// or starting with "~", else the first.
func ScriptPath(command string) string {
	argv, err := SplitCommand(command)
	if err != nil || len(argv) == 0 {
		return ""
	}
	for _, w := range argv {
		for _, ext := range scriptExts {
			if strings.HasSuffix(w, ext) {
				return w
			}
		}
	}
	for _, w := range argv {
		if strings.Contains(w, "/") {
			return w
		}
	}
	return argv[0]
}

// ScriptHash is the SHA-256 of the script a command runs, or of the
// command itself when no script file can be read.
func ScriptHash(command string) string {
	h := sha256.New()
	if typedKey(command) {
		h.Write([]byte(command)) // an http, prompt or agent key: no script to read
		return hex.EncodeToString(h.Sum(nil))
	}
	if p := ScriptPath(command); p != "" {
		if f, err := os.Open(p); err == nil {
			defer f.Close()
			if _, err := io.Copy(h, f); err == nil {
				return hex.EncodeToString(h.Sum(nil))
			}
		}
	}
	h.Write([]byte(command))
	return hex.EncodeToString(h.Sum(nil))
}

// Consent decides whether shell hooks may run.
type Consent struct {
	List Allowlist
	// Accept is any of --accept-hooks, HERALD_ACCEPT_HOOKS,
	// HERMES_ACCEPT_HOOKS or hooks_auto_accept.
	Accept bool
	// Prompt, when set (herald chat on a terminal), asks once per hook.
	In  io.Reader
	Out io.Writer
}

// ErrNotApproved is returned by Check for a hook that must not run.
var ErrNotApproved = errors.New("shell hook not approved")

// Check returns nil when the hook may run (recording new consent), and a
// warning to log (possibly alongside a nil error).
//
// With Accept set (the operator said, once, to accept what is
// configured), a script that changed since its approval is accepted too,
// as Hermes runs it, and its new hash recorded; the warning names it. An
// entry without a hash (written by Hermes) gets one the same way.
func (c *Consent) Check(s *ShellSpec) (warning string, err error) {
	key, what := s.Key(), consentWhat(s)
	if e, ok := c.List.Find(s.Event, key); ok {
		switch {
		case e.ScriptSHA256 == ScriptHash(key):
			return "", nil
		case c.Accept:
			what := "changed since it was approved"
			if e.ScriptSHA256 == "" {
				what = "was approved without a script hash (a Hermes entry)"
			}
			if err := c.List.Approve(s.Event, key); err != nil {
				return fmt.Sprintf("shell hook %q for %s %s: accepted by the accept-hooks switch, but the new approval could not be saved (%v); it holds for this run only", s.Name(), s.Event, what, err), nil
			}
			return fmt.Sprintf("shell hook %q for %s %s: accepted by the accept-hooks switch, and the script's new hash recorded", s.Name(), s.Event, what), nil
		case e.ScriptSHA256 == "":
			return fmt.Sprintf("shell hook %q for %s was approved without a script hash (a Hermes entry); run `herald hooks allow %s %q` to bind the approval to the script's contents", s.Name(), s.Event, s.Event, key), nil
		default:
			return fmt.Sprintf("shell hook %q for %s changed since it was approved, so it is not trusted; review it, then run `herald hooks allow %s %q`", s.Name(), s.Event, s.Event, key), ErrNotApproved
		}
	}
	if c.Accept {
		if err := c.List.Approve(s.Event, key); err != nil {
			return "could not save the shell-hook approval (" + err.Error() + "); it holds for this run only", nil
		}
		return "", nil
	}
	if c.In != nil && c.Out != nil {
		fmt.Fprintf(c.Out, "\n⚠ herald %s hook\n  Event:   %s\n  %s\nAllow this hook to run? [y/N]: ", s.Kind(), s.Event, what)
		line, _ := bufio.NewReader(c.In).ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			if err := c.List.Approve(s.Event, key); err != nil {
				return "could not save the shell-hook approval (" + err.Error() + "); it holds for this run only", nil
			}
			return "", nil
		}
	}
	return fmt.Sprintf("%s hook %q for %s is not approved, so it does not run; approve it with `herald hooks allow %s %q`, or start with --accept-hooks / HERALD_ACCEPT_HOOKS=1 / hooks_auto_accept: true", kindWord(s), s.Name(), s.Event, s.Event, key), ErrNotApproved
}

// kindWord is "shell" for a command entry, else its type.
func kindWord(s *ShellSpec) string {
	if s.Kind() == TypeCommand {
		return "shell"
	}
	return s.Kind()
}

// consentWhat is what the consent prompt shows of an entry.
func consentWhat(s *ShellSpec) string {
	switch s.Kind() {
	case TypeHTTP:
		return "URL:     " + redactURL(s.URL) + "\n  The event's payload is sent to this address."
	case TypePrompt, TypeAgent:
		return "Prompt:  " + s.Prompt + "\n  The event's payload is sent to the model with this prompt."
	}
	return "Command: " + s.Command + "\n  Commands run with your full user credentials."
}

// Truthy is Hermes' reading of a consent switch: the strings 1, true,
// yes, on (any case) or a YAML boolean true; never an integer.
func Truthy(tag, value string) bool {
	switch tag {
	case "!!bool":
		return strings.EqualFold(value, "true")
	case "!!str", "":
		switch strings.ToLower(strings.TrimSpace(value)) {
		case "1", "true", "yes", "on":
			return true
		}
	}
	return false
}

// ShellHooks registers the hooks: block into a registry.
type ShellHooks struct {
	Registry *Registry
	Runner   *ShellRunner
	Consent  *Consent
}

// RegisterResult says what happened to one spec.
type RegisterResult struct {
	Spec    ShellSpec
	Running bool
	// Blocker is set for a block_on_failure hook on pre_tool_call or
	// pre_llm_call that cannot run (not approved, or a prompt hook with
	// no model): it blocks instead of letting calls through.
	Blocker bool
	Warning string
}

// Register subscribes every approved spec (idempotent per event,
// matcher and command), in declared order.
func (h *ShellHooks) Register(specs []ShellSpec) []RegisterResult {
	seen := map[string]bool{}
	var out []RegisterResult
	for _, s := range specs {
		key := s.Event + "\x00" + s.ClaudeEvent + "\x00" + s.Matcher + "\x00" + s.Key()
		if seen[key] {
			continue
		}
		seen[key] = true
		res := RegisterResult{Spec: s}
		warn, err := h.Consent.Check(&s)
		res.Warning = warn
		if err == nil && (s.Kind() == TypePrompt || s.Kind() == TypeAgent) && h.Runner.Judge == nil {
			// approved, but there is no model to ask
			err = fmt.Errorf("%s: %s hook cannot load: no model to ask (no model endpoint is configured)", s.At(), s.Kind())
			res.Warning = joinText(res.Warning, err.Error(), "; ")
		}
		sub := Subscription{Name: s.Name(), Attach: AttachShell, Events: []string{s.Event}, Timeout: s.Timeout + 2*time.Second, FailClosed: s.FailClosed, Concurrent: true, Inline: s.Inline(), Priority: s.Priority}
		switch {
		case s.glob && s.Matcher != "":
			spec := s
			sub.Accept = globAccept(s.Event, spec.globMatches)
		case s.Matcher != "":
			spec := s
			sub.Matcher = spec.Matches
		}
		if s.Dialect == "claude" {
			var match func(string) bool
			if s.Matcher != "" && claudeValueMatched(s.Event) {
				spec := s
				match = spec.claudeMatches
			}
			sub.Accept = ClaudeAccept(s.Event, s.ClaudeEvent, match)
		}
		switch {
		case err == nil && s.Persistent:
			ph := NewPersistent(h.Runner, s, s.Concurrency)
			sub.Handler = ph.Handler()
			sub.OnClosed = ph.Close
			res.Running = true
		case err == nil:
			sub.Handler = h.Runner.Handler(s)
			res.Running = true
		case s.FailClosed && CanBlockOnFailure(s.Event):
			why := err
			if errors.Is(err, ErrNotApproved) {
				why = errors.New("not approved (run `herald hooks allow` to approve it)")
			}
			sub.Handler = func(ctx context.Context, ev Event) (any, error) { return nil, why }
			res.Blocker = true
		default:
			out = append(out, res)
			continue
		}
		h.Registry.Subscribe(sub)
		out = append(out, res)
	}
	return out
}

// SortedEvents returns the events of specs, sorted, for listings.
func SortedEvents(specs []ShellSpec) []string {
	m := map[string]bool{}
	for _, s := range specs {
		m[s.Event] = true
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
