package telegram_test

// End-to-end: the real gateway.Runner, agent and SQLite store, with the
// telegram adapter and the real client library against the fake Bot API.

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// longModel answers every message with a fixed text.
type longModel struct{ text string }

func (m longModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return openai.ChatCompletionResponse{ID: "long", Model: "long", Choices: []openai.ChatCompletionChoice{{
		FinishReason: openai.FinishReasonStop,
		Message:      openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: m.text},
	}}}, nil
}

type gw struct {
	ad   *telegram.Adapter
	stop func()
}

// startGateway runs a gateway with one telegram adapter on srv, its state
// in dir.
func startGateway(t *testing.T, srv *telegramtest.Server, dir string, model agent.Model, mods ...func(*gateway.Config)) *gw {
	t.Helper()
	st := openStore(t, dir)
	log := slog.New(slog.DiscardHandler)
	reg := hooks.NewRegistry(log)
	red := herald.NewRedactor()
	ad := newAdapter(srv, func(c *telegram.Config) { c.Store = st; c.Redactor = red })
	cfg := gateway.Config{
		Adapters: []adapters.Adapter{ad}, Store: st, Hooks: reg, Redactor: red, Log: log,
		Agent:         &agent.Agent{Model: model, Tools: agent.NewTools(), Hooks: reg, Redactor: red, Log: log},
		Keys:          sessions.KeyOptions{GroupPerUser: true},
		AllowAllUsers: true, ShutdownGrace: 5 * time.Second,
		Auth: map[herald.Platform]gateway.PlatformAuth{herald.PlatformTelegram: {RequireMention: true}},
	}
	for _, mod := range mods {
		mod(&cfg)
	}
	r := gateway.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	g := &gw{ad: ad}
	g.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("gateway: %v", err)
				}
			case <-time.After(wait):
				t.Error("gateway did not stop")
			}
			st.Close()
		})
	}
	t.Cleanup(g.stop)
	return g
}

func TestGatewayEchoReply(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), agent.Echo{})
	in := srv.DM(42, "alice", "hello over telegram")
	calls, err := srv.WaitCalls(ctxT(t), "sendMessage", 1)
	if err != nil {
		t.Fatal(err)
	}
	c := calls[0]
	if c.ChatID != "42" || !strings.Contains(c.Text, "hello over telegram") || !strings.Contains(c.Text, strings.TrimSpace(agent.EchoPrefix)) {
		t.Errorf("reply = %+v (to message %d)", c, in.MessageID)
	}
}

func TestGatewayLongReplyInParts(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 9000; i++ {
		fmt.Fprintf(&b, "line %04d 😀 the quick brown fox jumps\n", i)
	}
	// 9,000 characters, counted the way Telegram counts
	text := b.String()
	for adapters.UTF16Len(text) > 9000 {
		text = text[:strings.LastIndexByte(strings.TrimSuffix(text, "\n"), '\n')+1]
	}
	text = strings.TrimSuffix(text, "\n")
	srv := newFake(t)
	g := startGateway(t, srv, t.TempDir(), longModel{text: text})
	want := gateway.Split(text, g.ad.Limits())
	if len(want) != 3 {
		t.Fatalf("a reply of %d UTF-16 units should need 3 parts, Split made %d", adapters.UTF16Len(text), len(want))
	}
	srv.DM(42, "alice", "tell me a long story")
	calls, err := srv.WaitCalls(ctxT(t), "sendMessage", len(want))
	if err != nil {
		t.Fatal(err)
	}
	var joined strings.Builder
	for i, c := range calls {
		suffix := fmt.Sprintf(" (%d/%d)", i+1, len(want))
		if !strings.HasSuffix(c.Text, suffix) || adapters.UTF16Len(c.Text) > telegram.MaxLength {
			t.Errorf("part %d: %d units, ends %q", i+1, adapters.UTF16Len(c.Text), c.Text[max(0, len(c.Text)-12):])
		}
		joined.WriteString(strings.TrimSuffix(c.Text, suffix) + "\n")
	}
	if got := strings.TrimSuffix(joined.String(), "\n"); got != text {
		t.Errorf("parts do not rebuild the reply in order (got %d bytes, want %d)", len(got), len(text))
	}
	if n := srv.Attempts("sendMessage"); n != len(want) {
		t.Errorf("sendMessage attempts = %d, want %d", n, len(want))
	}
}

func TestGatewayRateLimitThenSuccessDeliversOnce(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), agent.Echo{})
	srv.RateLimit("sendMessage", 1, 1)
	srv.DM(42, "alice", "are you there")
	if _, err := srv.WaitCalls(ctxT(t), "sendMessage", 1); err != nil {
		t.Fatal(err)
	}
	// let any stray duplicate show up before counting
	if err := srv.Wait(ctxT(t), func() bool { return srv.Confirmed() >= 2 }); err != nil {
		t.Fatal(err)
	}
	if n := srv.Attempts("sendMessage"); n != 2 {
		t.Errorf("sendMessage attempts = %d, want 2 (one 429, one success)", n)
	}
	if c := srv.Calls("sendMessage"); len(c) != 1 || !strings.Contains(c[0].Text, "are you there") {
		t.Errorf("delivered = %+v", c)
	}
}

