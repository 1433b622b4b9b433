package cmd

// The README's code blocks, run in order on a fresh home with no network:
// a console transcript ("$ herald …" and what it prints) is run command by
// command and its output checked; a sh block must hold only herald
// commands, run in turn; a yaml block must load as config.yaml without a
// warning; the Commands block must name every command and subcommand in
// the command table. A block that cannot run here (it downloads, serves
// until Ctrl-C, or names commands this herald does not have) is marked on
// the line before its fence:
//
//	<!-- readme-test: skip (why) -->

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/shlex"
)

// readmeBlock is one fenced code block of README.md.
type readmeBlock struct {
	line    int    // of the opening fence
	lang    string // after the fence: sh, console, yaml, or ""
	heading string // the section it is in
	skip    string // the marker's reason, when marked
	lines   []string
}

var skipMarker = regexp.MustCompile(`^<!-- readme-test: skip \((.+)\) -->$`)

func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		blocks  []readmeBlock
		cur     *readmeBlock
		heading string
		prev    string // the last non-blank line outside a block
	)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && strings.HasPrefix(line, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		case strings.HasPrefix(line, "```"):
			cur = &readmeBlock{line: n, lang: strings.TrimPrefix(line, "```"), heading: heading}
			if m := skipMarker.FindStringSubmatch(prev); m != nil {
				cur.skip = m[1]
			} else if strings.Contains(prev, "readme-test") {
				t.Fatalf("README.md:%d: a marker the test does not understand: %s", n-1, prev)
			}
		case strings.HasPrefix(line, "## "):
			heading = strings.TrimPrefix(line, "## ")
		}
		if cur == nil && strings.TrimSpace(line) != "" {
			prev = strings.TrimSpace(line)
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: a code block is never closed", cur.line)
	}
	return blocks
}

func TestREADMEBlocks(t *testing.T) {
	home := t.TempDir()
	ran := 0
	for _, b := range readmeBlocks(t) {
		if b.skip != "" {
			t.Logf("README.md:%d (%s): skipped: %s", b.line, b.heading, b.skip)
			continue
		}
		switch b.lang {
		case "console":
			runTranscript(t, home, b)
		case "sh":
			for i, l := range b.lines {
				args := readmeCommand(t, b.line+1+i, l)
				if args == nil {
					continue
				}
				if code, out := runHerald(home, args); code != 0 {
					t.Errorf("README.md:%d: %s: exit %d\n%s", b.line+1+i, l, code, out)
				}
			}
		case "yaml":
			yamlHome := t.TempDir()
			if err := os.WriteFile(filepath.Join(yamlHome, "config.yaml"), []byte(strings.Join(b.lines, "\n")), 0o600); err != nil {
				t.Fatal(err)
			}
			if code, out := runHerald(yamlHome, []string{"sessions", "list"}); code != 0 || strings.Contains(out, "warning") {
				t.Errorf("README.md:%d: the config does not load cleanly: exit %d\n%s", b.line, code, out)
			}
		case "":
			if b.heading == "Commands" {
				checkCommandsListed(t, b, true)
			}
			continue
		default:
			t.Errorf("README.md:%d: a %q block the test does not know how to run: mark it", b.line, b.lang)
			continue
		}
		ran++
	}
	if ran == 0 {
		t.Fatal("no README block ran")
	}
}

// The Commands block names every command and subcommand herald has, even
// while it is marked (it may name more, until they exist).
func TestREADMEListsEveryCommand(t *testing.T) {
	for _, b := range readmeBlocks(t) {
		if b.heading == "Commands" && b.lang == "" {
			checkCommandsListed(t, b, false)
			return
		}
	}
	t.Fatal("README.md has no Commands block")
}

