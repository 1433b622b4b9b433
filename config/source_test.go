package config

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A value herald reads as one of a set (or a range) and does not accept
// is a warning naming config.yaml's line and column, not the file alone.
func TestBadValuesWarnWithLineAndColumn(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"approvals.mode", "approvals:\n  mode: maybe\n", `config.yaml:2:9: approvals.mode "maybe" is not one of ask|off|yolo; using ask`},
		{"session_reset.mode", "session_reset:\n  mode: weekly\n", `config.yaml:2:9: session_reset.mode "weekly" is not one of daily|idle|both|none; using both`},
		{"session_reset.at_hour", "session_reset:\n  at_hour: 30\n", `config.yaml:2:12: session_reset.at_hour 30 is not 0–23; using 4`},
		{"tools.terminal.sandbox", "tools:\n  terminal:\n    sandbox: docker\n", `config.yaml:3:14: tools.terminal.sandbox "docker" is not one of`},
		{"model.vision", "model:\n  vision: sometimes\n", `config.yaml:2:11: model.vision "sometimes" is not one of true|false|auto`},
		{"busy_input_mode", "busy_input_mode: later\n", `config.yaml:1:18: busy_input_mode "later" is not one of interrupt|queue`},
		{"busy_input_mode steer", "busy_input_mode: steer\n", `config.yaml:1:18: busy_input_mode "steer" is not supported by herald; using queue`},
		{"display.busy_input_mode", "display:\n  busy_input_mode: later\n", `config.yaml:2:20: display.busy_input_mode "later" is not one of interrupt|queue`},
		{"unauthorized_dm", "platforms:\n  telegram:\n    unauthorized_dm: shout\n", `config.yaml:3:22: platforms.telegram.unauthorized_dm "shout" is not one of pair|ignore`},
		{"media.max_bytes", "media:\n  max_bytes: -1\n", `config.yaml:2:14: media.max_bytes -1 is negative`},
		{"webhook rate_limit", "platforms:\n  webhook:\n    routes:\n      gh:\n        secret: s\n        rate_limit: -2\n", `config.yaml:6:21: platforms.webhook.routes.gh.rate_limit -2 is negative`},
		{"webhook extra rate_limit", "platforms:\n  webhook:\n    extra:\n      rate_limit: -2\n", `config.yaml:4:19: platforms.webhook.rate_limit -2 is negative`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, warns, err := Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if got := join(warns); !strings.Contains(got, tc.want) {
				t.Fatalf("warnings:\n%swant %s", got, tc.want)
			}
		})
	}
}

