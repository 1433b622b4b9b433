package cmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/heraldgw/herald/adapters/discord/discordtest"
	"github.com/heraldgw/herald/adapters/matrix/matrixtest"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/sessions"
	"github.com/heraldgw/herald/sessions/pgtest"
	"github.com/heraldgw/herald/sessions/sessionstest"
)

// runEnv runs herald on home with env as its whole environment.
func runEnv(t *testing.T, home string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := cmd.Main(context.Background(), append([]string{"--home", home}, args...), cmd.WithStdio(strings.NewReader(""), &out, &errw),
		cmd.WithGetenv(func(k string) string { return env[k] }))
	return code, out.String(), errw.String()
}

// doctorFakes are a fake of every platform doctor calls and of the model,
// each accepting one credential.
type doctorFakes struct {
	tg     *telegramtest.Server
	slack  *slacktest.Server
	disc   *discordtest.Server
	matrix *matrixtest.Server
	model  *agenttest.Server
}

const (
	goodSlackBot   = "xoxb-good-bot-token"
	goodSlackApp   = "xapp-good-app-token"
	goodDiscord    = "discord-good-bot-token"
	goodModelKey   = "sk-good-model-key"
	goodMatrixTok  = "syt_good_matrix_token"
	wrongTelegram  = "654321:WRONG-telegram-token"
	wrongSlackBot  = "xoxb-wrong-bot-token"
	wrongDiscord   = "discord-wrong-bot-token"
	wrongModelKey  = "sk-wrong-model-key"
	wrongMatrixTok = "syt_wrong_matrix_token"
)

func newDoctorFakes(t *testing.T) *doctorFakes {
	f := &doctorFakes{
		tg:     telegramtest.New(telegramtest.Options{}),
		slack:  slacktest.New(slacktest.Options{BotToken: goodSlackBot, AppToken: goodSlackApp}),
		disc:   discordtest.New(),
		matrix: matrixtest.New(matrixtest.Options{Token: goodMatrixTok}),
		model:  agenttest.New(t),
	}
	t.Cleanup(func() { f.tg.Close(); f.slack.Close(); f.disc.Close(); f.matrix.Close() })
	f.disc.RequireToken(goodDiscord)
	f.model.APIKey = goodModelKey
	return f
}

// home writes a config.yaml pointing every platform at its fake and
// returns the environment holding the credentials (good or wrong ones).
func (f *doctorFakes) home(t *testing.T, good bool) (string, map[string]string) {
	home := t.TempDir()
	os.Chmod(home, 0o700)
	cfg := "platforms:\n" +
		"  telegram:\n    api_endpoint: " + f.tg.Endpoint() + "\n" +
		"  slack:\n    api_url: " + f.slack.APIURL() + "\n" +
		"  discord:\n    api_base: " + f.disc.APIBase() + "\n" +
		"  matrix:\n    homeserver: " + f.matrix.URL() + "\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"HERALD_LOCAL_LISTEN": "127.0.0.1:0",
		"OPENAI_BASE_URL":     f.model.BaseURL(),
		"TELEGRAM_BOT_TOKEN":  f.tg.Token(), "SLACK_BOT_TOKEN": goodSlackBot, "SLACK_APP_TOKEN": goodSlackApp,
		"DISCORD_BOT_TOKEN": goodDiscord, "OPENAI_API_KEY": goodModelKey, "MATRIX_ACCESS_TOKEN": goodMatrixTok,
	}
	if !good {
		env["TELEGRAM_BOT_TOKEN"], env["SLACK_BOT_TOKEN"], env["DISCORD_BOT_TOKEN"] = wrongTelegram, wrongSlackBot, wrongDiscord
		env["OPENAI_API_KEY"], env["MATRIX_ACCESS_TOKEN"] = wrongModelKey, wrongMatrixTok
	}
	// a shell hook, approved in the good home only
	hook := filepath.Join(home, "observe.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ncat >/dev/null\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	withHook := cfg + "hooks:\n  on_session_start:\n    - command: " + hook + "\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(withHook), 0o600); err != nil {
		t.Fatal(err)
	}
	if good {
		if code, out, errw := runEnv(t, home, env, "hooks", "allow", "on_session_start", hook); code != 0 {
			t.Fatalf("hooks allow: %d %s %s", code, out, errw)
		}
	}
	return home, env
}

