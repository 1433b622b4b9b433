package cmd

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// withTestCommand is the command table plus one command no script knows
// of, as a command added later in a file of its own would be.
func withTestCommand() []command {
	return append(sortedCommands(), command{name: "frobnicate", summary: "a command added later: it's completed", subcommands: []string{"twiddle", "tweak"}})
}

func writeScript(t *testing.T, shell string, cs []command) string {
	t.Helper()
	var b bytes.Buffer
	completionScripts[shell](&b, cs)
	p := filepath.Join(t.TempDir(), "herald."+shell)
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	script := writeScript(t, "bash", withTestCommand())
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "homedir"), 0o700)
	all := append(commandNames(withTestCommand()), "--home", "--help", "--version")
	cases := []struct {
		line string // the words typed; a trailing space starts a new word
		want []string
	}{
		{"herald ga", []string{"gateway"}},
		{"herald ", all},
		{"herald hooks ", []string{"list", "test", "allow", "revoke", "doctor"}},
		{"herald hooks d", []string{"doctor"}},
		{"herald --home /tmp ho", []string{"hooks"}},
		{"herald --home=/tmp cr", []string{"cron"}},
		{"herald --home home", []string{"homedir"}},
		{"herald completion ", []string{"bash", "zsh", "fish"}},
		{"herald fro", []string{"frobnicate"}},
		{"herald frobnicate t", []string{"twiddle", "tweak"}},
		{"herald hooks list ", nil},
		{"herald chat -q ", nil},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			words := strings.Fields(c.line)
			if strings.HasSuffix(c.line, " ") {
				words = append(words, "")
			}
			var quoted []string
			for _, w := range words {
				quoted = append(quoted, shellWord(w))
			}
			prog := "source " + shellWord(script) + "; COMP_WORDS=(" + strings.Join(quoted, " ") + "); COMP_CWORD=" +
				strconv.Itoa(len(words)-1) + "; _herald; printf '%s\\n' \"${COMPREPLY[@]}\""
			cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			got := strings.Fields(string(out))
			want := slices.Clone(c.want)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("completing %q: got %q, want %q", c.line, got, want)
			}
		})
	}
}

// Every registered command and subcommand is in every script, so that
// the scripts follow the table.
func TestCompletionScriptsFollowTheTable(t *testing.T) {
	for shell := range completionScripts {
		var b bytes.Buffer
		completionScripts[shell](&b, withTestCommand())
		for _, c := range withTestCommand() {
			if !strings.Contains(b.String(), c.name) {
				t.Errorf("%s script lacks command %s", shell, c.name)
			}
			for _, s := range c.subcommands {
				if !strings.Contains(b.String(), s) {
					t.Errorf("%s script lacks %s %s", shell, c.name, s)
				}
			}
		}
	}
}

func TestZshCompletionSyntax(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("no zsh on this machine")
	}
	script := writeScript(t, "zsh", withTestCommand())
	if out, err := exec.Command(zsh, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	// loaded into a shell with the completion system, it defines _herald
	// and binds it to herald
	prog := "autoload -U compinit && compinit -u -D && source " + shellWord(script) +
		" && (( $+functions[_herald] )) && [[ ${_comps[herald]} == _herald ]] && print loaded"
	cmd := exec.Command(zsh, "-f", "-c", prog)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "loaded" {
		t.Fatalf("zsh: %v\n%s", err, out)
	}
}

func TestFishCompletion(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("no fish on this machine")
	}
	script := writeScript(t, "fish", withTestCommand())
	if out, err := exec.Command(fish, "--no-execute", script).CombinedOutput(); err != nil {
		t.Fatalf("fish --no-execute: %v\n%s", err, out)
	}
	cases := []struct {
		line string
		want []string
	}{
		{"herald ga", []string{"gateway"}},
		{"herald hooks ", []string{"allow", "doctor", "list", "revoke", "test"}},
		{"herald frobnicate tw", []string{"tweak", "twiddle"}},
		{"herald --home /tmp ho", []string{"hooks"}},
		{"herald --home /tmp hooks l", []string{"list"}},
		{"herald hooks list ", nil},
	}
	for _, c := range cases {
		cmd := exec.Command(fish, "--no-config", "-c", "source "+fishWord(script)+"; complete -C "+fishWord(c.line))
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("fish: %v\n%s", err, out)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if name, _, _ := strings.Cut(line, "\t"); name != "" {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("completing %q: got %q, want %q", c.line, got, c.want)
		}
	}
}

func TestCompletionCommand(t *testing.T) {
	var out, errw bytes.Buffer
	e := &env{stdout: &out, stderr: &errw, getenv: func(string) string { return "" }}
	if err := e.completion([]string{"bash"}); err != nil || !strings.Contains(out.String(), "complete -o default -F _herald herald") {
		t.Fatalf("completion bash: %v %q", err, out.String())
	}
	if err := e.completion([]string{"tcsh"}); err == nil || !strings.Contains(err.Error(), `"tcsh"`) {
		t.Fatalf("completion tcsh: %v", err)
	}
}
