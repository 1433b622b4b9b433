package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/sessions"
)

const sessionSecret = "sup3r-s3cret-t0ken-value"

// sessionsCLI runs one herald command on home with a secret in the
// environment.
func sessionsCLI(t *testing.T, home string, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	env := map[string]string{"HERALD_HOME": home, "HOME": home, "TELEGRAM_BOT_TOKEN": sessionSecret}
	code := cmd.Main(context.Background(), append([]string{"--home", home}, args...),
		cmd.WithStdio(stdin, &out, &errw), cmd.WithGetenv(func(k string) string { return env[k] }))
	return code, out.String(), errw.String()
}

// storeSession stores a session with the given id and messages (their
// session id filled in), started at start.
func storeSession(t *testing.T, home, id string, start time.Time, msgs ...sessions.Message) {
	t.Helper()
	st, err := sessions.Open(filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess := sessions.NewSession("agent:main:telegram:dm:42", herald.Source{Platform: herald.PlatformTelegram, ChatID: "42", ChatType: herald.ChatDM, UserID: "42", UserName: "ada"}, start)
	sess.ID, sess.Model = id, "gpt-test"
	for i := range msgs {
		msgs[i].SessionID = id
	}
	if err := st.Append(context.Background(), sess, msgs...); err != nil {
		t.Fatal(err)
	}
}

const (
	showID  = "20270115_080000_a1b2c3d4"
	otherID = "20270115_080000_a1b9f0e1"
)

// sessionFixture is a home with two sessions (one with a tool call, a
// long tool output and a secret), their transcripts and media.
func sessionFixture(t *testing.T) (home string, t0 time.Time, norm *normaliser) {
	home = t.TempDir()
	t0 = time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var long []string
	for i := 1; i <= 25; i++ {
		long = append(long, fmt.Sprintf("file%02d.txt", i))
	}
	calls := `[{"id":"call_1","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"ls\"}"}}]`
	storeSession(t, home, showID, t0,
		sessions.Message{Role: "user", Content: "list my files; the token is " + sessionSecret, CreatedAt: at(0)},
		sessions.Message{Role: "assistant", ToolCalls: calls, CreatedAt: at(2)},
		sessions.Message{Role: "tool", ToolName: "terminal", ToolCallID: "call_1", Content: strings.Join(long, "\n") + "\n", CreatedAt: at(3)},
		sessions.Message{Role: "assistant", Content: "You have 25 files:\n```\nfile01.txt …\n```", CreatedAt: at(5)},
	)
	storeSession(t, home, otherID, t0, sessions.Message{Role: "user", Content: "hello", CreatedAt: at(60)})
	tr := filepath.Join(home, "transcripts")
	os.MkdirAll(filepath.Join(home, "media", showID), 0o700)
	os.MkdirAll(tr, 0o700)
	for _, f := range []string{showID + ".jsonl", showID + "-sub1-123.jsonl", otherID + ".jsonl"} {
		os.WriteFile(filepath.Join(tr, f), []byte("{}\n"), 0o600)
	}
	os.WriteFile(filepath.Join(home, "media", showID, "photo.jpg"), []byte("jpg"), 0o600)

	norm = &normaliser{}
	norm.add(home, "$HERALD_HOME")
	for _, s := range []int{0, 2, 3, 5, 60} {
		lt := at(s).Local()
		norm.add(lt.Format("2006-01-02 15:04:05 -07:00"), fmt.Sprintf("<t0+%ds>", s))
		norm.add(lt.Format(time.RFC3339Nano), fmt.Sprintf("<t0+%ds>", s))
	}
	return home, t0, norm
}

func TestSessionsShowAndExport(t *testing.T) {
	home, _, norm := sessionFixture(t)
	code, out, errw := sessionsCLI(t, home, strings.NewReader(""), "sessions", "show", "20270115_080000_a1b2")
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errw)
	}
	goldenCompare(t, "sessions/show.golden", norm.apply(out))

	code, out, errw = sessionsCLI(t, home, strings.NewReader(""), "sessions", "export", showID)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errw)
	}
	goldenCompare(t, "sessions/export.md.golden", norm.apply(out))

	code, out, errw = sessionsCLI(t, home, strings.NewReader(""), "sessions", "export", showID, "--format", "json")
	if code != 0 {
		t.Fatalf("export json: exit %d: %s", code, errw)
	}
	var doc struct {
		Session  sessions.Session `json:"session"`
		Messages []struct {
			Role      string          `json:"role"`
			ToolCalls json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("export json is not JSON: %v\n%s", err, out)
	}
	if doc.Session.ID != showID || len(doc.Messages) != 4 || doc.Messages[1].ToolCalls[0] != '[' {
		t.Fatalf("export json: %+v", doc)
	}
	goldenCompare(t, "sessions/export.json.golden", norm.apply(out))
	for _, o := range []string{out} {
		if strings.Contains(o, sessionSecret) {
			t.Fatalf("the secret reached the export:\n%s", o)
		}
	}

	// to a file, 0600
	dst := filepath.Join(t.TempDir(), "s.md")
	if code, _, errw := sessionsCLI(t, home, strings.NewReader(""), "sessions", "export", showID, "-o", dst); code != 0 {
		t.Fatalf("export -o: %d %s", code, errw)
	}
	if st, err := os.Stat(dst); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("export file: %v %v", st, err)
	}
}

