package teams_test

// End to end: the real gateway.Runner, agent and SQLite store, with the
// teams adapter's endpoint served on 127.0.0.1 and teamstest as
// Microsoft.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
	"github.com/heraldgw/herald/adapters/teams"
	"github.com/heraldgw/herald/adapters/teams/teamstest"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

const wait = 20 * time.Second

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// fixedModel answers every message with one text.
type fixedModel struct{ text string }

func (m fixedModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return openai.ChatCompletionResponse{ID: "fixed", Model: "fixed", Choices: []openai.ChatCompletionChoice{{
		FinishReason: openai.FinishReasonStop,
		Message:      openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: m.text},
	}}}, nil
}

// bot is a running gateway whose only platform is teams.
type bot struct {
	t    *testing.T
	fake *teamstest.Server
	ad   *teams.Adapter
	url  string // the activity endpoint
	log  *logBuffer
}

type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startBot runs a gateway with the teams adapter against a new fake,
// until the test ends.
func startBot(t *testing.T, model agent.Model, mods ...func(*gateway.Config)) *bot {
	t.Helper()
	fake := teamstest.New(teamstest.Options{})
	t.Cleanup(fake.Close)
	st, err := sessions.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	lb := &logBuffer{}
	var h slog.Handler = slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})
	if testing.Verbose() {
		h = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	log := slog.New(h)
	reg := hooks.NewRegistry(nil)
	red := herald.NewRedactor()
	ad := teams.New(teams.Config{
		AppID: fake.AppID(), AppPassword: fake.AppPassword(),
		OpenIDMetadataURL: fake.OpenIDMetadataURL(), TokenURL: fake.TokenURL(),
		Store: st, Log: log, Redactor: red,
	})
	mux := adapters.NewInboundMux()
	if err := mux.Add("teams", ad.InboundRoutes()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mux)
	cfg := gateway.Config{
		Adapters: []adapters.Adapter{ad}, Store: st, Hooks: reg, Redactor: red, Log: log,
		Agent: &agent.Agent{Model: model, Tools: agent.NewTools(), Hooks: reg, Redactor: red, Log: log},
		Keys:  sessions.KeyOptions{GroupPerUser: true},
		Auth: map[herald.Platform]gateway.PlatformAuth{
			teams.Platform: {RequireMention: true},
		},
		AllowAllUsers: true, ShutdownGrace: 5 * time.Second,
	}
	for _, m := range mods {
		m(&cfg)
	}
	r := gateway.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("gateway: %v", err)
			}
		case <-time.After(wait):
			t.Error("gateway did not stop")
		}
		srv.Close()
		st.Close()
	})
	b := &bot{t: t, fake: fake, ad: ad, url: srv.URL + teams.InboundPath, log: lb}
	// the endpoint answers 503 until Run put the handler up
	for ctx := ctxT(t); ad.Health() != "connected"; {
		select {
		case <-ctx.Done():
			t.Fatal("the adapter did not start")
		case <-time.After(10 * time.Millisecond):
		}
	}
	return b
}

// post sends an activity signed as sg and returns the HTTP status.
func (b *bot) post(act map[string]any, sg teamstest.Signing) int {
	b.t.Helper()
	code, body, err := b.fake.Post(ctxT(b.t), b.url, act, sg)
	if err != nil {
		b.t.Fatal(err)
	}
	if code != http.StatusOK && code != http.StatusUnauthorized {
		b.t.Logf("activity answered %d: %s", code, body)
	}
	return code
}

// send posts a validly signed activity and wants it taken.
func (b *bot) send(act map[string]any) {
	b.t.Helper()
	if code := b.post(act, teamstest.Signing{}); code != http.StatusOK {
		b.t.Fatalf("activity %v answered %d", act["id"], code)
	}
}

var ann = teamstest.User{ID: "29:ann", AAD: "aad-ann", Name: "Ann"}