// Updates that arrive while the gateway is down are answered once each
// after it comes back; those answered before are not answered again.
func TestGatewayRestartWithPendingUpdates(t *testing.T) {
	srv := newFake(t)
	dir := t.TempDir()
	g := startGateway(t, srv, dir, agent.Echo{})
	srv.DM(42, "alice", "first")
	if _, err := srv.WaitCalls(ctxT(t), "sendMessage", 1); err != nil {
		t.Fatal(err)
	}
	g.stop()
	srv.DM(42, "alice", "second")
	srv.DM(43, "bob", "third")
	startGateway(t, srv, dir, agent.Echo{})
	calls, err := srv.WaitCalls(ctxT(t), "sendMessage", 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(ctxT(t), func() bool { return srv.Confirmed() >= 4 }); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range srv.Calls("sendMessage") {
		for _, w := range []string{"first", "second", "third"} {
			if strings.Contains(c.Text, w) {
				count[w]++
			}
		}
	}
	if count["first"] != 1 || count["second"] != 1 || count["third"] != 1 || len(calls) != 3 {
		t.Errorf("replies per message = %v (%d calls)", count, len(srv.Calls("sendMessage")))
	}
}

func TestGatewayUnknownUserGetsPairingCode(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), agent.Echo{}, func(c *gateway.Config) {
		c.AllowAllUsers = false
		c.Auth[herald.PlatformTelegram] = gateway.PlatformAuth{AllowedUsers: []string{"1"}, UnauthorizedDM: gateway.DMPair}
	})
	srv.DM(42, "stranger", "let me in")
	calls, err := srv.WaitCalls(ctxT(t), "sendMessage", 1)
	if err != nil {
		t.Fatal(err)
	}
	if c := calls[0]; c.ChatID != "42" || !strings.Contains(c.Text, "pairing code") || !strings.Contains(c.Text, "herald pairing approve telegram") {
		t.Errorf("reply = %+v", c)
	}
}

func TestGatewayDispatchSkipSendsNothing(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), agent.Echo{}, func(c *gateway.Config) {
		c.Hooks.LoadPlugins(hooks.Plugin{Name: "skipper", Register: func(pc *hooks.PluginContext) error {
			pc.RegisterHook(hooks.PreGatewayDispatchHook, func(ctx context.Context, ev hooks.Event) (any, error) {
				if d, ok := ev.Payload.(*hooks.Dispatch); ok && strings.Contains(d.Message.Text, "secret") {
					return &hooks.DispatchDecision{Action: "skip", Reason: "test"}, nil
				}
				return nil, nil
			})
			return nil
		}})
	})
	srv.DM(42, "alice", "a secret")
	srv.DM(42, "alice", "a normal one")
	calls, err := srv.WaitCalls(ctxT(t), "sendMessage", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(ctxT(t), func() bool { return srv.Confirmed() >= 3 }); err != nil {
		t.Fatal(err)
	}
	calls = srv.Calls("sendMessage")
	if len(calls) != 1 || !strings.Contains(calls[0].Text, "a normal one") {
		t.Errorf("sent = %+v", calls)
	}
}

// In a group only messages addressed to the bot start a turn; the reply
// goes to the group (and topic).
func TestGatewayGroupNeedsMention(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), agent.Echo{})
	alice := telegramtest.User{ID: 42, UserName: "alice"}
	srv.GroupMessage(-7, alice, "chatter nobody asked about")
	srv.Mention(-7, alice, "ping")
	srv.Topic(-8, 5, alice, "in the topic")
	calls, err := srv.WaitCalls(ctxT(t), "sendMessage", 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(ctxT(t), func() bool { return srv.Confirmed() >= 4 }); err != nil {
		t.Fatal(err)
	}
	calls = srv.Calls("sendMessage")
	byChat := map[string]telegramtest.Call{}
	for _, c := range calls {
		byChat[c.ChatID] = c
	}
	if len(calls) != 2 || !strings.Contains(byChat["-7"].Text, "ping") || byChat["-8"].ThreadID != "5" || !strings.Contains(byChat["-8"].Text, "in the topic") {
		t.Errorf("sent = %+v", calls)
	}
}

// A dropped connection reconnects, and nothing is answered twice.
func TestGatewayDroppedConnection(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), agent.Echo{})
	srv.DM(42, "alice", "one")
	if _, err := srv.WaitCalls(ctxT(t), "sendMessage", 1); err != nil {
		t.Fatal(err)
	}
	srv.Drop("getUpdates", 2)
	srv.CloseConnections()
	srv.DM(42, "alice", "two")
	srv.Drop("sendMessage", 1) // the reply's first attempt is lost too
	if _, err := srv.WaitCalls(ctxT(t), "sendMessage", 2); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(ctxT(t), func() bool { return srv.Confirmed() >= 3 }); err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls("sendMessage")
	if len(calls) != 2 || !strings.Contains(calls[0].Text, "one") || !strings.Contains(calls[1].Text, "two") {
		for _, c := range srv.Calls("") {
			t.Logf("%s %s %q", c.Method, c.MessageID, c.Text)
		}
		t.Errorf("sent = %+v", calls)
	}
}
