package cmd_test

// The shared inbound listener: Telegram's webhook, Slack's Events API and
// a webhook route served by one listener of a running gateway, each
// checked by its own platform's signature.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/slack/slacktest"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/cmd/cmdtest"
)

func TestInboundListenerServesTelegramSlackAndWebhooks(t *testing.T) {
	const (
		tgSecret      = "tg-webhook-secret-0123456789"
		signingSecret = "slack-signing-secret-0123456789"
	)
	tg := telegramtest.New(telegramtest.Options{MaxPoll: time.Second})
	sl := slacktest.New(slacktest.Options{BotToken: "xoxb-test-bot-token-0123456789"})
	t.Cleanup(tg.Close)
	t.Cleanup(sl.Close)
	home := t.TempDir()
	cfg := "inbound:\n  listen: 127.0.0.1:0\nplatforms:\n" +
		"  telegram:\n    api_endpoint: " + tg.Endpoint() + "\n    allowed_users: [\"*\"]\n" +
		"    webhook_url: https://bot.example/telegram/webhook\n    webhook_secret: " + tgSecret + "\n" +
		"  slack:\n    api_url: " + sl.APIURL() + "\n    allowed_users: [\"*\"]\n    mode: events\n    signing_secret: " + signingSecret + "\n" +
		"  webhook:\n    routes:\n      ci:\n        secret: " + ghSecret + "\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: map[string]string{"TELEGRAM_BOT_TOKEN": tg.Token(), "SLACK_BOT_TOKEN": "xoxb-test-bot-token-0123456789"}})
	b, err := os.ReadFile(filepath.Join(home, "inbound.addr"))
	if err != nil {
		t.Fatalf("no inbound listener: %v\n%s", err, g.Log())
	}
	base := "http://" + strings.TrimSpace(string(b))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, want := range []string{"/slack/events (slack)", "/telegram/webhook (telegram)", "/webhooks/ci (webhook)"} {
		if !strings.Contains(g.Stdout.String(), want) {
			t.Errorf("stdout does not name %s:\n%s", want, g.Stdout)
		}
	}

	waitHealthStates(t, g, ctx, map[string]string{"telegram": "connected (webhook)", "slack": "connected", "webhook": "connected"})
	if wh := tg.Webhook(); wh.Get("url") != "https://bot.example/telegram/webhook" || wh.Get("secret_token") != tgSecret {
		t.Errorf("setWebhook = %v", wh)
	}

	// Telegram: its secret header, or 401; the update is answered
	dm := telegramtest.DMMessage(telegramtest.User{ID: 42, UserName: "alice"}, "hello over the inbound listener")
	for _, secret := range []string{"", "wrong-secret"} {
		if code, err := telegramtest.PostWebhook(ctx, base+"/telegram/webhook", secret, tg.Update(10, dm)); err != nil || code != http.StatusUnauthorized {
			t.Errorf("telegram with secret %q: %d %v", secret, code, err)
		}
	}
	code, err := telegramtest.PostWebhook(ctx, base+"/telegram/webhook", tgSecret, tg.Update(11, dm))
	if err != nil || code != http.StatusOK {
		t.Fatalf("telegram update: %d %v", code, err)
	}
	calls, err := tg.WaitCalls(ctx, "sendMessage", 1)
	if err != nil || !strings.Contains(calls[0].Text, "hello over the inbound listener") {
		t.Fatalf("telegram reply: %+v %v", calls, err)
	}

	// Slack: its request signature, or 401; the event is answered
	_, event := sl.Callback(sl.MessageEvent("D1", "im", "U123", "hello slack events", ""))
	post := func(sign bool) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/slack/events", bytes.NewReader(event))
		req.Header.Set("Content-Type", "application/json")
		if sign {
			slacktest.Sign(req.Header, signingSecret, time.Now(), event)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := post(false); c != http.StatusUnauthorized {
		t.Errorf("unsigned slack event: %d", c)
	}
	if c := post(true); c != http.StatusOK {
		t.Fatalf("slack event: %d", c)
	}
	posts, err := sl.WaitPosts(ctx, 1)
	if err != nil || !strings.Contains(posts[0].Text, "hello slack events") {
		t.Fatalf("slack reply: %+v %v", posts, err)
	}

	// the webhook route beside them, and nothing else
	if c, _ := postHook(t, strings.TrimPrefix(base, "http://"), "ci", []byte(`{}`), map[string]string{"X-Hub-Signature-256": "sha256=00"}); c != http.StatusUnauthorized {
		t.Errorf("webhook route: %d", c)
	}
	for _, p := range []string{"/", "/v1/messages", "/healthz", "/telegram/webhook/x"} {
		resp, err := http.Post(base+p, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s on the inbound listener: %d, want 404", p, resp.StatusCode)
		}
	}
}

// waitHealthStates waits until /healthz reports each platform in its
// state.
func waitHealthStates(t *testing.T, g *cmdtest.Gateway, ctx context.Context, want map[string]string) {
	t.Helper()
	var last map[string]string
	for ctx.Err() == nil {
		res, err := http.Get("http://" + g.Addr + "/healthz")
		if err == nil {
			var h struct {
				Platforms map[string]string `json:"platforms"`
			}
			json.NewDecoder(res.Body).Decode(&h)
			res.Body.Close()
			last = h.Platforms
			ok := true
			for p, s := range want {
				ok = ok && h.Platforms[p] == s
			}
			if ok {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("platforms not in state %v: %v\n%s", want, last, g.Log())
}
