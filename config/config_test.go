package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDefaults(t *testing.T) {
	cfg, warns, err := Parse(nil)
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse(empty) = %v, %v", warns, err)
	}
	if cfg.Platforms.Local.Listen != DefaultLocalListen || cfg.Agent.MaxIterations != DefaultMaxIterations || cfg.BusyMode() != "interrupt" {
		t.Fatalf("defaults not applied: %+v", cfg)
	}
}

func TestModelStringOrMapping(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want, url string }{
		{"string", "model: gpt-test\n", "gpt-test", ""},
		{"mapping default", "model:\n  default: m1\n  base_url: http://127.0.0.1:9/v1\n", "m1", "http://127.0.0.1:9/v1"},
		{"mapping model", "model:\n  model: m2\n", "m2", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, warns, err := Parse([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != 0 {
				t.Fatalf("unexpected warnings %v", warns)
			}
			if cfg.Model.Name != tc.want || cfg.Model.BaseURL != tc.url {
				t.Fatalf("model = %+v", cfg.Model)
			}
		})
	}
}

func TestUnknownKeysWarnWithDidYouMean(t *testing.T) {
	cfg, warns, err := Parse([]byte("platforms:\n  local:\n    lisen: 127.0.0.1:1\nbusy_input_mod: queue\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Platforms.Local.Listen != DefaultLocalListen {
		t.Fatal("a misspelt key must not set anything")
	}
	got := join(warns)
	for _, want := range []string{`config.yaml:3: unknown key "platforms.local.lisen" (did you mean "platforms.local.listen"?)`, `config.yaml:4: unknown key "busy_input_mod" (did you mean "busy_input_mode"?)`} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
}

func TestBadInputIsAnErrorWithLine(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"malformed", "platforms:\n  local:\n    listen: [unclosed\n", "config.yaml:2: did not find expected"},
		{"wrong type", "agent:\n  max_iterations: lots\n", "config.yaml:2: cannot unmarshal"},
		{"bad duration", "approvals:\n  timeout: soon\n", `config.yaml:2:12: "soon" is not a duration`},
		{"top level list", "- a\n- b\n", "config.yaml:1: the top level must be a mapping"},
		{"negative duration", "shutdown_grace: -5s\n", `config.yaml:1:17: duration "-5s" is negative`},
		{"negative seconds", "approvals:\n  timeout: -30\n", `config.yaml:2:12: duration "-30" is negative`},
		{"negative nested", "platforms:\n  discord:\n    open_timeout: -1m\n", `config.yaml:3:19: duration "-1m" is negative`},
		{"NaN seconds", "agent:\n  tool_timeout: NaN\n", `config.yaml:2:17: "NaN" is not a duration`},
		{"infinite seconds", "agent:\n  tool_timeout: Inf\n", `config.yaml:2:17: "Inf" is not a duration`},
		{"seconds overflow", "agent:\n  tool_timeout: 1e300\n", `config.yaml:2:17: duration "1e300" is too long`},
		{"too long", "agent:\n  tool_timeout: 1000000h\n", `config.yaml:2:17: duration "1000000h" is too long`},
		{"unknown unit", "agent:\n  tool_timeout: 5x\n", `config.yaml:2:17: "5x" is not a duration`},
		{"bad reply_to_mode", "platforms:\n  telegram:\n    reply_to_mode: sometimes\n", `config.yaml:3:20: reply_to_mode "sometimes" is not one of first|all|off`},
		// a tab in the indentation: go-yaml names no line for the first
		// one and the enclosing line for others; herald names the tab's
		{"tab on the first line", "\tmodel: x\n", "config.yaml:1:1: a tab in the indentation: YAML indents with spaces only"},
		{"tab-indented key", "model:\n\tdefault: x\n", "config.yaml:2:1: a tab in the indentation"},
		{"tab after spaces", "a: 1\nmodel:\n  \tdefault: x\n", "config.yaml:3:3: a tab in the indentation"},
		{"tab among spaces", "model:\n  default: x\n\tbase_url: y\n", "config.yaml:3:1: a tab in the indentation"},
		{"tab in a block scalar", "agent:\n  system_prompt: |\n    be brief\n\tand kind\n", "config.yaml:4:1: a tab in the indentation"},
		{"tab in a list", "agent:\n  allowed_paths:\n  - /a\n\t- /b\n", "config.yaml:4:1: a tab in the indentation"},
		// a tab further down is not blamed for another character
		{"not the tab", "a: 1\nb: @x\nc:\n\td: 1\n", "config.yaml:2: found character that cannot start any token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tc.yaml))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %q, want %q", err, tc.want)
			}
		})
	}
}