// checkCommandsListed checks that every command and subcommand in the
// table is in the Commands block, and (exact) that the block names nothing
// else.
func checkCommandsListed(t *testing.T, b readmeBlock, exact bool) {
	t.Helper()
	listed := map[string][]string{} // command → subcommands named
	for _, l := range b.lines {
		words, ok := strings.CutPrefix(l, "herald ")
		if !ok {
			continue
		}
		words, _, _ = strings.Cut(words, "  ") // the description follows
		f := strings.Fields(words)
		name := f[0]
		subs := listed[name]
		for _, w := range f[1:] {
			if w == "|" {
				continue
			}
			// a flag, a placeholder (<id>, ID) or an option ([…]) ends
			// the subcommands
			if strings.ContainsAny(w[:1], "-<[") || w == strings.ToUpper(w) {
				break
			}
			subs = append(subs, w)
		}
		listed[name] = subs
	}
	for _, c := range commands {
		subs, ok := listed[c.name]
		if !ok {
			t.Errorf("README.md:%d: the Commands block does not list herald %s", b.line, c.name)
		}
		for _, s := range c.subcommands {
			if !slices.Contains(subs, s) {
				t.Errorf("README.md:%d: the Commands block does not list herald %s %s", b.line, c.name, s)
			}
		}
	}
	if !exact {
		return
	}
	for name, subs := range listed {
		i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
		if i < 0 {
			t.Errorf("README.md:%d: the Commands block lists herald %s, which herald does not have", b.line, name)
			continue
		}
		for _, s := range subs {
			if !slices.Contains(commands[i].subcommands, s) {
				t.Errorf("README.md:%d: the Commands block lists herald %s %s, which herald does not have", b.line, name, s)
			}
		}
	}
}

// readmeCommand parses a herald command line of a README block (nil for
// a blank or comment line); anything else must be marked.
func readmeCommand(t *testing.T, n int, line string) []string {
	t.Helper()
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return nil
	}
	rest, ok := strings.CutPrefix(line, "herald ")
	if !ok {
		t.Fatalf("README.md:%d: %q is not a herald command: mark its block", n, line)
	}
	args, err := shlex.Split(rest) // drops a trailing # comment
	if err != nil {
		t.Fatalf("README.md:%d: %v", n, err)
	}
	return args
}

// runTranscript runs each "$ herald …" line of a console block and checks
// that what it printed holds the lines shown under it, in order; "…" in a
// shown line stands for anything, and a line that is only "…" for any
// number of lines.
func runTranscript(t *testing.T, home string, b readmeBlock) {
	t.Helper()
	for i := 0; i < len(b.lines); {
		n, line := b.line+1+i, b.lines[i]
		cmdline, ok := strings.CutPrefix(line, "$ ")
		if !ok {
			t.Fatalf("README.md:%d: a console block must start each command with \"$ \": %q", n, line)
		}
		args := readmeCommand(t, n, cmdline)
		var want []string
		for i++; i < len(b.lines) && !strings.HasPrefix(b.lines[i], "$ "); i++ {
			if w := strings.TrimSpace(b.lines[i]); w != "…" && w != "" {
				want = append(want, w)
			}
		}
		code, out := runHerald(home, args)
		if code != 0 {
			t.Errorf("README.md:%d: %s: exit %d\n%s", n, cmdline, code, out)
			continue
		}
		if missing := shownNotPrinted(want, out); missing != "" {
			t.Errorf("README.md:%d: %s: does not print %q (in this order)\nit printed:\n%s", n, cmdline, missing, out)
		}
	}
}

// shownNotPrinted returns the first shown line not found in out after the
// lines before it ("" when every one is).
func shownNotPrinted(want []string, out string) string {
	lines := strings.Split(out, "\n")
	at := 0
	for _, w := range want {
		parts := strings.Split(w, "…")
		for ; at < len(lines); at++ {
			if inOrder(lines[at], parts) {
				break
			}
		}
		if at == len(lines) {
			return w
		}
		at++
	}
	return ""
}

// inOrder reports whether line holds each part, in order.
func inOrder(line string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(line, strings.TrimSpace(p))
		if i < 0 {
			return false
		}
		line = line[i+len(strings.TrimSpace(p)):]
	}
	return true
}

// lockedBuffer takes stdout and stderr together, from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// runHerald runs herald on home with an empty environment (no model
// credentials: the echo model) and returns its exit status and output.
func runHerald(home string, args []string) (int, string) {
	var out lockedBuffer
	code := Main(context.Background(), append([]string{"--home", home}, args...),
		WithStdio(strings.NewReader(""), &out, &out), WithGetenv(func(string) string { return "" }))
	return code, out.b.String()
}
