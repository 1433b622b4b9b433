package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldgw/herald/cmd/cmdtest"
)

// The policy service behind an http hook of a whole gateway: rm -rf is
// blocked with the service's reason, anything else runs, and a request
// signed with another secret fails the hook (which, block_on_failure,
// blocks).
func TestHTTPPolicyHook(t *testing.T) {
	for _, tc := range []struct {
		name, serverSecret string
		say, want          string
	}{
		{"blocks rm -rf", "change-me", "run: rm -rf /", "policy: rm -rf is not allowed here"},
		{"lets echo through", "change-me", "run: echo harmless", "harmless"},
		{"bad signature fails closed", "another-secret", "run: echo harmless", "failed closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(Handler(tc.serverSecret))
			defer srv.Close()
			home := t.TempDir()
			config := strings.ReplaceAll(`hooks:
  pre_tool_call:
    - type: http
      url: URL/check
      secret: ${HERALD_POLICY_SECRET}
      allow_private: true
      block_on_failure: true
      timeout_seconds: 5
      priority: 100
`, "URL", srv.URL)
			os.WriteFile(filepath.Join(home, "config.yaml"), []byte(config), 0o600)
			g := cmdtest.Start(t, cmdtest.Options{Home: home, Args: []string{"--accept-hooks"},
				Env: map[string]string{"HERALD_POLICY_SECRET": "change-me", "PATH": os.Getenv("PATH"), "HOME": home}})
			if r := g.Say(t, "c", tc.say); !strings.Contains(r.Text(), tc.want) {
				t.Fatalf("reply = %q, want %q\n%s", r.Text(), tc.want, g.Stderr)
			}
		})
	}
}
