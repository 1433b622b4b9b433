package hooks

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// The prompt through a real terminal: y approves and records, n leaves
// the hook unapproved; the recorded answer is not asked again.
func TestConsentPromptOnTerminal(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   error
	}{{"y", nil}, {"yes", nil}, {"n", ErrNotApproved}, {"", ErrNotApproved}} {
		t.Run("answer "+tc.answer, func(t *testing.T) {
			dir := t.TempDir()
			spec := ShellSpec{Event: PreToolCallHook, Command: writeScript(t, dir, "guard.sh", "echo '{}'\n")}
			list := Allowlist{Path: filepath.Join(dir, AllowlistFile)}
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer ptmx.Close()
			defer tty.Close()
			type result struct {
				warn string
				err  error
			}
			done := make(chan result, 1)
			go func() {
				w, err := (&Consent{List: list, In: tty, Out: tty}).Check(&spec)
				done <- result{w, err}
			}()
			// read the prompt from the terminal, then type the answer
			r := bufio.NewReader(ptmx)
			var seen strings.Builder
			for !strings.Contains(seen.String(), "Allow this hook to run? [y/N]") {
				b, err := r.ReadByte()
				if err != nil {
					t.Fatalf("prompt not shown: %v (%q)", err, seen.String())
				}
				seen.WriteByte(b)
			}
			if _, err := ptmx.Write([]byte(tc.answer + "\n")); err != nil {
				t.Fatal(err)
			}
			var res result
			select {
			case res = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("no answer read from the terminal")
			}
			if res.err != tc.want {
				t.Fatalf("err = %v (%s), want %v", res.err, res.warn, tc.want)
			}
			if !strings.Contains(seen.String(), spec.Command) {
				t.Fatalf("prompt does not name the command: %q", seen.String())
			}
			_, recorded := list.Find(spec.Event, spec.Command)
			if recorded != (tc.want == nil) {
				t.Fatalf("recorded = %v", recorded)
			}
			if tc.want == nil {
				// second run: no prompt, no terminal needed
				if _, err := (&Consent{List: list}).Check(&spec); err != nil {
					t.Fatalf("second run: %v", err)
				}
			}
		})
	}
}

// Without a terminal and without consent, nothing runs — except that an
// unapproved fail_closed pre_tool_call hook becomes a blocker.
func TestUnapprovedHooks(t *testing.T) {
	dir := t.TempDir()
	reg := NewRegistry(nil)
	defer reg.Close(t.Context())
	marker := filepath.Join(dir, "ran")
	script := writeScript(t, dir, "guard.sh", "touch "+marker+"\necho '{}'\n")
	sh := &ShellHooks{Registry: reg, Runner: &ShellRunner{Environ: os.Environ()}, Consent: &Consent{List: Allowlist{Path: filepath.Join(dir, AllowlistFile)}}}
	res := sh.Register([]ShellSpec{
		{Event: PreLLMCallHook, Command: script, Timeout: time.Minute},
		{Event: PreToolCallHook, Command: script, Timeout: time.Minute, FailClosed: true},
	})
	if res[0].Running || res[0].Blocker || !strings.Contains(res[0].Warning, "herald hooks allow") {
		t.Fatalf("unapproved hook: %+v", res[0])
	}
	if !res[1].Blocker {
		t.Fatalf("fail_closed hook: %+v", res[1])
	}
	if got := reg.PreLLMCall(t.Context(), &PreLLMCall{SessionID: "s"}); got != "" {
		t.Fatalf("context from an unapproved hook: %q", got)
	}
	d := reg.PreToolCall(t.Context(), &PreToolCall{ToolName: "terminal", SessionID: "s"})
	if d.Action != "block" || !strings.Contains(d.Message, "hook "+script+" failed closed: not approved") {
		t.Fatalf("decision = %+v", d)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an unapproved script ran")
	}
}

