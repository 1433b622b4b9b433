package config

import (
	"errors"
	"strings"
	"testing"
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
	})
}
