package cmd_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldgw/herald/cmd"
)

// configCLI runs herald with env as its whole environment (HERALD_HOME
// added) and returns the exit status, stdout and stderr, the home
// replaced by $HERALD_HOME.
func configCLI(t *testing.T, home string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	all := map[string]string{"HERALD_HOME": home}
	for k, v := range env {
		all[k] = v
	}
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), args, cmd.WithStdio(strings.NewReader(""), &out, &errw),
		cmd.WithGetenv(func(k string) string { return all[k] }))
	norm := func(s string) string { return strings.ReplaceAll(s, home, "$HERALD_HOME") }
	return code, norm(out.String()), norm(errw.String())
}

func writeHome(t *testing.T, files map[string]string) string {
	t.Helper()
	home := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(home, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// herald config check prints every warning and error with file and line,
// and exits 0 only without errors (without warnings too with --strict).
func TestConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		args       []string
		code       int
	}{
		{"clean", "model: gpt-test\napprovals:\n  mode: ask\n", nil, 0},
		{"warnings", "bogus_key: 1\napprovals:\n  mode: maybe\nplatforms:\n  telegram:\n    unauthorized_dm: shout\nhooks:\n  pre_tool_cal:\n    - command: ./x.sh\n", nil, 0},
		{"warnings-strict", "bogus_key: 1\n", []string{"--strict"}, 1},
		{"errors", "approvals:\n  timeout: soon\nagent:\n  max_iterations: lots\nplatforms:\n  telegram:\n    reply_to_mode: sometimes\nbogus_key: 1\n", nil, 1},
		{"tab", "model:\n\tdefault: x\n", nil, 1},
		{"tab-first-line", "\tmodel: x\n", nil, 1},
		{"no-file", "", nil, 0},
		{"dotenv", "model: gpt-test\n", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			if tc.name != "no-file" {
				files["config.yaml"] = tc.yaml
			}
			if tc.name == "dotenv" {
				files[".env"] = "# secrets\nOPENAI_API_KEY sk-missing-equals\n"
			}
			home := writeHome(t, files)
			code, out, errw := configCLI(t, home, nil, append([]string{"config", "check"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d:\n%s%s", code, tc.code, out, errw)
			}
			goldenCompare(t, filepath.Join("config", "check-"+tc.name+".txt"), out+errw)
		})
	}
}

// showEnv is a home with secrets in config.yaml, .env and the
// environment, for config show.
func showHome(t *testing.T) (home string, env map[string]string, secrets []string) {
	home = writeHome(t, map[string]string{
		"config.yaml": "# herald settings\nmodel:\n  default: gpt-test   # the model\n  api_key: sk-config-secret-0123456789\n" +
			"approvals:\n  mode: off\nplatforms:\n  discord:\n    allowed_users: [\"1\", \"2\"]\n" +
			"  webhook:\n    routes:\n      gh:\n        secret: wh-route-secret-value\n        prompt: \"PR {pull_request.title}\"\n" +
			"hooks:\n  pre_tool_call:\n    - command: ./check.sh\n      env:\n        GITHUB_TOKEN: ghp-hook-secret-value\n",
		".env": "# from .env\nDISCORD_BOT_TOKEN=dc-dotenv-secret-value\n",
	})
	env = map[string]string{"TELEGRAM_BOT_TOKEN": "123456:tg-env-secret-value", "HERALD_MAX_ITERATIONS": "12"}
	secrets = []string{"sk-config-secret-0123456789", "wh-route-secret-value", "ghp-hook-secret-value", "dc-dotenv-secret-value", "tg-env-secret-value"}
	return home, env, secrets
}

// herald config show: the file as written, secrets masked; with
// --effective every value and its source (default, config.yaml:LINE,
// .env:LINE, environment), platform tokens and the model key masked and
// the enablement the environment brings shown. No secret is printed in
// any form of it.
func TestConfigShow(t *testing.T) {
	home, env, secrets := showHome(t)
	for _, tc := range []struct{ name, golden string }{
		{"show", "show.txt"},
		{"show --json", "show.json"},
		{"show --effective", "show-effective.txt"},
		{"show --effective --json", "show-effective.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errw := configCLI(t, home, env, append([]string{"config"}, strings.Fields(tc.name)...)...)
			if code != 0 {
				t.Fatalf("exit %d:\n%s%s", code, out, errw)
			}
			for _, s := range secrets {
				if strings.Contains(out+errw, s) {
					t.Fatalf("secret %q printed:\n%s%s", s, out, errw)
				}
			}
			goldenCompare(t, filepath.Join("config", tc.golden), out)
		})
	}
	// the lines a newcomer looks for
	_, out, _ := configCLI(t, home, env, "config", "show", "--effective")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^model\.api_key +\[REDACTED\] +config\.yaml:4$`),
		regexp.MustCompile(`(?m)^platforms\.telegram\.token +\[REDACTED\] +environment \(TELEGRAM_BOT_TOKEN\)$`),
		regexp.MustCompile(`(?m)^platforms\.telegram\.enabled +true +environment \(TELEGRAM_BOT_TOKEN\)$`),
		regexp.MustCompile(`(?m)^platforms\.discord\.enabled +true +\.env:2 \(DISCORD_BOT_TOKEN\)$`),
		regexp.MustCompile(`(?m)^platforms\.slack\.enabled +false +default$`),
		regexp.MustCompile(`(?m)^agent\.max_iterations +12 +environment \(HERALD_MAX_ITERATIONS\)$`),
		regexp.MustCompile(`(?m)^approvals\.mode +off +config\.yaml:6$`),
		regexp.MustCompile(`(?m)^approvals\.timeout +5m0s +default$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("show --effective lacks %s", want)
		}
	}
}