// Each consent source approves (and records) a new hook.
func TestConsentAcceptRecords(t *testing.T) {
	dir := t.TempDir()
	spec := ShellSpec{Event: PreToolCallHook, Command: writeScript(t, dir, "ok.sh", "echo '{}'\n")}
	list := Allowlist{Path: filepath.Join(dir, AllowlistFile)}
	if _, err := (&Consent{List: list, Accept: true}).Check(&spec); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(list.Path)
	var doc struct {
		Approvals []map[string]any `json:"approvals"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Approvals) != 1 {
		t.Fatalf("allowlist %s: %v", b, err)
	}
	e := doc.Approvals[0]
	for _, k := range []string{"event", "command", "approved_at", "script_mtime_at_approval", "script_sha256"} {
		if _, ok := e[k]; !ok {
			t.Errorf("entry lacks %s: %s", k, b)
		}
	}
}

// A script changed since its approval stays refused, with today's
// message, unless an accept switch is on: then it runs, its new hash is
// recorded, and the warning names it. A Hermes entry without a hash is
// bound to the script the same way.
func TestConsentAcceptChangedScript(t *testing.T) {
	dir := t.TempDir()
	spec := ShellSpec{Event: PreToolCallHook, Command: writeScript(t, dir, "guard.sh", "echo '{}'\n")}
	list := Allowlist{Path: filepath.Join(dir, AllowlistFile)}
	if err := list.Approve(spec.Event, spec.Command); err != nil {
		t.Fatal(err)
	}
	writeScript(t, dir, "guard.sh", "echo '{\"action\":\"block\",\"message\":\"edited\"}'\n")

	warn, err := (&Consent{List: list}).Check(&spec)
	if err != ErrNotApproved || !strings.Contains(warn, "changed since it was approved, so it is not trusted") || !strings.Contains(warn, "herald hooks allow") {
		t.Fatalf("without the switch: %v, %q", err, warn)
	}
	if e, _ := list.Find(spec.Event, spec.Command); e.ScriptSHA256 == ScriptHash(spec.Command) {
		t.Fatal("a refusal recorded the new hash")
	}

	warn, err = (&Consent{List: list, Accept: true}).Check(&spec)
	if err != nil || !strings.Contains(warn, spec.Command) || !strings.Contains(warn, "changed since it was approved: accepted by the accept-hooks switch") {
		t.Fatalf("with the switch: %v, %q", err, warn)
	}
	if e, _ := list.Find(spec.Event, spec.Command); e.ScriptSHA256 != ScriptHash(spec.Command) {
		t.Fatalf("new hash not recorded: %+v", e)
	}
	if warn, err := (&Consent{List: list}).Check(&spec); err != nil || warn != "" {
		t.Fatalf("after acceptance, without the switch: %v, %q", err, warn)
	}

	// a Hermes entry: no hash
	os.WriteFile(list.Path, []byte(`{"approvals":[{"event":"pre_tool_call","command":`+strconv.Quote(spec.Command)+`,"approved_at":"2026-04-20T12:00:00Z","script_mtime_at_approval":null}]}`), 0o600)
	if warn, err := (&Consent{List: list}).Check(&spec); err != nil || !strings.Contains(warn, "without a script hash") {
		t.Fatalf("hashless entry: %v, %q", err, warn)
	}
	if warn, err := (&Consent{List: list, Accept: true}).Check(&spec); err != nil || !strings.Contains(warn, "hash recorded") {
		t.Fatalf("hashless entry with the switch: %v, %q", err, warn)
	}
	if e, _ := list.Find(spec.Event, spec.Command); e.ScriptSHA256 != ScriptHash(spec.Command) {
		t.Fatalf("hash not recorded for the Hermes entry: %+v", e)
	}
}

// A malformed entry is skipped with a warning naming it; the others stay
// approved, and a rewrite keeps the skipped entry as it was.
func TestAllowlistMalformedEntry(t *testing.T) {
	dir := t.TempDir()
	good := writeScript(t, dir, "good.sh", "echo '{}'\n")
	list := Allowlist{Path: filepath.Join(dir, AllowlistFile)}
	if err := list.Approve(PreToolCallHook, good); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(list.Path)
	broken := strings.Replace(string(b), `"approvals": [`, `"approvals": [{"event":5}, `, 1)
	if err := os.WriteFile(list.Path, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	lr := newLogRecorder()
	list.Log = lr.logger()
	if _, ok := list.Find(PreToolCallHook, good); !ok {
		t.Fatalf("a malformed neighbour wiped the approval of %s", good)
	}
	if lr.count("WARN", list.Path, "approvals[0] skipped", `{"event":5}`) == 0 {
		t.Fatalf("no warning naming the entry; log:\n%s", lr)
	}
	other := writeScript(t, dir, "other.sh", "echo '{}'\n")
	if err := list.Approve(PostToolCallHook, other); err != nil {
		t.Fatal(err)
	}
	if _, ok := list.Find(PreToolCallHook, good); !ok {
		t.Fatal("approving another hook dropped an existing approval")
	}
	if _, ok := list.Find(PostToolCallHook, other); !ok {
		t.Fatal("the new approval is missing")
	}
	after, _ := os.ReadFile(list.Path)
	if !strings.Contains(string(after), `"event": 5`) {
		t.Fatalf("the malformed entry was lost on rewrite:\n%s", after)
	}
}

// A file that cannot be read or parsed is never rewritten: Approve and
// Revoke fail and say why; the file is left byte for byte.
func TestAllowlistUnparsableNotRewritten(t *testing.T) {
	for name, content := range map[string]string{
		"not json":       `{"approvals": [`,
		"not an object":  `[{"event":"pre_tool_call","command":"x"}]`,
		"approvals typo": `{"approvals": {"event":"pre_tool_call"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			list := Allowlist{Path: filepath.Join(dir, AllowlistFile), Log: newLogRecorder().logger()}
			if err := os.WriteFile(list.Path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			err := list.Approve(PreToolCallHook, "/bin/true")
			if err == nil || !strings.Contains(err.Error(), list.Path) || !strings.Contains(err.Error(), "not valid") {
				t.Fatalf("Approve on a broken allowlist: %v", err)
			}
			if _, err := list.Revoke("/bin/true"); err == nil {
				t.Fatal("Revoke on a broken allowlist succeeded")
			}
			if b, _ := os.ReadFile(list.Path); string(b) != content {
				t.Fatalf("the file was rewritten: %q", b)
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		dir := t.TempDir()
		list := Allowlist{Path: filepath.Join(dir, AllowlistFile)}
		if err := os.Mkdir(list.Path, 0o700); err != nil { // a directory: read fails
			t.Fatal(err)
		}
		if err := list.Approve(PreToolCallHook, "/bin/true"); err == nil || !strings.Contains(err.Error(), "read the shell-hook allowlist") {
			t.Fatalf("Approve over an unreadable allowlist: %v", err)
		}
	})
}

// FuzzAllowlist reads any allowlist file: it never panics; a file it
// cannot read is an error and is left as it was; one it reads survives
// an approval with every entry it held, readable or not.
func FuzzAllowlist(f *testing.F) {
	for _, s := range []string{
		`{"approvals":[{"event":"pre_tool_call","command":"/x.sh","approved_at":"t","script_mtime_at_approval":null,"script_sha256":"ab"}]}`,
		`{"approvals":[{"event":5},{"event":"pre_tool_call","command":"/y"}]}`,
		`{"approvals":[]}`, `{}`, `{"approvals":null}`, `[]`, `{"approvals":[null,1,"s",[]]}`, ``, `{"approvals":[{"event":"a","command":"b","extra":{"k":[1]}}]} `,
		`{"approvals":{"event":"x"}}`, `{"approvals":[{"event":"a","command":"b"}]}{"second":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		dir := t.TempDir()
		list := Allowlist{Path: filepath.Join(dir, AllowlistFile), Log: newLogRecorder().logger()}
		os.WriteFile(list.Path, content, 0o600)
		before, err := list.read()
		if err != nil {
			if list.Approve(PreToolCallHook, "/fuzz") == nil {
				t.Fatalf("approved over a file read() refuses: %v", err)
			}
			if b, _ := os.ReadFile(list.Path); string(b) != string(content) {
				t.Fatal("an unreadable allowlist was rewritten")
			}
			return
		}
		if err := list.Approve(PreToolCallHook, "/fuzz"); err != nil {
			t.Fatalf("approve over a readable file: %v", err)
		}
		after, err := list.read()
		if err != nil {
			t.Fatalf("the rewritten file does not read: %v", err)
		}
		if _, ok := Approvals(after.entries).Find(PreToolCallHook, "/fuzz"); !ok {
			t.Fatal("the new approval is missing")
		}
		kept := 0
		for _, e := range before.entries {
			if e.Event == PreToolCallHook && e.Command == "/fuzz" {
				continue // replaced
			}
			kept++
			if _, ok := Approvals(after.entries).Find(e.Event, e.Command); !ok {
				t.Fatalf("approval %+v lost", e)
			}
		}
		if skipped := len(before.raw) - len(before.entries); len(after.raw) < kept+skipped+1 {
			t.Fatalf("entries lost: %d raw before (%d readable), %d after", len(before.raw), len(before.entries), len(after.raw))
		}
	})
}
