package slack_test

// End to end: the real gateway.Runner, agent and SQLite store, with the
// slack adapter and the real slack-go client against slacktest.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/slack"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// fixedModel answers every message with one text.
type fixedModel struct{ text string }

func (m fixedModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return openai.ChatCompletionResponse{ID: "fixed", Model: "fixed", Choices: []openai.ChatCompletionChoice{{
		FinishReason: openai.FinishReasonStop,
		Message:      openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: m.text},
	}}}, nil
}

// startGateway runs a gateway whose only platform is slack on srv, with
// a new state.db, until the test ends.
func startGateway(t *testing.T, srv *slacktest.Server, model agent.Model, mods ...func(*gateway.Config)) *slack.Adapter {
	t.Helper()
	ad, stop := startGatewayAt(t, filepath.Join(t.TempDir(), "state.db"), srv, model, mods...)
	t.Cleanup(stop)
	return ad
}

// startGatewayAt runs a gateway on the state.db at path (the adapter keeps
// its threads there too, as herald wires it) until stop is called, which
// waits for it and closes the store.
func startGatewayAt(t *testing.T, path string, srv *slacktest.Server, model agent.Model, mods ...func(*gateway.Config)) (ad *slack.Adapter, stop func()) {
	t.Helper()
	return startGatewayConfigured(t, path, srv, model, nil, mods...)
}

// startGatewayConfigured is startGatewayAt with the adapter's
// configuration changed by adMod (if not nil).
func startGatewayConfigured(t *testing.T, path string, srv *slacktest.Server, model agent.Model, adMod func(*slack.Config), mods ...func(*gateway.Config)) (ad *slack.Adapter, stop func()) {
	t.Helper()
	st, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	reg := hooks.NewRegistry(nil)
	red := herald.NewRedactor()
	ad = newAdapter(srv, func(c *slack.Config) {
		c.Redactor = red
		c.Threads = st
		if adMod != nil {
			adMod(c)
		}
	})
	cfg := gateway.Config{
		Adapters: []adapters.Adapter{ad}, Store: st, Hooks: reg, Redactor: red, Log: log,
		Agent: &agent.Agent{Model: model, Tools: agent.NewTools(), Hooks: reg, Redactor: red, Log: log},
		Keys:  sessions.KeyOptions{GroupPerUser: true},
		Auth: map[herald.Platform]gateway.PlatformAuth{
			herald.PlatformSlack: {RequireMention: true},
		},
		AllowAllUsers: true, ShutdownGrace: 5 * time.Second,
	}
	for _, m := range mods {
		m(&cfg)
	}
	r := gateway.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	before := srv.Connections()
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
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
	if err := srv.WaitConnected(ctxT(t), before+1); err != nil {
		stop()
		t.Fatal(err)
	}
	return ad, stop
}

func TestGatewayDMEcho(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, agent.Echo{})
	srv.DM("U1", "hello over slack")
	posts, err := srv.WaitPosts(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	p := posts[0]
	if p.Channel != "DU1" || p.ThreadTS != "" || !strings.Contains(p.Text, "hello over slack") || !strings.Contains(p.Text, strings.TrimSpace(agent.EchoPrefix)) {
		t.Errorf("reply = %+v", p)
	}
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
}