// Without a config.yaml, config show says so on stderr and prints
// nothing (an empty object with --json); --effective lists the defaults.
func TestConfigShowWithoutAFile(t *testing.T) {
	home := t.TempDir()
	code, out, errw := configCLI(t, home, nil, "config", "show")
	if code != 0 || out != "" || errw != "herald: $HERALD_HOME/config.yaml does not exist: herald runs on its defaults (herald config show --effective lists them)\n" {
		t.Fatalf("config show: exit %d:\n%s%s", code, out, errw)
	}
	if code, out, _ = configCLI(t, home, nil, "config", "show", "--json"); code != 0 || out != "{}\n" {
		t.Fatalf("config show --json: exit %d: %q", code, out)
	}
	code, out, errw = configCLI(t, home, nil, "config", "show", "--effective")
	if code != 0 || errw != "" || !regexp.MustCompile(`(?m)^approvals\.mode +ask +default$`).MatchString(out) {
		t.Fatalf("config show --effective: exit %d:\n%s%s", code, out, errw)
	}
}

// A mapping whose keys are not all strings is written as JSON too.
func TestConfigShowJSONWithNumberKeys(t *testing.T) {
	home := writeHome(t, map[string]string{"config.yaml": "model: m\nextra:\n  1: one\n  two: [a, ~]\n"})
	code, out, errw := configCLI(t, home, nil, "config", "show", "--json")
	want := "{\n  \"extra\": {\n    \"1\": \"one\",\n    \"two\": [\n      \"a\",\n      null\n    ]\n  },\n  \"model\": \"m\"\n}\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d:\n%s%s", code, out, errw)
	}
}

// herald config path names each of herald's files, one per line, and
// creates none of them.
func TestConfigPath(t *testing.T) {
	home := filepath.Join(t.TempDir(), "not-yet")
	for _, tc := range []struct{ args, golden string }{{"path", "path.txt"}, {"path --json", "path.json"}} {
		code, out, errw := configCLI(t, home, nil, append([]string{"config"}, strings.Fields(tc.args)...)...)
		if code != 0 || errw != "" {
			t.Fatalf("config %s: exit %d:\n%s%s", tc.args, code, out, errw)
		}
		goldenCompare(t, filepath.Join("config", tc.golden), out)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Fatalf("config path created the home: %v", err)
	}
}

// A command stops at a config.yaml with wrong values, naming each of them
// with its line (and column where it is known), not only the first.
func TestConfigErrorsStopACommandNamingEach(t *testing.T) {
	home := writeHome(t, map[string]string{"config.yaml": "approvals:\n  timeout: soon\nagent:\n  max_iterations: lots\n"})
	code, out, errw := configCLI(t, home, nil, "sessions", "list")
	want := "herald: config.yaml:2:12: \"soon\" is not a duration (use e.g. 30s or 5m)\n" +
		"herald: config.yaml:4: cannot unmarshal !!str `lots` into int\n"
	if code != 2 || out != "" || errw != want {
		t.Fatalf("exit %d, want 2 and\n%s\ngot:\n%s%s", code, want, out, errw)
	}
}

// Every command that loads the configuration prints its warnings, once.
func TestConfigWarningsOncePerCommand(t *testing.T) {
	const warning = `herald: warning: config.yaml:1: unknown key "bogus_key"; ignored`
	home := writeHome(t, map[string]string{"config.yaml": "bogus_key: 1\n"})
	code, out, errw := configCLI(t, home, nil, "cron", "add", "every 1h", "check the log")
	m := createdRE.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("cron add: exit %d:\n%s%s", code, out, errw)
	}
	if n := strings.Count(errw, warning); n != 1 {
		t.Fatalf("cron add printed the warning %d times:\n%s", n, errw)
	}
	for _, args := range [][]string{
		{"sessions", "list"},
		{"cron", "list"},
		{"cron", "pause", m[1]},
		{"cron", "run", m[1]},
		{"logs"},
		{"pairing", "list"},
		{"boot", "run"},
		{"chat", "-q", "hello"},
		{"config", "show"},
	} {
		t.Run(strings.Join(args[:min(2, len(args))], " "), func(t *testing.T) {
			_, out, errw := configCLI(t, home, nil, args...)
			if n := strings.Count(errw, warning); n != 1 || strings.Count(errw, "bogus_key") != 1 {
				t.Fatalf("the warning is on stderr %d times, want once:\n%s\n%s", n, out, errw)
			}
		})
	}
}