func TestSessionsIDErrors(t *testing.T) {
	home, _, _ := sessionFixture(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"show", "20270115_080000_a1b"}, 1, `"20270115_080000_a1b" names more than one session (` + showID + ", " + otherID + "): give more of the id"},
		{[]string{"show", "nope"}, 1, `no session "nope" (herald sessions list shows them)`},
		{[]string{"show"}, 2, "usage: herald sessions show <id>"},
		{[]string{"export", showID, "--format", "pdf"}, 2, `--format must be md or json, not "pdf"`},
		{[]string{"frob"}, 2, `unknown sessions command "frob"`},
		{[]string{"prune", "--older-than", "30"}, 2, `"30" needs a unit: 30d for days, 30h for hours`},
		{[]string{"prune"}, 2, "usage: herald sessions prune --older-than AGE"},
	} {
		code, _, errw := sessionsCLI(t, home, strings.NewReader(""), append([]string{"sessions"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errw, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errw, tc.code, tc.want)
		}
	}
}

func sessionIDs(t *testing.T, home string) []string {
	t.Helper()
	st, err := sessions.Open(filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.List(context.Background(), sessions.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	return ids
}

func TestSessionsDelete(t *testing.T) {
	home, _, norm := sessionFixture(t)
	// without a terminal and without --yes nothing is deleted
	code, _, errw := sessionsCLI(t, home, strings.NewReader("y\n"), "sessions", "delete", showID)
	if code != 2 || !strings.Contains(errw, "no terminal to ask on: pass --yes") {
		t.Fatalf("delete without --yes: %d %q", code, errw)
	}
	if ids := sessionIDs(t, home); len(ids) != 2 {
		t.Fatalf("deleted without consent: %v", ids)
	}

	code, out, errw := sessionsCLI(t, home, strings.NewReader(""), "sessions", "delete", "20270115_080000_a1b2", "--yes")
	if code != 0 {
		t.Fatalf("delete --yes: %d %s", code, errw)
	}
	goldenCompare(t, "sessions/delete.golden", norm.apply(out))
	if ids := sessionIDs(t, home); len(ids) != 1 || ids[0] != otherID {
		t.Fatalf("left: %v", ids)
	}
	st, _ := sessions.Open(filepath.Join(home, "state.db"))
	msgs, _ := st.Messages(context.Background(), showID, 0)
	st.Close()
	if len(msgs) != 0 {
		t.Fatalf("messages left: %v", msgs)
	}
	for _, p := range []string{"transcripts/" + showID + ".jsonl", "transcripts/" + showID + "-sub1-123.jsonl", "media/" + showID} {
		if _, err := os.Stat(filepath.Join(home, p)); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "transcripts", otherID+".jsonl")); err != nil {
		t.Errorf("another session's transcript went too: %v", err)
	}
}

// holdGatewayLock makes the home look like a gateway runs on it (the
// lock the gateway holds, with a pid in it).
func holdGatewayLock(t *testing.T, home string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(home, "gateway.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	t.Cleanup(func() { f.Close() })
}

func TestSessionsDeleteOpenSessionUnderAGateway(t *testing.T) {
	home, _, _ := sessionFixture(t)
	holdGatewayLock(t, home)
	code, _, errw := sessionsCLI(t, home, strings.NewReader(""), "sessions", "delete", showID, "--yes")
	if code != 1 || !strings.Contains(errw, "is open and the gateway (pid "+strconv.Itoa(os.Getpid())+") is using it") {
		t.Fatalf("delete under a gateway: %d %q", code, errw)
	}
	if ids := sessionIDs(t, home); len(ids) != 2 {
		t.Fatalf("deleted under a gateway: %v", ids)
	}
}

func TestSessionsDeleteAsksOnATerminal(t *testing.T) {
	for _, tc := range []struct {
		answer string
		left   int
		says   string
	}{
		{"n\n", 2, "Nothing deleted."},
		{"\n", 2, "Nothing deleted."},
		{"y\n", 1, "Deleted session " + showID},
	} {
		t.Run(strings.TrimSpace(tc.answer), func(t *testing.T) {
			home, _, _ := sessionFixture(t)
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pty: %v", err)
			}
			defer ptmx.Close()
			defer tty.Close()
			if _, err := ptmx.Write([]byte(tc.answer)); err != nil {
				t.Fatal(err)
			}
			go io.Copy(io.Discard, ptmx) // the terminal's echo
			code, out, errw := sessionsCLI(t, home, tty, "sessions", "delete", showID)
			if code != 0 || !strings.Contains(out, "Delete session "+showID+" (telegram, chat 42, 4 messages, last ") || !strings.Contains(out, "? [y/N] ") || !strings.Contains(out, tc.says) {
				t.Fatalf("exit %d:\n%s\n%s", code, out, errw)
			}
			if ids := sessionIDs(t, home); len(ids) != tc.left {
				t.Fatalf("left %v, want %d", ids, tc.left)
			}
		})
	}
}

func TestSessionsPrune(t *testing.T) {
	home := t.TempDir()
	now := time.Now()
	storeSession(t, home, "old", now.Add(-40*24*time.Hour), sessions.Message{Role: "user", Content: "a", CreatedAt: now.Add(-40 * 24 * time.Hour)})
	storeSession(t, home, "recent", now.Add(-10*24*time.Hour), sessions.Message{Role: "user", Content: "b", CreatedAt: now.Add(-10 * 24 * time.Hour)})
	os.MkdirAll(filepath.Join(home, "transcripts"), 0o700)
	os.WriteFile(filepath.Join(home, "transcripts", "old.jsonl"), []byte("{}\n"), 0o600)

	code, out, errw := sessionsCLI(t, home, strings.NewReader(""), "sessions", "prune", "--older-than", "30d", "--dry-run")
	if code != 0 || !strings.Contains(out, "would delete old  telegram  42  1 messages  last ") ||
		!strings.Contains(out, "Would delete 1 session(s) older than 30d (dry run: nothing deleted).") || strings.Contains(out, "recent") {
		t.Fatalf("dry run: %d\n%s%s", code, out, errw)
	}
	if ids := sessionIDs(t, home); len(ids) != 2 {
		t.Fatalf("the dry run deleted: %v", ids)
	}
	code, _, errw = sessionsCLI(t, home, strings.NewReader(""), "sessions", "prune", "--older-than", "30d")
	if code != 2 || !strings.Contains(errw, "pass --yes") {
		t.Fatalf("prune without --yes: %d %q", code, errw)
	}
	code, out, errw = sessionsCLI(t, home, strings.NewReader(""), "sessions", "prune", "--older-than", "30d", "--yes")
	if code != 0 || out != "Deleted 1 session(s) older than 30d and 1 file(s).\n" {
		t.Fatalf("prune: %d %q %s", code, out, errw)
	}
	if ids := sessionIDs(t, home); len(ids) != 1 || ids[0] != "recent" {
		t.Fatalf("left: %v", ids)
	}
	code, out, _ = sessionsCLI(t, home, strings.NewReader(""), "sessions", "prune", "--older-than", "30d", "--yes")
	if code != 0 || out != "No sessions older than 30d.\n" {
		t.Fatalf("prune again: %d %q", code, out)
	}

	// under a running gateway, open sessions are kept
	holdGatewayLock(t, home)
	code, out, _ = sessionsCLI(t, home, strings.NewReader(""), "sessions", "prune", "--older-than", "1d", "--yes")
	if code != 0 || !strings.Contains(out, "No sessions older than 1d. Open sessions are kept while the gateway (pid ") {
		t.Fatalf("prune under a gateway: %d %q", code, out)
	}
}