// A config.yaml written for Hermes loads, with warnings for what herald
// does not use, never an error.
func TestHermesConfigLoads(t *testing.T) {
	hermes := `model:
  default: anthropic/claude-sonnet-4.6
  provider: openrouter
toolsets: [hermes-cli]
terminal:
  backend: local
  timeout: 180
display:
  busy_input_mode: queue
  compact: false
memory:
  memory_enabled: true
hooks:
  pre_tool_call:
    - matcher: terminal
      command: ~/.hermes/agent-hooks/block-rm-rf.sh
      timeout: 5
hooks_auto_accept: false
plugins:
  enabled: [foo]
`
	cfg, warns, err := Parse([]byte(hermes))
	if err != nil {
		t.Fatalf("Hermes config failed: %v", err)
	}
	if cfg.Model.Name != "anthropic/claude-sonnet-4.6" || cfg.BusyMode() != "queue" || cfg.Hooks.Node == nil {
		t.Fatalf("cfg = %+v", cfg)
	}
	got := join(warns)
	for _, want := range []string{`"toolsets" is a Hermes setting`, `"terminal" is a Hermes setting`, `unknown key "display.compact"`} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
}

func TestLoadEnvAndDotEnv(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".env"), []byte("# secrets\nOPENAI_API_KEY=sk-fromdotenv-0123456789abcdef\nexport TELEGRAM_BOT_TOKEN=\"123:abc-token-value\"\n"), 0o600)
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("model: from-file\n"), 0o600)
	env := map[string]string{"HERALD_MODEL": "from-env", "HERALD_LOCAL_LISTEN": "127.0.0.1:0", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
	cfg, _, err := Load(home, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model.Name != "from-env" || cfg.Model.APIKey != "sk-fromdotenv-0123456789abcdef" || cfg.Platforms.Local.Listen != "127.0.0.1:0" {
		t.Fatalf("cfg = %+v", cfg.Model)
	}
	if cfg.Platforms.Telegram.Token != "123:abc-token-value" {
		t.Fatalf("telegram token from .env = %q", cfg.Platforms.Telegram.Token)
	}
	ep := cfg.ResolveModel()
	if ep.Offline || ep.BaseURL != "http://127.0.0.1:1/v1" || ep.Model != "from-env" {
		t.Fatalf("endpoint = %+v", ep)
	}
	found := false
	for _, v := range cfg.Secrets {
		if v == "sk-fromdotenv-0123456789abcdef" {
			found = true
		}
	}
	if !found {
		t.Fatal("the API key is not among the secrets to redact")
	}
}

func TestOfflineWithoutCredentials(t *testing.T) {
	cfg, _, _ := Parse(nil)
	if ep := cfg.ResolveModel(); !ep.Offline || ep.Model != "echo" {
		t.Fatalf("endpoint = %+v", ep)
	}
}

func join(ws []Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w.String() + "\n")
	}
	return b.String()
}

// plugins.claude and claude_settings take one path or a list; Hermes'
// plugins keys stay Hermes settings, and a list of names under plugins is
// still accepted.
func TestClaudeHookSources(t *testing.T) {
	cfg, warns, err := Parse([]byte("plugins:\n  enabled: [foo]\n  claude: [plugins/fmt, /opt/guard]\nclaude_settings: proj/.claude/settings.json\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Plugins.Claude, ",") != "plugins/fmt,/opt/guard" || strings.Join(cfg.ClaudeSettings, ",") != "proj/.claude/settings.json" {
		t.Fatalf("plugins.claude %q, claude_settings %q", cfg.Plugins.Claude, cfg.ClaudeSettings)
	}
	if got := join(warns); !strings.Contains(got, `key "plugins.enabled" is a Hermes setting herald does not use`) {
		t.Errorf("warnings %q", got)
	}
	cfg, _, err = Parse([]byte("plugins:\n  claude: plugins/one\nclaude_settings: [a.json, b.json]\n"))
	if err != nil || strings.Join(cfg.Plugins.Claude, ",") != "plugins/one" || len(cfg.ClaudeSettings) != 2 {
		t.Fatalf("single path / list: %+v %v", cfg, err)
	}
	if _, _, err := Parse([]byte("plugins: [foo, bar]\n")); err != nil {
		t.Fatalf("a Hermes list under plugins: %v", err)
	}
	if _, _, err := Parse([]byte("claude_settings: {a: 1}\n")); err == nil || !strings.Contains(err.Error(), "path") {
		t.Fatalf("a mapping as claude_settings: %v", err)
	}
}
