package discord_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/discord"
	"github.com/heraldgw/herald/adapters/discord/discordtest"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// longModel answers "long" with a 9,000-character text of numbered
// words and anything else as the echo model does.
type longModel struct{}

func longText() string {
	var b strings.Builder
	for i := 1; b.Len() < 9000; i++ {
		fmt.Fprintf(&b, "w%04d ", i)
	}
	return strings.TrimSpace(b.String()[:9000])
}

func (longModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Content == "long" {
		return openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{FinishReason: openai.FinishReasonStop,
			Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: longText()}}}}, nil
	}
	return agent.Echo{}.Complete(ctx, req)
}

// startGateway runs a real gateway.Runner with the Discord adapter
// against srv; mods change its configuration.
func startGateway(t *testing.T, srv *discordtest.Server, model agent.Model, mods ...func(*gateway.Config)) {
	t.Helper()
	st, err := sessions.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	reg := hooks.NewRegistry(nil)
	// a plugin that keeps messages starting with "secret" from the agent
	reg.Subscribe(hooks.Subscription{Name: "skip-secrets", Attach: hooks.AttachGo, Events: []string{hooks.PreGatewayDispatchHook},
		Handler: func(ctx context.Context, ev hooks.Event) (any, error) {
			if d, ok := ev.Payload.(*hooks.Dispatch); ok && strings.HasPrefix(d.Message.Text, "secret") {
				return hooks.DispatchDecision{Action: "skip", Reason: "secret"}, nil
			}
			return nil, nil
		}})
	ad := discord.New(discord.Config{Token: "tok", APIBase: srv.APIBase()})
	cfg := gateway.Config{
		Adapters: []adapters.Adapter{ad}, Store: st, Hooks: reg, Redactor: herald.NewRedactor("tok"),
		Agent: &agent.Agent{Model: model, Tools: agent.NewTools(), Hooks: reg},
		Auth: map[herald.Platform]gateway.PlatformAuth{
			herald.PlatformDiscord: {AllowedUsers: []string{alice.ID}, UnauthorizedDM: gateway.DMPair, RequireMention: true},
		},
		ShutdownGrace: 2 * time.Second,
	}
	for _, mod := range mods {
		mod(&cfg)
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
				t.Errorf("gateway Run: %v", err)
			}
		case <-time.After(bound):
			t.Error("gateway did not stop")
		}
		st.Close()
	})
	if err := srv.WaitReady(waitCtx(t), 1); err != nil {
		t.Fatalf("adapter never connected: %v", err)
	}
}

