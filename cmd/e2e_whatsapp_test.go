package cmd_test

// A whole gateway on the WhatsApp Cloud API fake: the webhook on the
// inbound listener, the agenttest model, and every proof the other
// platforms give, plus WhatsApp's own: the verification handshake, the
// payload signature, the 24-hour window and approval buttons as a list.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/whatsapp"
	"github.com/heraldgw/herald/adapters/whatsapp/whatsapptest"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/hooks"
)

const (
	waAnn        = "15551230001"
	waStranger   = "15551230002"
	waNeverWrote = "15559990000"
	waVerify     = "wa-verify-token-0123456789"
)

// waLongText is a 9,000-character reply of numbered words.
func waLongText() string {
	var b strings.Builder
	for i := 1; b.Len() < 9000; i++ {
		fmt.Fprintf(&b, "w%04d ", i)
	}
	return strings.TrimSpace(b.String()[:9000])
}

func TestWhatsAppThroughGateway(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	clean := regexp.MustCompile(`clean (\w+)`)
	var fake *whatsapptest.Server
	model := agenttest.New(t)
	model.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		if last := req.LastMessage(); last.Role == "tool" {
			return agenttest.Reply{Content: "result: " + last.Content}
		}
		text := req.UserText()
		switch {
		case text == "hello whatsapp":
			// answer once the typing indicator reached the Graph API: it
			// shows while the turn runs, and a turn that ended first
			// would have stopped it before it was ever sent
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, _ = fake.WaitReads(ctx, 1)
		case text == "long":
			return agenttest.Reply{Content: waLongText()}
		case clean.MatchString(text):
			name := clean.FindStringSubmatch(text)[1]
			cmd := "mkdir -p junk && rm -rf junk && echo " + name + " >> ran.log && echo cleaned-" + name
			return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call_" + name, Name: "terminal", Args: `{"command":"` + cmd + `"}`}}}
		case text == "tell the stranger":
			return agenttest.Reply{ToolCalls: []agenttest.ToolCall{{ID: "call_s", Name: "send_message", Args: `{"target":"whatsapp:` + waNeverWrote + `","message":"hello out of the blue"}`}}}
		}
		return agenttest.Reply{Content: "echo: " + text}
	}}
	fake = whatsapptest.New(whatsapptest.Options{})
	t.Cleanup(fake.Close)
	cfg := "agent:\n  workdir: " + work + "\ninbound:\n  listen: 127.0.0.1:0\nplatforms:\n  whatsapp:\n    api_base: " + fake.APIBase() +
		"\n    allowed_users: [\"" + waAnn + "\"]\n    unauthorized_dm: pair\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := modelEnv(model)
	env["WHATSAPP_ACCESS_TOKEN"] = fake.Token()
	env["WHATSAPP_PHONE_NUMBER_ID"] = fake.PhoneNumberID()
	env["WHATSAPP_VERIFY_TOKEN"] = waVerify
	env["WHATSAPP_APP_SECRET"] = fake.AppSecret()
	skipSecrets := hooks.Plugin{Name: "skip-secrets", Register: func(c *hooks.PluginContext) error {
		c.RegisterHook(hooks.PreGatewayDispatchHook, hooks.Func(func(ctx context.Context, d *hooks.Dispatch) *hooks.DispatchDecision {
			if strings.HasPrefix(d.Message.Text, "secret") {
				return &hooks.DispatchDecision{Action: "skip", Reason: "secret"}
			}
			return nil
		}))
		return nil
	}}
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Env: env, Plugins: []hooks.Plugin{skipSecrets}})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	waitHealth(t, g, ctx, "whatsapp")
	b, err := os.ReadFile(filepath.Join(home, "inbound.addr"))
	if err != nil {
		t.Fatalf("no inbound listener: %v\n%s", err, g.Log())
	}
	hook := fake.Webhook("http://" + strings.TrimSpace(string(b)) + whatsapp.WebhookPath)
	events := g.Events(t)

	texts := func(to string) []string {
		var out []string
		for _, s := range fake.Sent() {
			if s.To == to {
				out = append(out, s.Text)
			}
		}
		return out
	}
	// ask sends text from a user and waits for the business to have sent
	// want messages in all
	ask := func(from, text string, want int) {
		t.Helper()
		if _, err := hook.Send(ctx, whatsapptest.Text(from, "Ann", text)); err != nil {
			t.Fatal(err)
		}
		if _, err := fake.WaitSent(ctx, want); err != nil {
			t.Fatalf("after %q: %v\n%s", text, err, g.Log())
		}
	}

	t.Run("verification", func(t *testing.T) {
		if code, body, err := hook.Verify(ctx, waVerify, "8675309"); err != nil || code != http.StatusOK || body != "8675309" {
			t.Errorf("right verify token: %d %q %v", code, body, err)
		}
		if code, body, _ := hook.Verify(ctx, "wrong", "8675309"); code != http.StatusForbidden || body == "8675309" {
			t.Errorf("wrong verify token: %d %q", code, body)
		}
	})

	t.Run("a DM reaches the agent and the reply arrives", func(t *testing.T) {
		ask(waAnn, "hello whatsapp", 1)
		if got := texts(waAnn); len(got) != 1 || got[0] != "echo: hello whatsapp" {
			t.Fatalf("replies %q", got)
		}
		// the turn showed the typing indicator on the message it answered
		if r := fake.Reads(); len(r) == 0 || !r[0].Typing || !strings.HasPrefix(r[0].MessageID, "wamid.") {
			t.Errorf("read receipts %+v", r)
		}
	})

	t.Run("lifecycle events name whatsapp", func(t *testing.T) {
		// the stream opened before the first message
		if e := cmdtest.WaitFor(t, events, "session:start", 10*time.Second); !strings.Contains(fmt.Sprint(e.Context["session_key"]), ":whatsapp:dm:"+waAnn) {
			t.Errorf("session:start %v", e.Context)
		}
		if e := cmdtest.WaitFor(t, events, "agent:start", 10*time.Second); e.Context["platform"] != "whatsapp" || e.Context["message"] != "hello whatsapp" {
			t.Errorf("agent:start %v", e.Context)
		}
		if e := cmdtest.WaitFor(t, events, "agent:end", 10*time.Second); e.Context["platform"] != "whatsapp" {
			t.Errorf("agent:end %v", e.Context)
		}
	})

	t.Run("a long reply arrives in order in 3 parts", func(t *testing.T) {
		want := gateway.Split(waLongText(), adapters.Limits{MaxLength: whatsapp.MaxLength})
		if len(want) != 3 {
			t.Fatalf("Split made %d parts of 9000 characters, want 3", len(want))
		}
		n := len(fake.Sent())
		ask(waAnn, "long", n+3)
		parts := fake.Sent()[n:]
		for i, p := range parts {
			if p.Text != want[i] {
				t.Errorf("part %d out of order or changed: starts %q", i+1, p.Text[:min(20, len(p.Text))])
			}
		}
	})

	t.Run("a 429 then success delivers once", func(t *testing.T) {
		rejected := fake.Rejected()
		fake.RateLimit(1, time.Second, 0)
		n := len(fake.Sent())
		ask(waAnn, "rate limited", n+1)
		ask(waAnn, "after the limit", n+2) // anything late would land before this
		if got := texts(waAnn); count(got, "echo: rate limited") != 1 || fake.Rejected() != rejected+1 {
			t.Errorf("replies %q, rejected %d", got, fake.Rejected()-rejected)
		}
	})

	t.Run("a redelivered webhook answers nothing twice", func(t *testing.T) {
		n := len(fake.Sent())
		body := fake.Payload([]whatsapptest.Message{whatsapptest.Text(waAnn, "Ann", "only once")})
		post := func() {
			if code, err := hook.Post(ctx, body); err != nil || code != http.StatusOK {
				t.Fatalf("post: %d %v", code, err)
			}
		}
		post()
		if _, err := fake.WaitSent(ctx, n+1); err != nil {
			t.Fatal(err)
		}
		post() // Meta delivers it again
		ask(waAnn, "after the redelivery", n+2)
		if got := texts(waAnn); count(got, "echo: only once") != 1 {
			t.Errorf("replies %q", got)
		}
	})

	t.Run("a bad signature is 401 and no turn", func(t *testing.T) {
		n := len(fake.Sent())
		forged := fake.Payload([]whatsapptest.Message{whatsapptest.Text(waAnn, "Ann", "forged")})
		for _, h := range []*whatsapptest.Webhook{hook.Signed("not-the-app-secret"), hook.WithoutSignature()} {
			if code, err := h.Post(ctx, forged); err != nil || code != http.StatusUnauthorized {
				t.Errorf("forged payload: %d %v, want 401", code, err)
			}
		}
		ask(waAnn, "after the forgery", n+1)
		if got := texts(waAnn); count(got, "echo: forged") != 0 {
			t.Errorf("a forged payload was answered: %q", got)
		}
	})

	t.Run("pre_gateway_dispatch skip sends nothing", func(t *testing.T) {
		n := len(fake.Sent())
		if _, err := hook.Send(ctx, whatsapptest.Text(waAnn, "Ann", "secret plans")); err != nil {
			t.Fatal(err)
		}
		ask(waAnn, "after the secret", n+1)
		if got := fake.Sent()[n:]; len(got) != 1 || got[0].Text != "echo: after the secret" {
			t.Errorf("replies %+v, want only the one after the skipped message", got)
		}
	})

	t.Run("an unknown user gets a pairing code", func(t *testing.T) {
		n := len(fake.Sent())
		ask(waStranger, "let me in", n+1)
		if got := texts(waStranger); len(got) != 1 || !strings.Contains(got[0], "pairing code") || strings.Contains(got[0], "let me in") {
			t.Errorf("replies to the stranger %q", got)
		}
	})

	t.Run("outside the 24-hour window the send fails, naming it", func(t *testing.T) {
		n := len(fake.Sent())
		ask(waAnn, "tell the stranger", n+1)
		got := fake.Sent()[n:]
		if len(got) != 1 || got[0].To != waAnn || !strings.Contains(got[0].Text, "24-hour customer-service window") {
			t.Errorf("sent %+v, want the tool's error about the window in Ann's chat", got)
		}
		if len(texts(waNeverWrote)) != 0 {
			t.Error("a message reached a user outside the window")
		}
		g.WaitLog(t, "24-hour customer-service window", 10*time.Second)
	})

	t.Run("approval buttons are drawn and a press approves", func(t *testing.T) {
		n := len(fake.Sent())
		ask(waAnn, "please clean a", n+1)
		prompt := fake.Sent()[n]
		if prompt.Interactive != "list" || len(prompt.Choices) != 4 || !strings.Contains(prompt.Text, "/approve") {
			t.Fatalf("prompt %+v", prompt)
		}
		var once whatsapptest.Choice
		for _, c := range prompt.Choices {
			if c.Title == "Approve once" {
				once = c
			}
		}
		if _, err := hook.Send(ctx, whatsapptest.ButtonReply(waAnn, "Ann", prompt.ID, once.ID, once.Title, true)); err != nil {
			t.Fatal(err)
		}
		sent, err := fake.WaitSent(ctx, n+3)
		if err != nil {
			t.Fatalf("%v\n%s", err, g.Log())
		}
		var ack, result bool
		for _, s := range sent[n+1:] {
			ack = ack || s.Text == "✅ Approved (once)." && s.ReplyTo == prompt.ID
			result = result || strings.Contains(s.Text, "cleaned-a")
		}
		if !ack || !result {
			t.Errorf("after the press: %+v", sent[n+1:])
		}
		if b, _ := os.ReadFile(filepath.Join(work, "ran.log")); string(b) != "a\n" {
			t.Errorf("ran.log = %q, want the command run once", b)
		}
	})

	if log := g.Log(); strings.Contains(log, fake.Token()) || strings.Contains(log, fake.AppSecret()) || strings.Contains(log, waVerify) {
		t.Error("a WhatsApp credential is in gateway.log")
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// A Graph API base that is no URL is refused at start, naming the setting.
func TestWhatsAppAPIBaseIsChecked(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("platforms:\n  whatsapp:\n    access_token: EAAtest-0123456789\n    api_base: graph.facebook.com/v21.0\n"), 0o600)
	code, _, errOut := run(t, home, "", "gateway")
	if code == 0 || !strings.Contains(errOut, "platforms.whatsapp.api_base \"graph.facebook.com/v21.0\" is not an http(s) URL") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
