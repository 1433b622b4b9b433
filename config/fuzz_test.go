package config

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzParse feeds config.yaml text to the decoder. Whatever the input,
// Parse returns (never panics); an error is an *Error whose text starts
// with "config.yaml", and a config it accepts has passed validation: no
// negative duration, and the settings validate repairs are in range.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"model: gpt-test\n",
		"model:\n  default: m1\n  base_url: http://127.0.0.1:9/v1\n  context_window: 0\n",
		"platforms:\n  local:\n    listen: 127.0.0.1:0\n    allowed_users: [a, b]\n  discord:\n    open_timeout: 30\n",
		"approvals:\n  mode: ask\n  timeout: 5m\nshutdown_grace: 1.5\n",
		"session_reset:\n  mode: daily\n  at_hour: 25\n  idle_minutes: -3\n",
		"agent:\n  max_iterations: -1\n  tool_timeout: 1e300\n",
		"busy_input_mode: steer\ndisplay:\n  busy_input_mode: queue\n",
		"hooks:\n  pre_tool_call:\n    - matcher: terminal\n      command: ~/x.sh\n      timeout: 5\nhooks_auto_accept: yes\n",
		"a: &a [*a]\n",
		"- a\n- b\n",
		"shutdown_grace: -5s\n",
		"model: {default: [x]}\n",
		"platforms: {telegram: {enabled: maybe}}\n",
		"cron:\n  max_parallel_jobs: 0\n  wrap_response: false\n",
		"platforms:\n  discord:\n    allowed_channels: [1, '2,3']\n    mention_patterns: ['(?<=x)', hey]\n    reply_to_mode: false\n    allowed_roles: 5\n",
		"platforms:\n  telegram:\n    allowed_chats: {a: 1}\n    free_response_chats: ~\n    mention_patterns: [[x]]\n    reply_to_mode: [all]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, warns, err := Parse(data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "config.yaml") {
				t.Fatalf("error %q (%T) is not a config.yaml *Error", err, err)
			}
			return
		}
		for _, w := range warns {
			if !strings.HasPrefix(w.String(), "config.yaml") {
				t.Fatalf("warning %q does not name config.yaml", w)
			}
		}
		for name, d := range map[string]Duration{
			"shutdown_grace": cfg.ShutdownGrace, "approvals.timeout": cfg.Approvals.Timeout,
			"agent.tool_timeout": cfg.Agent.ToolTimeout, "platforms.discord.open_timeout": cfg.Platforms.Discord.OpenTimeout,
		} {
			if d < 0 || d.D() > maxDuration {
				t.Fatalf("%s = %v accepted", name, d.D())
			}
		}
		switch {
		case cfg.Agent.MaxIterations <= 0, cfg.Model.ContextWindow <= 0, cfg.Cron.MaxParallelJobs <= 0,
			cfg.SessionReset.IdleMinutes <= 0, cfg.SessionReset.AtHour < 0, cfg.SessionReset.AtHour > 23:
			t.Fatalf("validation left a setting out of range: %+v", cfg)
		}
		switch cfg.BusyMode() {
		case "interrupt", "queue":
		default:
			t.Fatalf("busy mode %q after validation", cfg.BusyMode())
		}
		// every setting is listed, with a secret's value masked
		for _, s := range cfg.Settings() {
			if s.Secret && s.Value != Masked && s.Value != "" {
				t.Fatalf("secret %s listed as %v", s.Key, s.Value)
			}
		}
	})
}

// FuzzMaskFile feeds config.yaml text to MaskFile. Whatever the input, it
// returns (never panics); text that is YAML stays YAML, and in it every
// scalar under a key named like a credential is masked, empty, or a
// ${NAME} reference: no secret survives, wherever and however it is
// written (quoted, a block, a flow mapping, an anchor).
func FuzzMaskFile(f *testing.F) {
	for _, s := range []string{
		"",
		"model:\n  api_key: sk-plain\n",
		"platforms:\n  telegram: {token: 'a''b', home_channel: x}\n",
		"platforms:\n  discord:\n    token: \"a\\\"b\"\n",
		"platforms:\n  matrix:\n    password: |\n      line1\n      line2\n    user_id: u\n",
		"platforms:\n  matrix:\n    password: >-\n      folded\n",
		"x: &a s3cret\nmodel:\n  api_key: *a\n",
		"model:\n  api_key: &b !!str tagged\n",
		"hooks:\n  pre_tool_call:\n    - env:\n        GITHUB_TOKEN: ghp\n",
		"platforms:\n  webhook:\n    routes:\n      gh:\n        secret: ${GH}\n",
		"model:\n  api_key: plain\n    continued\n",
		"model:\n  api_key: \"spread\n    over\"\n",
		"token: 12345678\n",
		"- token: x\n",
		"token: &a [*a]\n",
		"a: &a [x, y]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\ntoken: [*c, *c, *c]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := MaskFile(data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %q (%T) is not an *Error", err, err)
			}
			return
		}
		var root yaml.Node
		if err := yaml.Unmarshal(out, &root); err != nil {
			t.Fatalf("masked text is not YAML: %v\n%s", err, out)
		}
		type visit struct {
			n      *yaml.Node
			secret bool
		}
		seen := map[visit]bool{}
		var check func(n *yaml.Node, secret bool, depth int)
		check = func(n *yaml.Node, secret bool, depth int) {
			if seen[visit{n, secret}] {
				return
			}
			seen[visit{n, secret}] = true
			switch n.Kind {
			case yaml.DocumentNode, yaml.SequenceNode:
				for _, x := range n.Content {
					check(x, secret, depth+1)
				}
			case yaml.MappingNode:
				for i := 0; i+1 < len(n.Content); i += 2 {
					check(n.Content[i+1], secret || SecretKey(n.Content[i].Value), depth+1)
				}
			case yaml.AliasNode:
				if n.Alias != nil {
					check(n.Alias, secret, depth+1)
				}
			case yaml.ScalarNode:
				v := strings.TrimSpace(n.Value)
				if secret && v != "" && n.Tag != "!!null" && v != Masked && !secretRef.MatchString(v) {
					t.Fatalf("secret %q left at line %d:\n%s", n.Value, n.Line, out)
				}
			}
		}
		check(&root, false, 0)
	})
}