func TestGatewayChannelMention(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, agent.Echo{})
	// not mentioned: no reply (require_mention)
	srv.ChannelMessage("C1", "U1", "people talking")
	// Slack sends both a message and an app_mention event for one mention
	ev := srv.MentionEvent("C1", "U1", "answer me")
	msg := map[string]any{}
	for k, v := range ev {
		msg[k] = v
	}
	msg["type"], msg["channel_type"] = "message", "channel"
	srv.Inject(msg)
	in := srv.Inject(ev)
	posts, err := srv.WaitPosts(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	p := posts[0]
	if p.Channel != "C1" || p.ThreadTS != in.TS || !strings.Contains(p.Text, "answer me") {
		t.Errorf("reply = %+v, want in thread %s", p, in.TS)
	}
	// a follow-up in that thread needs no mention
	srv.ThreadReply("C1", in.TS, "U1", "and then?")
	posts, err = srv.WaitPosts(ctxT(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if p := posts[1]; p.ThreadTS != in.TS || !strings.Contains(p.Text, "and then?") {
		t.Errorf("follow-up reply = %+v", p)
	}
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
	if n := len(srv.Posts()); n != 2 {
		t.Errorf("%d posts, want 2 (no reply to the unmentioned message, one per mention): %+v", n, srv.Posts())
	}
}

func TestGatewayLongReplyInParts(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 9100; i++ {
		fmt.Fprintf(&b, "line %04d the quick brown fox jumps over\n", i)
	}
	text := strings.TrimSpace(b.String())
	for utf8.RuneCountInString(text) > 9000 {
		text = text[:strings.LastIndexByte(text, '\n')]
	}
	srv := newFake(t)
	ad := startGateway(t, srv, fixedModel{text: text})
	want := gateway.Split(text, ad.Limits())
	if len(want) != 3 {
		t.Fatalf("%d characters should need 3 parts, Split made %d", utf8.RuneCountInString(text), len(want))
	}
	srv.DM("U1", "tell me a long story")
	posts, err := srv.WaitPosts(ctxT(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	var joined []string
	for i, p := range posts {
		if n := utf8.RuneCountInString(p.Text); n > slack.MaxLength {
			t.Errorf("part %d has %d characters", i+1, n)
		}
		if p.Text != want[i] {
			t.Errorf("part %d out of order or changed: starts %q", i+1, p.Text[:min(40, len(p.Text))])
		}
		joined = append(joined, p.Text)
	}
	if s := strings.Join(joined, "\n"); !strings.Contains(s, "line 0000") || !strings.Contains(s, text[strings.LastIndexByte(text, '\n')+1:]) {
		t.Error("first or last line missing")
	}
	if n := len(srv.Posts()); n != 3 {
		t.Errorf("%d posts, want 3", n)
	}
}

func TestGatewayRateLimitDeliversOnce(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, agent.Echo{})
	srv.RateLimitNext(1, 1)
	start := time.Now()
	srv.DM("U1", "through the rate limit")
	posts, err := srv.WaitPosts(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("delivered after %s, before Retry-After (1 s)", took)
	}
	if !strings.Contains(posts[0].Text, "through the rate limit") {
		t.Errorf("reply = %+v", posts[0])
	}
	if n := srv.Calls("chat.postMessage"); n != 2 {
		t.Errorf("chat.postMessage called %d times, want 2 (one 429, one success)", n)
	}
	if n := len(srv.Posts()); n != 1 {
		t.Errorf("%d posts, want exactly 1", n)
	}
}

func TestGatewayReconnectNoDoubleReply(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, agent.Echo{})
	first := srv.DM("U1", "before the drop")
	if _, err := srv.WaitPosts(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	if err := srv.WaitAcked(ctxT(t), first.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	srv.Disconnect("refresh_requested")
	if err := srv.WaitConnected(ctxT(t), 2); err != nil {
		t.Fatal(err)
	}
	// Slack re-sends an envelope it thinks was lost
	srv.Redeliver(first.EnvelopeID)
	second := srv.DM("U1", "after the drop")
	posts, err := srv.WaitPosts(ctxT(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(posts[1].Text, "after the drop") {
		t.Errorf("second reply = %+v", posts[1])
	}
	if err := srv.WaitAcked(ctxT(t), second.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	srv.DropConnections()
	if err := srv.WaitConnected(ctxT(t), 3); err != nil {
		t.Fatal(err)
	}
	srv.Redeliver(first.EnvelopeID)
	srv.DM("U1", "after the second drop")
	posts, err = srv.WaitPosts(ctxT(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(posts[2].Text, "after the second drop") {
		t.Errorf("third reply = %+v", posts[2])
	}
	if n := len(srv.Posts()); n != 3 {
		t.Errorf("%d posts, want 3 (the re-delivered message answered once): %+v", n, srv.Posts())
	}
	// acks travel in order on one connection: once every envelope is
	// acked, so are the re-deliveries
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
	acks := 0
	for _, a := range srv.Acks() {
		if a.EnvelopeID == first.EnvelopeID {
			acks++
		}
	}
	if acks != 3 {
		t.Errorf("re-delivered envelope acked %d times, want 3", acks)
	}
}

func TestGatewayUnknownUserGetsPairingCode(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, agent.Echo{}, func(c *gateway.Config) {
		c.AllowAllUsers = false
		c.Auth[herald.PlatformSlack] = gateway.PlatformAuth{AllowedUsers: []string{"UOWNER"}, UnauthorizedDM: gateway.DMPair, RequireMention: true}
	})
	srv.DM("USTRANGER", "let me in")
	posts, err := srv.WaitPosts(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if p := posts[0]; p.Channel != "DUSTRANGER" || !strings.Contains(p.Text, "pairing code") || !strings.Contains(p.Text, "herald pairing approve slack") {
		t.Errorf("reply = %+v", p)
	}
}

func TestGatewayDispatchSkipSendsNothing(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, agent.Echo{}, func(c *gateway.Config) {
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
	srv.DM("U1", "a secret")
	srv.DM("U1", "a normal one")
	// one chat is handled in order: the second reply means the first
	// message was dealt with
	posts, err := srv.WaitPosts(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(posts) != 1 || !strings.Contains(posts[0].Text, "a normal one") {
		t.Errorf("posts = %+v", posts)
	}
}

// TestGatewayCaptionlessFileShareIsAnswered: a photo shared in a DM with
// no text goes through the gateway and is answered in the DM.
func TestGatewayCaptionlessFileShareIsAnswered(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, fixedModel{"got your photo"})
	photo := srv.AddFile("photo.png", "image/png", pngBytes)
	srv.ShareFiles("DU42", "im", "U42", "", photo)
	posts, err := srv.WaitPosts(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if p := posts[0]; p.Channel != "DU42" || !strings.Contains(p.Text, "got your photo") {
		t.Errorf("post = %+v", p)
	}
}