// doctorNormaliser makes a report comparable from run to run: the home,
// the fakes' addresses and the free disk space change.
func (f *doctorFakes) rewrites(home string) rewrites {
	return rewrites{
		{regexp.QuoteMeta(home), "<home>"},
		{regexp.QuoteMeta(f.tg.URL()), "<telegram>"},
		{regexp.QuoteMeta(f.slack.URL()), "<slack>"},
		{regexp.QuoteMeta(f.disc.URL()), "<discord>"},
		{regexp.QuoteMeta(f.matrix.URL()), "<matrix>"},
		{regexp.QuoteMeta(f.model.URL), "<model>"},
		{`127\.0\.0\.1:\d+`, "<addr>"},
		{`(ok|warn|FAIL)( +)disk( +).*`, "<disk>"},
	}
}

// doctorJSON is what doctor --json prints.
type doctorJSON struct {
	Checks []struct{ Section, Status, Detail string }
	Fails  int
}

// secretsIn fails the test if any credential of env shows in s.
func secretsIn(t *testing.T, what, s string, env map[string]string) {
	t.Helper()
	for _, k := range []string{"TELEGRAM_BOT_TOKEN", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "DISCORD_BOT_TOKEN", "OPENAI_API_KEY", "MATRIX_ACCESS_TOKEN"} {
		if v := env[k]; v != "" && strings.Contains(s, v) {
			t.Errorf("%s shows %s:\n%s", what, k, s)
		}
	}
}

// Doctor against the fakes: with good credentials everything is ok (exit
// 0); with wrong ones each platform, the model and the hook fail (exit 1).
// Either way no credential shows in the report, --json or the log.
func TestDoctorAgainstTheFakes(t *testing.T) {
	f := newDoctorFakes(t)
	cases := []struct {
		name     string
		good     bool
		code     int
		golden   string
		failures []string
	}{
		{"good credentials", true, 0, "doctor_good.golden", nil},
		{"wrong credentials", false, 1, "doctor_bad.golden", []string{"discord", "hooks", "matrix", "model", "slack", "telegram"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home, env := f.home(t, c.good)
			code, out, errw := runEnv(t, home, env, "doctor")
			if code != c.code {
				t.Fatalf("doctor: %d, want %d\n%s\n%s", code, c.code, out, errw)
			}
			secretsIn(t, "doctor's report", out+errw, env)
			goldenCompare(t, c.golden, f.rewrites(home).apply(out))

			code, out, errw = runEnv(t, home, env, "doctor", "--json")
			secretsIn(t, "doctor --json", out+errw, env)
			log, _ := os.ReadFile(filepath.Join(home, "logs", "gateway.log"))
			secretsIn(t, "the log", string(log), env)
			var rep doctorJSON
			if code != c.code || json.Unmarshal([]byte(out), &rep) != nil || rep.Fails != len(c.failures) {
				t.Fatalf("doctor --json: %d %s", code, out)
			}
			var failed []string
			for _, ch := range rep.Checks {
				if ch.Status == "FAIL" {
					failed = append(failed, ch.Section)
				}
			}
			slices.Sort(failed)
			if !slices.Equal(failed, c.failures) {
				t.Fatalf("doctor --json: failed %q, want %q:\n%s", failed, c.failures, out)
			}
		})
	}
}

// Doctor finds what is wrong in the home itself: a token others may
// read, a damaged state.db, a config.yaml that does not load; and it
// creates nothing in a home that does not exist.
func TestDoctorFindsAFaultyHome(t *testing.T) {
	env := map[string]string{"HERALD_LOCAL_LISTEN": "127.0.0.1:0"}
	missing := filepath.Join(t.TempDir(), "nothing-here")
	if code, out, _ := runEnv(t, missing, env, "doctor"); code != 0 || !strings.Contains(out, "does not exist yet") {
		t.Fatalf("doctor on no home: %d\n%s", code, out)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatalf("doctor created the home")
	}

	home := t.TempDir()
	if code, out, errw := runEnv(t, home, env, "chat", "-q", "hello"); code != 0 {
		t.Fatalf("chat: %d %s %s", code, out, errw)
	}
	os.WriteFile(filepath.Join(home, "local.token"), []byte("hl_0123456789abcdef\n"), 0o644)
	os.Chmod(filepath.Join(home, "local.token"), 0o644)
	sessionstest.DamageTable(t, filepath.Join(home, "state.db"), "messages")
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("model:\n  default: x\nplatforms:\n  local: [\n"), 0o600)

	code, out, _ := runEnv(t, home, env, "doctor")
	if code != 1 {
		t.Fatalf("doctor: %d\n%s", code, out)
	}
	for _, want := range []string{
		"FAIL  home       local.token is mode 0644: other users may read it (chmod 600 " + filepath.Join(home, "local.token") + ")",
		"FAIL  state.db   sessions: check " + filepath.Join(home, "state.db") + ": database disk image is malformed",
		"FAIL  config     config.yaml:",
		"warn  config     the platforms, the model, hooks and BOOT.md are not checked until config.yaml loads",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor's report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hl_0123456789abcdef") {
		t.Errorf("doctor printed the local token:\n%s", out)
	}
}

