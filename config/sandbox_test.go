package config

import (
	"strings"
	"testing"
)

func TestTerminalSandboxSetting(t *testing.T) {
	for _, tc := range []struct{ yaml, want, warn string }{
		{"", "", ""},
		{"tools:\n  terminal:\n    sandbox: bubblewrap\n", "bubblewrap", ""},
		{"tools:\n  terminal:\n    sandbox: none\n", "none", ""},
		{"tools:\n  terminal:\n    sandbox: landlok\n", DefaultTerminalSandbox, "tools.terminal.sandbox \"landlok\" is not one of landlock|bubblewrap|none"},
		{"tools:\n  terminal:\n    sandbx: none\n", "", "did you mean \"tools.terminal.sandbox\""},
	} {
		cfg, warns, err := Parse([]byte(tc.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if cfg.Tools.Terminal.Sandbox != tc.want {
			t.Errorf("%q: sandbox %q, want %q", tc.yaml, cfg.Tools.Terminal.Sandbox, tc.want)
		}
		var ws []string
		for _, w := range warns {
			ws = append(ws, w.String())
		}
		if got := strings.Join(ws, "\n"); tc.warn == "" && got != "" || !strings.Contains(got, tc.warn) {
			t.Errorf("%q: warnings %q, want %q", tc.yaml, got, tc.warn)
		}
	}
}