// replies returns the final text of every message the bot sent to a
// channel (applying edits), in order.
func replies(srv *discordtest.Server, channel string) []string {
	final := map[string]string{}
	for _, e := range srv.Edits() {
		final[e.MessageID] = e.Content
	}
	var out []string
	for _, m := range srv.Sent() {
		if m.ChannelID != channel {
			continue
		}
		if e, ok := final[m.ID]; ok {
			out = append(out, e)
		} else {
			out = append(out, m.Content)
		}
	}
	return out
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

// ask injects a DM and waits for the bot's total count of messages to
// reach want.
func ask(t *testing.T, srv *discordtest.Server, from *discordgo.User, text string, want int) {
	t.Helper()
	srv.Inject(srv.DM(from, text))
	if _, err := srv.WaitSent(waitCtx(t), want); err != nil {
		t.Fatalf("after %q: %d messages sent, want %d", text, len(srv.Sent()), want)
	}
}

// TestThroughGateway runs the real Runner over one Discord connection.
func TestThroughGateway(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close) // after the adapter stops: cleanups run last-in first-out
	startGateway(t, srv, longModel{})
	const dm = "dm-42"
	echo := func(s string) string { return agent.EchoPrefix + s }

	t.Run("dm gets the echo reply", func(t *testing.T) {
		ask(t, srv, alice, "hello there", 1)
		if got := replies(srv, dm); len(got) != 1 || got[0] != echo("hello there") {
			t.Errorf("replies %q", got)
		}
	})

	t.Run("9000 characters arrive in order in 5 parts", func(t *testing.T) {
		before := len(srv.Sent())
		ask(t, srv, alice, "long", before+5)
		parts := srv.Sent()[before:]
		if len(parts) != 5 {
			t.Fatalf("%d parts, want 5", len(parts))
		}
		suffix := regexp.MustCompile(` \((\d)/5\)$`)
		var words []string
		for i, p := range parts {
			if n := utf8.RuneCountInString(p.Content); n > 2000 {
				t.Errorf("part %d has %d characters", i+1, n)
			}
			m := suffix.FindStringSubmatch(p.Content)
			if m == nil || m[1] != fmt.Sprint(i+1) {
				t.Errorf("part %d ends %q", i+1, p.Content[max(0, len(p.Content)-8):])
				continue
			}
			words = append(words, strings.Fields(strings.TrimSuffix(p.Content, m[0]))...)
		}
		if strings.Join(words, " ") != longText() {
			t.Error("the parts, joined, are not the reply in order")
		}
	})

	t.Run("429 then success delivers once", func(t *testing.T) {
		rejected := srv.Rejected()
		srv.RateLimitSends(1, 50*time.Millisecond)
		n := len(srv.Sent())
		ask(t, srv, alice, "rate limited", n+1)
		ask(t, srv, alice, "next", n+2) // anything late would land before this
		got := replies(srv, dm)
		if count(got, echo("rate limited")) != 1 || srv.Rejected() != rejected+1 {
			t.Errorf("replies %q, rejected %d", got[n:], srv.Rejected()-rejected)
		}
	})

	t.Run("guild: mention required", func(t *testing.T) {
		n := len(srv.Sent())
		srv.Inject(srv.GuildMessage("g1", "c1", alice, "not for the bot"))
		srv.Inject(srv.Mention("g1", "c1", alice, "for the bot"))
		if _, err := srv.WaitSent(waitCtx(t), n+1); err != nil {
			t.Fatal(err)
		}
		ask(t, srv, alice, "sync", n+2) // the DM's reply comes after anything c1 caused
		if got := replies(srv, "c1"); len(got) != 1 || got[0] != echo("for the bot") {
			t.Errorf("replies in c1 %q", got)
		}
	})

	t.Run("guild: attachment-only reply to the bot is answered", func(t *testing.T) {
		n, nc := len(srv.Sent()), len(replies(srv, "c1"))
		plain := srv.GuildMessage("g1", "c1", alice, "")
		plain.Attachments = []*discordgo.MessageAttachment{srv.AddAttachment("c1", "ignored.png", "image/png", []byte("png"))}
		srv.Inject(plain)
		reply := srv.GuildMessage("g1", "c1", alice, "")
		reply.Type = discordgo.MessageTypeReply
		reply.MessageReference = &discordgo.MessageReference{MessageID: srv.Sent()[n-1].ID, ChannelID: "c1"}
		reply.ReferencedMessage = &discordgo.Message{ID: srv.Sent()[n-1].ID, ChannelID: "c1", Content: "earlier", Author: srv.Bot()}
		reply.Attachments = []*discordgo.MessageAttachment{srv.AddAttachment("c1", "photo.png", "image/png", []byte("png"))}
		srv.Inject(reply)
		if _, err := srv.WaitSent(waitCtx(t), n+1); err != nil {
			t.Fatal(err)
		}
		ask(t, srv, alice, "sync media", n+2) // the DM's reply comes after anything c1 caused
		if got := replies(srv, "c1")[nc:]; len(got) != 1 {
			t.Errorf("replies in c1 %q, want one (to the reply only)", got)
		}
	})

	t.Run("pre_gateway_dispatch skip sends nothing", func(t *testing.T) {
		n, nd := len(srv.Sent()), len(replies(srv, dm))
		srv.Inject(srv.DM(alice, "secret plans"))
		ask(t, srv, alice, "after the secret", n+1)
		if got := replies(srv, dm)[nd:]; len(got) != 1 || got[0] != echo("after the secret") {
			t.Errorf("replies %q, want only the one after the skipped message", got)
		}
	})

	t.Run("unknown user gets a pairing code", func(t *testing.T) {
		n := len(srv.Sent())
		ask(t, srv, &discordgo.User{ID: "43", Username: "bob"}, "let me in", n+1)
		got := replies(srv, "dm-43")
		if len(got) != 1 || !strings.Contains(got[0], "pairing code") || strings.Contains(got[0], "let me in") {
			t.Errorf("replies to the unknown user %q", got)
		}
	})

	t.Run("drop, resume, no double reply", func(t *testing.T) {
		n := len(srv.Sent())
		srv.Drop(2) // RESUME gets the last two messages again
		if err := srv.WaitResumed(waitCtx(t), 1); err != nil {
			t.Fatal(err)
		}
		ask(t, srv, alice, "after the drop", n+1)
		ask(t, srv, alice, "sync again", n+2)
		got := replies(srv, dm)
		for _, s := range []string{"sync", "after the drop", "sync again"} {
			if c := count(got, echo(s)); c != 1 {
				t.Errorf("%q answered %d times", s, c)
			}
		}
		if count(replies(srv, "c1"), echo("for the bot")) != 1 {
			t.Error("the replayed mention was answered again")
		}
		if srv.Identifies() != 1 || srv.Resumes() != 1 {
			t.Errorf("identifies %d, resumes %d; want 1 and 1", srv.Identifies(), srv.Resumes())
		}
	})
}
