package discord_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/discord"
	"github.com/heraldgw/herald/adapters/discord/discordtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares a JSON wire body with testdata/name (indented).
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		t.Fatalf("%s: not JSON: %v: %s", name, err, body)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s differs:\n got: %s\nwant: %s", path, buf.Bytes(), want)
	}
}

// bound is how long any one wait may take before a test fails; waits end
// as soon as their condition holds.
const bound = 60 * time.Second

type recorder struct{ ch chan herald.Message }

func (r *recorder) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	r.ch <- m
	return adapters.Resolved(adapters.Outcome{Status: adapters.StatusDone})
}

func (r *recorder) next(t *testing.T) herald.Message {
	t.Helper()
	select {
	case m := <-r.ch:
		return m
	case <-time.After(bound):
		t.Fatal("no message reached the sink")
		return herald.Message{}
	}
}

// run starts the adapter against srv (after prepare, if given) and waits
// for its first READY; the cleanup stops it and checks that Run returned
// nil.
func run(t *testing.T, srv *discordtest.Server, cfg discord.Config, sink adapters.Sink, prepare ...func(*discord.Adapter)) *discord.Adapter {
	t.Helper()
	cfg.APIBase = srv.APIBase()
	if cfg.Token == "" {
		cfg.Token = "tok"
	}
	a := discord.New(cfg)
	for _, p := range prepare {
		p(a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, sink) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v", err)
			}
		case <-time.After(bound):
			t.Error("Run did not return after cancel")
		}
	})
	wctx, wcancel := context.WithTimeout(ctx, bound)
	defer wcancel()
	if err := srv.WaitReady(wctx, 1); err != nil {
		t.Fatalf("adapter never connected: %v", err)
	}
	return a
}

// waitHealth polls Health (a state, not an event) until it reads want.
func waitHealth(t *testing.T, a *discord.Adapter, want string) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(bound)
	for a.Health() != want {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("Health = %q, want %q", a.Health(), want)
		}
	}
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	t.Cleanup(cancel)
	return ctx
}

var alice = &discordgo.User{ID: "42", Username: "alice", GlobalName: "Alice"}