func TestDMReachesAgentAndReplyArrives(t *testing.T) {
	b := startBot(t, agent.Echo{})
	b.send(b.fake.DM("act-1", ann, "hello over teams"))
	sent, err := b.fake.WaitSent(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	s := sent[0]
	if s.Conversation != "a:29:ann" || !strings.Contains(s.Text, "hello over teams") || s.TextFormat != "markdown" || s.ReplyToID != "act-1" {
		t.Errorf("reply = %+v", s)
	}
	if n := b.fake.TokenRequests(); n != 1 {
		t.Errorf("%d token requests", n)
	}
	if strings.Contains(b.log.String(), b.fake.AppPassword()) {
		t.Error("the app password is in the log")
	}
}

func TestLongReplyInOrderInParts(t *testing.T) {
	var sb strings.Builder
	for i := 0; sb.Len() < 9100; i++ {
		fmt.Fprintf(&sb, "- line %04d the quick brown fox jumps over\n", i)
	}
	text := strings.TrimSpace(sb.String())
	for utf8.RuneCountInString(text) > 9000 {
		text = text[:strings.LastIndexByte(text, '\n')]
	}
	b := startBot(t, fixedModel{text: text})
	want := gateway.Split(text, b.ad.Limits())
	if len(want) != 3 {
		t.Fatalf("%d characters should need 3 parts, Split made %d", utf8.RuneCountInString(text), len(want))
	}
	b.send(b.fake.DM("act-long", ann, "tell me a long story"))
	sent, err := b.fake.WaitSent(ctxT(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sent {
		if n := utf8.RuneCountInString(s.Text); n > teams.MaxLength {
			t.Errorf("part %d has %d characters", i+1, n)
		}
		if s.Text != teams.Format(want[i]) {
			t.Errorf("part %d out of order or changed: starts %q", i+1, s.Text[:min(40, len(s.Text))])
		}
	}
	if n := len(b.fake.Sent()); n != 3 {
		t.Errorf("%d messages, want 3", n)
	}
}

func TestRateLimitThenSuccessDeliversOnce(t *testing.T) {
	b := startBot(t, agent.Echo{})
	b.fake.RateLimitNext(1, 1)
	start := time.Now()
	b.send(b.fake.DM("act-429", ann, "through the rate limit"))
	sent, err := b.fake.WaitSent(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("delivered after %s, before Retry-After (1 s)", took)
	}
	if !strings.Contains(sent[0].Text, "through the rate limit") {
		t.Errorf("reply = %+v", sent[0])
	}
	if n := b.fake.Calls(); n != 2 {
		t.Errorf("%d message posts, want 2 (one 429, one success)", n)
	}
	if n := len(b.fake.Sent()); n != 1 {
		t.Errorf("%d messages, want exactly 1", n)
	}
}

func TestRedeliveredActivityAnsweredOnce(t *testing.T) {
	b := startBot(t, agent.Echo{})
	first := b.fake.DM("act-again", ann, "only once please")
	b.send(first)
	if _, err := b.fake.WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	// the Bot Framework sends an activity again when it saw no 200
	b.send(first)
	b.send(first)
	b.send(b.fake.DM("act-next", ann, "and the next one"))
	sent, err := b.fake.WaitSent(ctxT(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sent[1].Text, "and the next one") {
		t.Errorf("second reply = %+v", sent[1])
	}
	if n := len(b.fake.Sent()); n != 2 {
		t.Errorf("%d messages, want 2 (the redelivered activity answered once): %+v", n, b.fake.Sent())
	}
}

func TestUnknownUserGetsPairingCode(t *testing.T) {
	b := startBot(t, agent.Echo{}, func(c *gateway.Config) {
		c.AllowAllUsers = false
		c.Auth[teams.Platform] = gateway.PlatformAuth{AllowedUsers: []string{"aad-owner"}, UnauthorizedDM: gateway.DMPair, RequireMention: true}
	})
	b.send(b.fake.DM("act-stranger", teamstest.User{ID: "29:stranger", AAD: "aad-stranger", Name: "S"}, "let me in"))
	sent, err := b.fake.WaitSent(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if s := sent[0]; s.Conversation != "a:29:stranger" || !strings.Contains(s.Text, "pairing code") || !strings.Contains(s.Text, "herald pairing approve teams") {
		t.Errorf("reply = %+v", s)
	}
}

func TestDispatchSkipSendsNothing(t *testing.T) {
	b := startBot(t, agent.Echo{}, func(c *gateway.Config) {
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
	b.send(b.fake.DM("act-s1", ann, "a secret"))
	b.send(b.fake.DM("act-s2", ann, "a normal one"))
	// one chat is handled in order: the second reply means the first
	// message was dealt with
	sent, err := b.fake.WaitSent(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || !strings.Contains(sent[0].Text, "a normal one") {
		t.Errorf("sent = %+v", sent)
	}
	for _, a := range b.fake.Activities() {
		if a.Type != "typing" && a.ActivityID != sent[0].ActivityID {
			t.Errorf("Connector call for the skipped message: %+v", a)
		}
	}
}

func TestLifecycleEventsNameTeams(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	got := make(chan struct{}, 8)
	record := func(name string) hooks.Handler {
		return func(ctx context.Context, ev hooks.Event) (any, error) {
			p := ""
			switch v := ev.Payload.(type) {
			case *hooks.SessionStart:
				p = v.Platform
			case *hooks.AgentStart:
				p = v.Platform
			case *hooks.AgentEnd:
				p = v.Platform
			}
			mu.Lock()
			seen[name] = p
			mu.Unlock()
			got <- struct{}{}
			return nil, nil
		}
	}
	points := []string{hooks.SessionStartEv, hooks.AgentStartEv, hooks.AgentEndEv}
	b := startBot(t, agent.Echo{}, func(c *gateway.Config) {
		c.Hooks.LoadPlugins(hooks.Plugin{Name: "recorder", Register: func(pc *hooks.PluginContext) error {
			for _, p := range points {
				pc.RegisterHook(p, record(p))
			}
			return nil
		}})
	})
	b.send(b.fake.DM("act-life", ann, "hello lifecycle"))
	ctx := ctxT(t)
	for range points {
		select {
		case <-got:
		case <-ctx.Done():
			t.Fatalf("events seen: %v", seen)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range points {
		if seen[p] != "teams" {
			t.Errorf("%s platform = %q, want teams (all: %v)", p, seen[p], seen)
		}
	}
}

func TestBadTokensGet401AndNoTurn(t *testing.T) {
	b := startBot(t, agent.Echo{})
	for name, sg := range map[string]teamstest.Signing{
		"unsigned":            {Unsigned: true},
		"wrong key":           {WrongKey: true},
		"expired":             {Expired: true},
		"wrong audience":      {Audience: "someone-else"},
		"wrong issuer":        {Issuer: "https://evil.example"},
		"serviceurl mismatch": {ServiceURL: "https://evil.example/"},
	} {
		if code := b.post(b.fake.DM("act-bad-"+name, ann, "bad "+name), sg); code != http.StatusUnauthorized {
			t.Errorf("%s: answered %d, want 401", name, code)
		}
	}
	// a serviceUrl an attacker named is never called, even when signed
	// for: only https (or a loopback test connector) is trusted
	evil := b.fake.DM("act-evil", ann, "call evil")
	evil["serviceUrl"] = "http://evil.example/"
	if code := b.post(evil, teamstest.Signing{}); code != http.StatusUnauthorized {
		t.Errorf("plain-http serviceUrl: answered %d, want 401", code)
	}
	b.send(b.fake.DM("act-good", ann, "the good one"))
	sent, err := b.fake.WaitSent(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(b.fake.Sent()); n != 1 || !strings.Contains(sent[0].Text, "the good one") {
		t.Errorf("sent %+v, want only the answer to the good activity", b.fake.Sent())
	}
}

func TestChannelNeedsMention(t *testing.T) {
	b := startBot(t, agent.Echo{})
	const channel = "19:general@thread.tacv2"
	b.send(b.fake.ChannelMessage("act-c1", channel, "act-c1", ann, "people talking", false))
	b.send(b.fake.ChannelMessage("act-c2", channel, "act-c2", ann, "answer me", true))
	sent, err := b.fake.WaitSent(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	s := sent[0]
	if s.Conversation != channel+";messageid=act-c2" || !strings.Contains(s.Text, "answer me") || strings.Contains(s.Text, "<at>") {
		t.Errorf("reply = %+v, want in the thread of act-c2 without the mention", s)
	}
	// a conversationUpdate (the bot added to a team) is answered 200 and
	// nothing else
	b.send(b.fake.ConversationUpdate("act-cu", channel))
	b.send(b.fake.DM("act-after", ann, "after"))
	if _, err := b.fake.WaitSent(ctxT(t), 2); err != nil {
		t.Fatal(err)
	}
	if n := len(b.fake.Sent()); n != 2 {
		t.Errorf("%d messages, want 2 (none for the unmentioned message): %+v", n, b.fake.Sent())
	}
}

func TestTokenCachedAcrossReplies(t *testing.T) {
	b := startBot(t, agent.Echo{})
	// four chats (one chat's second message would interrupt its first)
	for i := range 4 {
		u := teamstest.User{ID: fmt.Sprintf("29:u%d", i), AAD: fmt.Sprintf("aad-u%d", i), Name: "U"}
		b.send(b.fake.DM(fmt.Sprintf("act-tok-%d", i), u, fmt.Sprintf("message %d", i)))
	}
	if _, err := b.fake.WaitSent(ctxT(t), 4); err != nil {
		t.Fatal(err)
	}
	if n := b.fake.TokenRequests(); n != 1 {
		t.Errorf("%d token requests for 4 replies, want 1", n)
	}
}

func TestButtonsAsAdaptiveCard(t *testing.T) {
	b := startBot(t, agent.Echo{})
	b.send(b.fake.DM("act-b", ann, "hi"))
	if _, err := b.fake.WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	to := herald.Target{Platform: teams.Platform, ChatID: "a:29:ann"}
	sent, err := b.ad.Send(ctxT(t), to, adapters.Outgoing{Text: "Run **rm**?", Buttons: []adapters.Button{
		{Label: "Approve once", Data: "a:1:once", Style: "primary"}, {Label: "Deny", Data: "a:1:deny", Style: "danger"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := b.fake.WaitSent(ctxT(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	cards := msgs[1].Cards()
	if msgs[1].Text != "Run **rm**?" || len(cards) != 1 || len(cards[0].Actions) != 2 {
		t.Fatalf("card message = %+v", msgs[1])
	}
	a0, a1 := cards[0].Actions[0], cards[0].Actions[1]
	if a0.Type != "Action.Submit" || a0.Title != "Approve once" || a0.Data["herald_button"] != "a:1:once" || a0.Style != "positive" || a1.Style != "destructive" {
		t.Errorf("actions = %+v", cards[0].Actions)
	}
	if err := b.ad.CloseButtons(ctxT(t), to, sent.MessageID, "Approved"); err != nil {
		t.Fatal(err)
	}
	ups, err := b.fake.WaitUpdates(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if u := ups[0]; u.ActivityID != sent.MessageID || u.Text != "Approved" || len(u.Attachments) != 0 {
		t.Errorf("update = %+v", u)
	}
	if err := b.ad.Typing(ctxT(t), to); err != nil {
		t.Errorf("typing: %v", err)
	}
	if err := b.ad.Delete(ctxT(t), to, sent.MessageID); err != nil {
		t.Errorf("delete: %v", err)
	}
	// a conversation no validated activity named is not called
	if _, err := b.ad.Send(ctxT(t), herald.Target{Platform: teams.Platform, ChatID: "a:29:nobody"}, adapters.Outgoing{Text: "x"}); err == nil || !strings.Contains(err.Error(), "serviceUrl") {
		t.Errorf("send to an unknown conversation: %v", err)
	}
}

func TestGroupChatFollowsRequireMention(t *testing.T) {
	b := startBot(t, agent.Echo{})
	const chat = "19:group-1@thread.v2"
	b.send(b.fake.GroupMessage("act-g1", chat, ann, "between us", false))
	b.send(b.fake.GroupMessage("act-g2", chat, ann, "now you", true))
	s, err := b.fake.WaitText(ctxT(t), "now you")
	if err != nil {
		t.Fatal(err)
	}
	if s.Conversation != chat || strings.Contains(s.Text, "<at>") {
		t.Errorf("reply = %+v", s)
	}
	if n := len(b.fake.Sent()); n != 1 {
		t.Errorf("%d messages, want 1 (the unmentioned message is not answered): %+v", n, b.fake.Sent())
	}
}

// An Action.Execute press arrives as an adaptiveCard/action invoke; the
// gateway's answer is the invoke's response, shown to the presser.
func TestInvokePressAnsweredInResponse(t *testing.T) {
	b := startBot(t, agent.Echo{})
	act := b.fake.DM("act-inv", ann, "")
	delete(act, "text")
	act["type"], act["name"] = "invoke", "adaptiveCard/action"
	act["value"] = map[string]any{"action": map[string]any{"type": "Action.Execute", "data": map[string]string{"herald_button": "ap:0123456789abcdef:once"}}}
	code, body, err := b.fake.Post(ctxT(t), b.url, act, teamstest.Signing{})
	if err != nil {
		t.Fatal(err)
	}
	if code != http.StatusOK || !strings.Contains(string(body), `"statusCode":200`) || !strings.Contains(string(body), strings.TrimSuffix(gateway.StaleApprovalText, ".")) {
		t.Errorf("invoke answered %d %s", code, body)
	}
	if n := len(b.fake.Sent()); n != 0 {
		t.Errorf("%d messages sent for an invoke", n)
	}
}