// A bad value set in the environment names the variable.
func TestBadValueFromTheEnvironmentNamesTheVariable(t *testing.T) {
	home := t.TempDir()
	cfg, warns, err := Load(home, func(k string) string {
		return map[string]string{"HERALD_GATEWAY_BUSY_INPUT_MODE": "later"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `environment (HERALD_GATEWAY_BUSY_INPUT_MODE): busy_input_mode "later" is not one of interrupt|queue; using interrupt`
	if got := join(warns); !strings.Contains(got, want) {
		t.Fatalf("warnings:\n%swant %s", got, want)
	}
	if s := cfg.Source("busy_input_mode"); !s.IsDefault() {
		t.Fatalf("a value replaced by the default is the default's, not %s", s)
	}
}

// Each setting's source: the default, config.yaml's line, .env's line
// with the variable, or the environment's variable.
func TestSources(t *testing.T) {
	home := t.TempDir()
	write(t, home, ".env", "# secrets\nDISCORD_BOT_TOKEN=dc-from-dotenv\n")
	write(t, home, "config.yaml", "model:\n  default: m1\n  base_url: http://127.0.0.1:9/v1\napprovals:\n  mode: off\nplatforms:\n  webhook:\n    extra:\n      secret: s3\n      routes:\n        gh:\n          prompt: hi\n")
	env := map[string]string{"TELEGRAM_BOT_TOKEN": "123:tg-from-env", "HERALD_MAX_ITERATIONS": "7"}
	cfg, warns, err := Load(home, func(k string) string { return env[k] })
	if err != nil || len(warns) != 0 {
		t.Fatalf("load: %v %v", warns, err)
	}
	for key, want := range map[string]string{
		"model.default":                       "config.yaml:2",
		"model.base_url":                      "config.yaml:3",
		"approvals.mode":                      "config.yaml:5",
		"approvals.timeout":                   "default",
		"agent.max_iterations":                "environment (HERALD_MAX_ITERATIONS)",
		"platforms.telegram.token":            "environment (TELEGRAM_BOT_TOKEN)",
		"platforms.discord.token":             ".env:2 (DISCORD_BOT_TOKEN)",
		"platforms.webhook.secret":            "config.yaml:9",
		"platforms.webhook.routes.gh.prompt":  "config.yaml:12",
		"platforms.local.listen":              "default",
		"platforms.telegram.reply_to_mode":    "default",
		"platforms.matrix.free_response_chan": "default",
	} {
		if got := cfg.Source(key).String(); got != want {
			t.Errorf("Source(%s) = %s, want %s", key, got, want)
		}
	}
	// `model: name` is model.default's line
	cfg2, _, err := Parse([]byte("\nmodel: m2\n"))
	if err != nil || cfg2.Source("model.default").String() != "config.yaml:2" {
		t.Fatalf("model: name → %s, %v", cfg2.Source("model.default"), err)
	}
	// the platforms' enablement, derived from the credential's source
	got := map[string]Setting{}
	for _, s := range cfg.Settings() {
		got[s.Key] = s
	}
	for key, want := range map[string]string{
		"platforms.telegram.enabled": "true environment (TELEGRAM_BOT_TOKEN)",
		"platforms.discord.enabled":  "true .env:2 (DISCORD_BOT_TOKEN)",
		"platforms.slack.enabled":    "false default",
		"platforms.webhook.enabled":  "true config.yaml:10",
		"agent.max_iterations":       "7 environment (HERALD_MAX_ITERATIONS)",
		"approvals.mode":             "off config.yaml:5",
		"approvals.timeout":          "5m0s default",
	} {
		s, ok := got[key]
		if !ok {
			t.Errorf("no setting %s", key)
			continue
		}
		if g := fmtValue(s.Value) + " " + s.Source.String(); g != want {
			t.Errorf("%s = %s, want %s", key, g, want)
		}
	}
}

func fmtValue(v any) string {
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

// Settings never holds a secret's value; every credential herald knows is
// masked, and the secrets to redact are the same fields.
func TestSettingsMaskEverySecret(t *testing.T) {
	home := t.TempDir()
	secrets := map[string]string{
		"model.api_key":                      "sk-model-secret-0001",
		"stt.api_key":                        "sk-stt-secret-0002",
		"platforms.telegram.token":           "tg-secret-0003",
		"platforms.telegram.webhook_secret":  "tg-hook-secret-0004",
		"platforms.discord.token":            "dc-secret-0005",
		"platforms.slack.bot_token":          "xoxb-secret-0006",
		"platforms.slack.app_token":          "xapp-secret-0007",
		"platforms.slack.signing_secret":     "slack-sign-secret-0008",
		"platforms.webhook.secret":           "wh-secret-0009",
		"platforms.webhook.routes.gh.secret": "wh-route-secret-0010",
		"platforms.whatsapp.access_token":    "wa-secret-0011",
		"platforms.whatsapp.verify_token":    "wa-verify-secret-0012",
		"platforms.whatsapp.app_secret":      "wa-app-secret-0013",
		"platforms.teams.app_password":       "teams-secret-0014",
		"platforms.matrix.access_token":      "mx-secret-0015",
		"platforms.matrix.password":          "mx-password-secret-0016",
	}
	yaml := "model:\n  api_key: sk-model-secret-0001\nstt:\n  api_key: sk-stt-secret-0002\nplatforms:\n" +
		"  telegram:\n    token: tg-secret-0003\n    webhook_secret: tg-hook-secret-0004\n" +
		"  discord:\n    token: dc-secret-0005\n" +
		"  slack:\n    bot_token: xoxb-secret-0006\n    app_token: xapp-secret-0007\n    signing_secret: slack-sign-secret-0008\n" +
		"  webhook:\n    secret: wh-secret-0009\n    routes:\n      gh:\n        secret: wh-route-secret-0010\n" +
		"  whatsapp:\n    access_token: wa-secret-0011\n    verify_token: wa-verify-secret-0012\n    app_secret: wa-app-secret-0013\n" +
		"  teams:\n    app_password: teams-secret-0014\n" +
		"  matrix:\n    access_token: mx-secret-0015\n    password: mx-password-secret-0016\n"
	write(t, home, "config.yaml", yaml)
	cfg, _, err := Load(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(cfg.Settings())
	if err != nil {
		t.Fatal(err)
	}
	for key, v := range secrets {
		if strings.Contains(string(out), v) {
			t.Errorf("the value of %s is in the settings", key)
		}
		if cfg.Secrets[key] != v {
			t.Errorf("Secrets[%s] = %q, want the value to redact", key, cfg.Secrets[key])
		}
	}
	var masked []string
	for _, s := range cfg.Settings() {
		if s.Secret && s.Value == Masked {
			masked = append(masked, s.Key)
		}
	}
	slices.Sort(masked)
	if want := slices.Sorted(maps.Keys(secrets)); !slices.Equal(masked, want) {
		t.Fatalf("masked %v\nwant %v", masked, want)
	}
}

// MaskFile keeps config.yaml as written but for the secrets' values, in
// every style YAML writes a scalar, and leaves ${NAME} references.
func TestMaskFile(t *testing.T) {
	in := "# my config\nmodel:\n  default: m1   # the model\n  api_key: sk-plain-secret # the key\nplatforms:\n" +
		"  telegram: {token: 'tg-single''quoted', home_channel: '42'}\n" +
		"  discord:\n    token: \"dc-double\\\"quoted\"\n" +
		"  matrix:\n    password: |\n      mx-block-secret\n      second-line\n    user_id: '@bot:example'\n" +
		"  webhook:\n    routes:\n      gh:\n        secret: ${GH_SECRET}\n" +
		"hooks:\n  pre_tool_call:\n    - command: ./x.sh\n      env:\n        GITHUB_TOKEN: ghp-hook-secret\n"
	out, err := MaskFile([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := "# my config\nmodel:\n  default: m1   # the model\n  api_key: \"[REDACTED]\" # the key\nplatforms:\n" +
		"  telegram: {token: \"[REDACTED]\", home_channel: '42'}\n" +
		"  discord:\n    token: \"[REDACTED]\"\n" +
		"  matrix:\n    password: \"[REDACTED]\"\n    user_id: '@bot:example'\n" +
		"  webhook:\n    routes:\n      gh:\n        secret: ${GH_SECRET}\n" +
		"hooks:\n  pre_tool_call:\n    - command: ./x.sh\n      env:\n        GITHUB_TOKEN: \"[REDACTED]\"\n"
	if string(out) != want {
		t.Fatalf("masked:\n%s\nwant:\n%s", out, want)
	}
	if _, _, err := Parse(out); err != nil {
		t.Fatalf("the masked text is not YAML: %v", err)
	}
	// a value over several lines cannot be masked in place: the document
	// is written anew, without the secret
	out, err = MaskFile([]byte("model:\n  api_key: \"spread\n    over-lines\"\n  default: m1 # kept\n"))
	if err != nil || strings.Contains(string(out), "spread") || strings.Contains(string(out), "over-lines") ||
		!strings.Contains(string(out), `api_key: "[REDACTED]"`) || !strings.Contains(string(out), "default: m1 # kept") {
		t.Fatalf("masked: %v\n%s", err, out)
	}
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