// TestAdapter shares one connection (discordgo's Close costs 1 s) across
// inbound translation, sends, edits and typing.
func TestAdapter(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close) // after the adapter stops: cleanups run last-in first-out
	srv.RequireToken("tok")
	srv.AddChannel(&discordgo.Channel{ID: "t1", GuildID: "g1", ParentID: "c1", Type: discordgo.ChannelTypeGuildPublicThread, Name: "help-thread"})
	srv.AddChannel(&discordgo.Channel{ID: "n1", GuildID: "g1", Type: discordgo.ChannelTypeGuildNews, Name: "news"})
	rec := &recorder{ch: make(chan herald.Message, 16)}
	a := run(t, srv, discord.Config{Token: "tok", HomeChannel: "home"}, rec)
	waitHealth(t, a, "connected")
	var ident struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	json.Unmarshal(srv.LastIdentify(), &ident)
	if ident.Token != "Bot tok" || ident.Intents != int(discord.Intents) || discord.Intents&discordgo.IntentMessageContent == 0 {
		t.Errorf("IDENTIFY token %q, intents %d", ident.Token, ident.Intents)
	}
	if a.HomeChannel() != "home" || a.Limits().MaxLength != 2000 {
		t.Errorf("HomeChannel %q, Limits %+v", a.HomeChannel(), a.Limits())
	}

	replyToBot := srv.GuildMessage("g1", "c1", alice, "and this?")
	replyToBot.Type = discordgo.MessageTypeReply
	replyToBot.MessageReference = &discordgo.MessageReference{MessageID: "777", ChannelID: "c1"}
	replyToBot.ReferencedMessage = &discordgo.Message{ID: "777", ChannelID: "c1", Content: "earlier answer", Author: srv.Bot()}
	replyToOther := srv.GuildMessage("g1", "c1", alice, "re")
	replyToOther.ReferencedMessage = &discordgo.Message{ID: "778", Content: "x", Author: &discordgo.User{ID: "7"}}

	inbound := []struct {
		name string
		in   *discordgo.Message
		want herald.Message
	}{
		{"dm", srv.DM(alice, "hello"), herald.Message{Text: "hello", Source: herald.Source{ChatID: "dm-42", ChatType: herald.ChatDM}}},
		{"guild without mention", srv.GuildMessage("g1", "c1", alice, "just chatting"), herald.Message{Text: "just chatting", Source: herald.Source{ChatID: "c1", ChatType: herald.ChatGroup}}},
		{"guild mention", srv.Mention("g1", "c1", alice, "help me"), herald.Message{Text: "help me", Mentioned: true, Source: herald.Source{ChatID: "c1", ChatType: herald.ChatGroup}}},
		{"mention then command", srv.Mention("g1", "c1", alice, "/new"), herald.Message{Text: "/new", Mentioned: true, Source: herald.Source{ChatID: "c1", ChatType: herald.ChatGroup}}},
		{"reply to the bot", replyToBot, herald.Message{Text: "and this?", Mentioned: true, ReplyTo: "777", ReplyToText: "earlier answer", Source: herald.Source{ChatID: "c1", ChatType: herald.ChatGroup}}},
		{"reply to someone else", replyToOther, herald.Message{Text: "re", ReplyTo: "778", ReplyToText: "x", Source: herald.Source{ChatID: "c1", ChatType: herald.ChatGroup}}},
		{"thread", srv.Mention("g1", "t1", alice, "in a thread"), herald.Message{Text: "in a thread", Mentioned: true, Source: herald.Source{ChatID: "c1", ThreadID: "t1", ChatType: herald.ChatThread, ChatName: "help-thread"}}},
		{"announcement channel", srv.GuildMessage("g1", "n1", alice, "news"), herald.Message{Text: "news", Source: herald.Source{ChatID: "n1", ChatType: herald.ChatChannel, ChatName: "news"}}},
	}
	for _, tc := range inbound {
		t.Run("inbound/"+tc.name, func(t *testing.T) {
			id := srv.Inject(tc.in)
			got := rec.next(t)
			want := tc.want
			want.ID = id
			want.Source.Platform, want.Source.UserID, want.Source.UserName = herald.PlatformDiscord, "42", "Alice"
			got.Received = time.Time{}
			if got.ID != want.ID || got.Text != want.Text || got.Mentioned != want.Mentioned || got.Source != want.Source ||
				got.ReplyTo != want.ReplyTo || got.ReplyToText != want.ReplyToText {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}

	t.Run("inbound/dropped", func(t *testing.T) {
		srv.Inject(srv.DM(srv.Bot(), "my own words"))
		srv.Inject(srv.DM(&discordgo.User{ID: "55", Username: "otherbot", Bot: true}, "beep"))
		sys := srv.GuildMessage("g1", "c1", alice, "pinned")
		sys.Type = discordgo.MessageTypeChannelPinnedMessage
		srv.Inject(sys)
		id := srv.Inject(srv.DM(alice, "after the dropped ones"))
		if got := rec.next(t); got.ID != id {
			t.Errorf("got %q (%q), want the message after the dropped ones", got.ID, got.Text)
		}
	})

	ctx := waitCtx(t)
	dm := herald.Target{Platform: herald.PlatformDiscord, ChatID: "dm-42"}
	t.Run("send", func(t *testing.T) {
		sent, err := a.Send(ctx, dm, adapters.Outgoing{Text: "hi @everyone", ReplyTo: "500"})
		if err != nil {
			t.Fatal(err)
		}
		got := srv.Sent()
		last := got[len(got)-1]
		if last.ID != sent.MessageID || last.ChannelID != "dm-42" || last.Content != "hi @everyone" || last.ReplyTo != "500" {
			t.Errorf("sent %+v (id %q)", last, sent.MessageID)
		}
		if !strings.Contains(string(last.AllowedMentions), `"parse":["users"]`) {
			t.Errorf("allowed_mentions = %s, want only users", last.AllowedMentions)
		}
		golden(t, "send_reply.json", last.Body)
	})
	t.Run("send into thread", func(t *testing.T) {
		if _, err := a.Send(ctx, herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1", ThreadID: "t1"}, adapters.Outgoing{Text: "threaded"}); err != nil {
			t.Fatal(err)
		}
		got := srv.Sent()
		if last := got[len(got)-1]; last.ChannelID != "t1" {
			t.Errorf("sent to %q, want the thread t1", last.ChannelID)
		}
	})

	errCases := []struct {
		name  string
		setup func()
		text  string
		check func(t *testing.T, err error)
	}{
		{"429", func() { srv.RateLimitSends(1, 250*time.Millisecond) }, "x", func(t *testing.T, err error) {
			var ra *adapters.RetryAfterError
			if !errors.As(err, &ra) || ra.After != 250*time.Millisecond {
				t.Errorf("err = %v, want RetryAfterError of 250ms", err)
			}
		}},
		{"401", func() { srv.RejectSends(1, 401) }, "x", func(t *testing.T, err error) {
			if !adapters.IsFatal(err) || !strings.Contains(err.Error(), "DISCORD_BOT_TOKEN") {
				t.Errorf("err = %v, want fatal naming DISCORD_BOT_TOKEN", err)
			}
		}},
		{"403", func() { srv.RejectSends(1, 403) }, "x", func(t *testing.T, err error) {
			if err == nil || adapters.IsFatal(err) || strings.Contains(err.Error(), "temporary") {
				t.Errorf("err = %v, want a plain error", err)
			}
		}},
		{"500", func() { srv.RejectSends(1, 500) }, "x", func(t *testing.T, err error) {
			var tmp *adapters.TemporaryError
			if !errors.As(err, &tmp) {
				t.Errorf("err = %v, want TemporaryError", err)
			}
		}},
		{"over 2000 characters", func() {}, strings.Repeat("é", 2001), func(t *testing.T, err error) {
			var tmp *adapters.TemporaryError
			var ra *adapters.RetryAfterError
			if err == nil || adapters.IsFatal(err) || errors.As(err, &tmp) || errors.As(err, &ra) || !strings.Contains(err.Error(), "Invalid Form Body") {
				t.Errorf("err = %v, want a plain 400 error", err)
			}
		}},
	}
	for _, tc := range errCases {
		t.Run("send error/"+tc.name, func(t *testing.T) {
			tc.setup()
			before := len(srv.Sent())
			_, err := a.Send(ctx, dm, adapters.Outgoing{Text: tc.text})
			tc.check(t, err)
			if n := len(srv.Sent()); n != before {
				t.Errorf("%d messages recorded, want none", n-before)
			}
		})
	}

	t.Run("edit", func(t *testing.T) {
		sent, err := a.Send(ctx, dm, adapters.Outgoing{Text: "draft"})
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{"draft", "draft, more", "draft, more", "final"} {
			if err := a.Edit(ctx, dm, sent.MessageID, text); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		for _, e := range srv.Edits() {
			if e.MessageID == sent.MessageID {
				got = append(got, e.Content)
			}
		}
		if strings.Join(got, "|") != "draft, more|final" {
			t.Errorf("edits %q, want identical ones skipped", got)
		}
	})
	t.Run("delete", func(t *testing.T) {
		sent, err := a.Send(ctx, dm, adapters.Outgoing{Text: "preview"})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Delete(ctx, dm, sent.MessageID); err != nil {
			t.Fatal(err)
		}
		if got := srv.Deleted(); len(got) != 1 || got[0] != sent.MessageID {
			t.Errorf("deleted %q, want [%s]", got, sent.MessageID)
		}
		if err := a.Delete(ctx, dm, sent.MessageID); err == nil || adapters.IsFatal(err) {
			t.Errorf("deleting it again: %v", err)
		}
	})
	t.Run("typing", func(t *testing.T) {
		for range 3 {
			if err := a.Typing(ctx, herald.Target{Platform: herald.PlatformDiscord, ChatID: "c1", ThreadID: "t1"}); err != nil {
				t.Fatal(err)
			}
		}
		if n := srv.Typing("t1"); n != 3 {
			t.Errorf("typing sent %d times to the thread, want 3", n)
		}
	})
}

func TestRefusedToken(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close) // after the adapter stops: cleanups run last-in first-out
	srv.RequireToken("right")
	for _, tc := range []struct{ name, token string }{{"wrong token", "wrong"}, {"no token", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			a := discord.New(discord.Config{Token: tc.token, APIBase: srv.APIBase()})
			ctx := waitCtx(t)
			err := a.Run(ctx, &recorder{ch: make(chan herald.Message, 1)})
			if !adapters.IsFatal(err) || !strings.Contains(err.Error(), "DISCORD_BOT_TOKEN") || strings.Contains(err.Error(), "wrong") {
				t.Fatalf("Run = %v, want a fatal error naming DISCORD_BOT_TOKEN (and not the token)", err)
			}
			if h := a.Health(); !strings.HasPrefix(h, "failed: ") {
				t.Errorf("Health = %q", h)
			}
			if srv.Identifies() != 0 {
				t.Error("identified with a refused token")
			}
		})
	}
}

// TestReconnect shares one adapter: a handshake that deadlocks
// discordgo's Open, then a dropped connection whose gateway refuses the
// first attempts to come back.
func TestReconnect(t *testing.T) {
	srv := discordtest.New()
	t.Cleanup(srv.Close) // after the adapter stops: cleanups run last-in first-out
	srv.ReconnectDuringHandshake(1)
	rec := &recorder{ch: make(chan herald.Message, 4)}
	start := time.Now()
	a := run(t, srv, discord.Config{OpenTimeout: time.Second, MinBackoff: 20 * time.Millisecond, MaxBackoff: 80 * time.Millisecond}, rec)
	t.Logf("connected %s after the hung handshake", time.Since(start).Round(time.Millisecond))

	t.Run("hung handshake abandoned", func(t *testing.T) {
		id := srv.Inject(srv.DM(alice, "still there?"))
		if got := rec.next(t); got.ID != id {
			t.Errorf("got %q, want %q", got.ID, id)
		}
	})

	t.Run("drop with the gateway unreachable", func(t *testing.T) {
		waitHealth(t, a, "connected")
		srv.RefuseConnections(3)
		start := time.Now()
		srv.Drop(0)
		if err := srv.WaitResumed(waitCtx(t), 1); err != nil {
			t.Fatal(err)
		}
		t.Logf("resumed %s after the drop, %d attempts refused", time.Since(start).Round(time.Millisecond), srv.Refused())
		if srv.Refused() != 3 || srv.Identifies() != 1 {
			t.Errorf("refused %d, identifies %d; want 3 and 1 (the session resumed)", srv.Refused(), srv.Identifies())
		}
		id := srv.Inject(srv.DM(alice, "back?"))
		if got := rec.next(t); got.ID != id {
			t.Errorf("got %q, want %q", got.ID, id)
		}
		waitHealth(t, a, "connected")
	})
}