// A platform that cannot be reached fails with the host, never the URL: a
// Telegram URL holds the bot token.
func TestDoctorUnreachablePlatformHidesTheToken(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("platforms:\n  telegram:\n    api_endpoint: http://127.0.0.1:1/bot%s/%s\n"), 0o600)
	env := map[string]string{"HERALD_LOCAL_LISTEN": "127.0.0.1:0", "TELEGRAM_BOT_TOKEN": "123456:SECRET-unreachable-token"}
	code, out, errw := runEnv(t, home, env, "doctor")
	if code != 1 || !strings.Contains(out, "FAIL  telegram   getMe: cannot reach 127.0.0.1:1: ") {
		t.Fatalf("doctor: %d\n%s", code, out)
	}
	secretsIn(t, "doctor's report", out+errw, env)
}

// Doctor reports config warnings with their file:line, BOOT.md, and each
// cron job: its schedule must parse, and the next run is shown.
func TestDoctorConfigBootAndCron(t *testing.T) {
	home := t.TempDir()
	os.Chmod(home, 0o700)
	env := map[string]string{"HERALD_LOCAL_LISTEN": "127.0.0.1:0"}
	if code, out, errw := runEnv(t, home, env, "cron", "add", "every 1h", "check the deploy log", "--name", "deploys"); code != 0 {
		t.Fatalf("cron add: %d %s %s", code, out, errw)
	}
	if code, out, errw := runEnv(t, home, env, "cron", "add", "every 2h", "water the plants", "--name", "plants"); code != 0 {
		t.Fatalf("cron add: %d %s %s", code, out, errw)
	}
	st, err := sessions.Open(filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().Exec(`UPDATE cron_jobs SET schedule_kind = 'cron', schedule_expr = 'every blue moon' WHERE name = 'plants'`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("modle:\n  default: gpt-4o\n"), 0o600)
	os.WriteFile(filepath.Join(home, "BOOT.md"), []byte("- check the disk\n- say hello\n"), 0o600)

	code, out, _ := runEnv(t, home, env, "doctor")
	if code != 1 {
		t.Fatalf("doctor: %d\n%s", code, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^  warn  config     config\.yaml:1: unknown key "modle".*$`),
		regexp.MustCompile(`(?m)^  warn  BOOT\.md    runs at each gateway start, but with the offline echo model`),
		regexp.MustCompile(`(?m)^  FAIL  cron       job [0-9a-f]+ \(plants\): schedule "every blue moon" does not parse: `),
		regexp.MustCompile(`(?m)^  ok    cron       2 job\(s\), 1 active; next run \d{4}-\d\d-\d\d \d\d:\d\d: deploys \(every 1h\)$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("doctor's report does not match %s:\n%s", want, out)
		}
	}
}

// With store: naming PostgreSQL, doctor checks that database, not a
// state.db, and reads cron's jobs from it.
func TestDoctorPostgresStore(t *testing.T) {
	home := t.TempDir()
	url := pgtest.URL(t)
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("store: "+url+"\n"), 0o600)
	_, out, errw := run(t, home, "", "doctor")
	if !strings.Contains(out, "PostgreSQL: connected, schema version current") || strings.Contains(out, url) {
		t.Fatalf("doctor:\n%s%s", out, errw)
	}
	if _, err := os.Stat(filepath.Join(home, "state.db")); err == nil {
		t.Error("doctor created a state.db beside a PostgreSQL store")
	}
}
