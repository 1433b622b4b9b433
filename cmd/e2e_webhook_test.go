package cmd_test

// The webhook platform end to end: signed POSTs to the inbound listener
// of a running gateway, answers read from the local outbox.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/webhook"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

const (
	ghSecret = "gh-webhook-secret-0123456789"
	glSecret = "gl-webhook-token-0123456789"
)

const webhookConfig = `inbound:
  listen: 127.0.0.1:0
platforms:
  webhook:
    routes:
      github-pr:
        secret: ${GH_HOOK_SECRET}
        events: [pull_request]
        prompt: "Review PR {{.pull_request.title}} by {{.sender.login}}{{.no.such.key}}"
        deliver: local:c1
      gitlab-mr:
        secret: ` + glSecret + `
        events: [merge_request]
        prompt: "MR {object_attributes.title} ({missing.key})"
        deliver: local:c2
      notify:
        secret: ` + ghSecret + `
        deliver_only: true
        prompt: "{pull_request.title} merged by {sender.login}{nothing}"
        deliver: local:c3
      small:
        secret: ` + ghSecret + `
        max_body_bytes: 100
      unsigned:
        prompt: hi
`

// webhookGateway starts a gateway on home with webhookConfig and the
// fake model m, and returns it with its inbound listener's address.
func webhookGateway(t *testing.T, home string, m *agenttest.Server) (*cmdtest.Gateway, string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(webhookConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	env := modelEnv(m)
	env["GH_HOOK_SECRET"] = ghSecret
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitHealth(t, g, ctx, "webhook")
	b, err := os.ReadFile(filepath.Join(home, "inbound.addr"))
	if err != nil {
		t.Fatalf("no inbound.addr: %v\n%s", err, g.Log())
	}
	return g, strings.TrimSpace(string(b))
}

type hookResp struct {
	Status     string `json:"status"`
	DeliveryID string `json:"delivery_id"`
	Error      string `json:"error"`
}

// postHook posts body to route with headers and returns the status and
// the decoded answer.
func postHook(t *testing.T, addr, route string, body []byte, hdr map[string]string) (int, hookResp) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/webhooks/"+route, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out hookResp
	json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

func github(body []byte, secret, event, delivery string) map[string]string {
	return map[string]string{"X-Hub-Signature-256": webhook.Sign(body, secret), "X-GitHub-Event": event, "X-GitHub-Delivery": delivery}
}

// modelCalls counts the fake model's chat requests whose prompt holds s.
func modelCalls(m *agenttest.Server, s string) int {
	n := 0
	for _, r := range m.Requests() {
		if strings.Contains(r.UserText(), s) {
			n++
		}
	}
	return n
}

func TestWebhookPlatform(t *testing.T) {
	m := agenttest.New(t)
	m.Default = agenttest.Reply{Func: func(r *agenttest.Request) agenttest.Reply {
		return agenttest.Reply{Content: "answer to: " + r.LastMessage().Content}
	}}
	home := t.TempDir()
	g, addr := webhookGateway(t, home, m)
	gw := &bootGW{addr: g.Addr, token: g.Token}
	pr := []byte(`{"action":"opened","pull_request":{"title":"Fix the flux capacitor"},"sender":{"login":"octocat"}}`)

	// a route without a secret is skipped at start, named in the log
	if !strings.Contains(g.Log(), `webhook route \"unsigned\" skipped: no secret`) {
		t.Errorf("no error about the unsigned route:\n%s", g.Log())
	}
	if code, _ := postHook(t, addr, "unsigned", pr, nil); code != http.StatusNotFound {
		t.Errorf("unsigned route: %d, want 404", code)
	}

	t.Run("signed wrongly", func(t *testing.T) {
		for name, hdr := range map[string]map[string]string{
			"wrong secret":   github(pr, "not-the-secret", "pull_request", "d-wrong"),
			"no signature":   {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-none"},
			"other body":     github([]byte(`{}`), ghSecret, "pull_request", "d-other"),
			"gitlab token":   {"X-Gitlab-Token": ghSecret + "x"},
			"generic header": {"X-Webhook-Signature-256": webhook.Sign(pr, "nope")},
		} {
			if code, r := postHook(t, addr, "github-pr", pr, hdr); code != http.StatusUnauthorized {
				t.Errorf("%s: %d %+v, want 401", name, code, r)
			}
		}
	})

	t.Run("events filter", func(t *testing.T) {
		code, r := postHook(t, addr, "github-pr", pr, github(pr, ghSecret, "push", "d-push"))
		if code != http.StatusOK || r.Status != "ignored" {
			t.Errorf("push event: %d %+v", code, r)
		}
	})

	t.Run("github run reaches local:c1", func(t *testing.T) {
		code, r := postHook(t, addr, "github-pr", pr, github(pr, ghSecret, "pull_request", "d-1"))
		if code != http.StatusAccepted || r.Status != "accepted" || r.DeliveryID != "d-1" {
			t.Fatalf("post: %d %+v", code, r)
		}
		got, _ := gw.messages(t, "c1", "", 30)
		if len(got) != 1 || got[0] != "answer to: Review PR Fix the flux capacitor by octocat" {
			t.Fatalf("outbox of c1: %q", got)
		}
	})

	t.Run("gitlab token", func(t *testing.T) {
		mr := []byte(`{"object_kind":"merge_request","object_attributes":{"title":"Bump deps"},"user":{"username":"gl-user"}}`)
		hdr := map[string]string{"X-Gitlab-Token": glSecret, "X-Gitlab-Event": "Merge Request Hook", "X-Gitlab-Event-UUID": "gl-1"}
		if code, r := postHook(t, addr, "gitlab-mr", mr, hdr); code != http.StatusAccepted {
			t.Fatalf("post: %d %+v", code, r)
		}
		got, _ := gw.messages(t, "c2", "", 30)
		if len(got) != 1 || got[0] != "answer to: MR Bump deps ()" {
			t.Fatalf("outbox of c2: %q", got)
		}
	})

	t.Run("deliver_only", func(t *testing.T) {
		before := len(m.Requests())
		hdr := map[string]string{"X-Webhook-Signature-256": webhook.Sign(pr, ghSecret), "X-Request-Id": "n-1"}
		code, r := postHook(t, addr, "notify", pr, hdr)
		if code != http.StatusOK || r.Status != "delivered" {
			t.Fatalf("post: %d %+v", code, r)
		}
		got, _ := gw.messages(t, "c3", "", 0)
		if len(got) != 1 || got[0] != "Fix the flux capacitor merged by octocat" {
			t.Fatalf("outbox of c3: %q", got)
		}
		if n := len(m.Requests()); n != before {
			t.Errorf("deliver_only called the model (%d requests, were %d)", n, before)
		}
	})

	t.Run("413", func(t *testing.T) {
		big := []byte(`{"pad":"` + strings.Repeat("x", 200) + `"}`)
		if code, _ := postHook(t, addr, "small", big, github(big, ghSecret, "ping", "big-1")); code != http.StatusRequestEntityTooLarge {
			t.Errorf("oversized body: %d, want 413", code)
		}
	})

	// the same delivery twice: one run
	dup := []byte(`{"pull_request":{"title":"Only once"},"sender":{"login":"octocat"}}`)
	hdr := github(dup, ghSecret, "pull_request", "d-dup")
	if code, r := postHook(t, addr, "github-pr", dup, hdr); code != http.StatusAccepted {
		t.Fatalf("first: %d %+v", code, r)
	}
	if code, r := postHook(t, addr, "github-pr", dup, hdr); code != http.StatusOK || r.Status != "duplicate" {
		t.Fatalf("second: %d %+v", code, r)
	}
	got, _ := gw.messages(t, "c1", "", 30)
	for len(got) < 2 {
		got, _ = gw.messages(t, "c1", "", 30)
	}
	if n := modelCalls(m, "Only once"); n != 1 {
		t.Errorf("model called %d times for one delivery", n)
	}
	// no secret reaches the log
	for _, s := range []string{ghSecret, glSecret} {
		if strings.Contains(g.Log(), s) {
			t.Errorf("a webhook secret is in the log")
		}
	}
	if n := modelCalls(m, "d-wrong"); n != 0 {
		t.Errorf("a refused request reached the model")
	}
	if n := len(m.Requests()); n != 3 {
		t.Errorf("model called %d times, want 3 (github, gitlab, once)", n)
	}

	// and again after a restart on the same home
	if code := g.Stop(); code != 0 {
		t.Fatalf("stop: %d", code)
	}
	_, addr = webhookGateway(t, home, m)
	if code, r := postHook(t, addr, "github-pr", dup, hdr); code != http.StatusOK || r.Status != "duplicate" {
		t.Fatalf("after restart: %d %+v", code, r)
	}
	if n := modelCalls(m, "Only once"); n != 1 {
		t.Errorf("model called %d times for one delivery across a restart", n)
	}
}
