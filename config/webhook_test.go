package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWebhookConfig(t *testing.T) {
	home := t.TempDir()
	yaml := `inbound:
  listen: 0.0.0.0:9000
platforms:
  webhook:
    rate_limit: 10
    routes:
      gh:
        secret: ${GH_SECRET}
        events: [pull_request]
        prompt: "PR {pull_request.title}"
        deliver: telegram:-100123
        max_body_bytes: 2048
      unset:
        secret: ${NOT_SET_ANYWHERE}
        delivre: local:x
    extra:
      secret: global-secret-value
      max_body_bytes: 4096
      routes:
        gh:
          prompt: ignored, the direct key wins
        hermes:
          deliver_only: true
          skills: [github-code-review]
`
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte(yaml), 0o600)
	os.WriteFile(filepath.Join(home, ".env"), []byte("GH_SECRET=from-dotenv-0123456789\n"), 0o600)
	cfg, warns, err := Load(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var ws []string
	for _, w := range warns {
		ws = append(ws, w.String())
	}
	all := strings.Join(ws, "\n")
	for _, want := range []string{"platforms.webhook.routes.unset.secret refers to ${NOT_SET_ANYWHERE}, which is not set", "platforms.webhook.routes.hermes.skills",
		`unknown key "platforms.webhook.routes.unset.delivre" (did you mean "platforms.webhook.routes.unset.deliver"?)`} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
	if strings.Count(all, "unknown key") != 1 {
		t.Errorf("unknown keys:\n%s", all)
	}
	if cfg.Inbound.Listen != "0.0.0.0:9000" {
		t.Errorf("inbound.listen = %q", cfg.Inbound.Listen)
	}
	wh := cfg.Platforms.Webhook
	gh, unset, hermes := wh.Routes["gh"], wh.Routes["unset"], wh.Routes["hermes"]
	if gh.Secret != "from-dotenv-0123456789" || gh.Prompt != "PR {pull_request.title}" || gh.RateLimit != 10 || gh.MaxBodyBytes != 2048 || gh.Deliver != "telegram:-100123" {
		t.Errorf("gh = %+v", gh)
	}
	// a ${VAR} that is not set is no secret at all: the route is skipped
	if unset.Secret != "" || unset.MaxBodyBytes != 4096 {
		t.Errorf("unset = %+v", unset)
	}
	if !hermes.DeliverOnly || hermes.Secret != "global-secret-value" {
		t.Errorf("hermes = %+v", hermes)
	}
	for _, s := range []string{"from-dotenv-0123456789", "global-secret-value"} {
		found := false
		for _, v := range cfg.Secrets {
			found = found || v == s
		}
		if !found {
			t.Errorf("secret %q is not redacted", s)
		}
	}

	cfg, _, _ = Parse(nil)
	if cfg.Inbound.Listen != DefaultInboundListen || cfg.Platforms.Webhook.RateLimit != DefaultWebhookRateLimit || cfg.Platforms.Webhook.MaxBodyBytes != DefaultWebhookMaxBody {
		t.Errorf("defaults: %+v %+v", cfg.Inbound, cfg.Platforms.Webhook)
	}
}
