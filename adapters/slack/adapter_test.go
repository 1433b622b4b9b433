package slack_test

// The adapter with the real slack-go client against slacktest: Socket Mode
// inbound, translation, sending, errors, reconnects.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/slack"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
)

func TestDMToSinkAndReplyInChannel(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	sink := make(chanSink, 8)
	run(t, ad, sink)

	in := srv.DM("U100", "hello &lt;bot&gt;")
	m := sink.next(t)
	want := herald.Source{Platform: herald.PlatformSlack, ChatID: "DU100", ChatType: herald.ChatDM, UserID: "U100", UserName: "U100"}
	if m.Source != want || m.ID != in.TS || m.Text != "hello <bot>" || m.Mentioned {
		t.Fatalf("message = %+v, want source %+v, id %s, text %q", m, want, in.TS, "hello <bot>")
	}
	if got := ad.Health(); got != "connected" {
		t.Errorf("Health = %q, want connected", got)
	}

	sent, err := ad.Send(ctxT(t), m.Source.Target(), adapters.Outgoing{Text: "hi **there** <you>"})
	if err != nil {
		t.Fatal(err)
	}
	posts, err := srv.WaitPosts(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	p := posts[0]
	if p.Method != "chat.postMessage" || p.Channel != "DU100" || p.ThreadTS != "" || p.Text != "hi *there* &lt;you&gt;" || !p.Mrkdwn || p.TS != sent.MessageID {
		t.Errorf("post = %+v (sent %+v)", p, sent)
	}
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
}

func TestTranslate(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	sink := make(chanSink, 8)
	run(t, ad, sink)
	bot := srv.BotUserID()

	type want struct {
		chatType  herald.ChatType
		thread    string // "ts" means the message's own ts
		text      string
		mentioned bool
	}
	cases := []struct {
		name   string
		event  func() map[string]any
		want   *want // nil: ignored
		thread string
	}{
		{"channel mention", func() map[string]any { return srv.MentionEvent("C1", "U1", "what time is it?") },
			&want{herald.ChatChannel, "ts", "what time is it?", true}, ""},
		{"mention inside a message event", func() map[string]any {
			return srv.MessageEvent("C1", "channel", "U1", "hey <@"+bot+"|herald> look", "")
		}, &want{herald.ChatChannel, "ts", "hey look", true}, ""},
		{"channel message without mention", func() map[string]any { return srv.MessageEvent("C1", "channel", "U1", "just talking", "") },
			&want{herald.ChatChannel, "ts", "just talking", false}, ""},
		{"thread reply", func() map[string]any {
			return srv.MessageEvent("C1", "channel", "U1", "<@"+bot+"> more", "1699999999.000001")
		}, &want{herald.ChatChannel, "1699999999.000001", "more", true}, ""},
		{"private channel", func() map[string]any { return srv.MessageEvent("G1", "group", "U1", "psst", "") },
			&want{herald.ChatGroup, "ts", "psst", false}, ""},
		{"group DM", func() map[string]any { return srv.MessageEvent("G2", "mpim", "U1", "all of us", "") },
			&want{herald.ChatGroup, "ts", "all of us", false}, ""},
		{"DM in a thread", func() map[string]any { return srv.MessageEvent("DU1", "im", "U1", "in thread", "1699999999.000002") },
			&want{herald.ChatDM, "1699999999.000002", "in thread", false}, ""},
		{"link and specials", func() map[string]any {
			return srv.MessageEvent("DU1", "im", "U1", "see <https://example.com|the site> and <https://x.test> <!here> a &amp; b", "")
		}, &want{herald.ChatDM, "", "see the site (https://example.com) and https://x.test @here a & b", false}, ""},
		{"bot message", func() map[string]any {
			ev := srv.MessageEvent("C1", "channel", "U9", "beep", "")
			ev["bot_id"] = "B9"
			ev["subtype"] = "bot_message"
			return ev
		}, nil, ""},
		{"own message", func() map[string]any { return srv.MessageEvent("C1", "channel", bot, "echo", "") }, nil, ""},
		{"edit", func() map[string]any {
			ev := srv.MessageEvent("C1", "channel", "U1", "", "")
			ev["subtype"] = "message_changed"
			ev["message"] = map[string]any{"type": "message", "user": "U1", "text": "edited", "ts": "1.2"}
			return ev
		}, nil, ""},
		{"delete", func() map[string]any {
			ev := srv.MessageEvent("C1", "channel", "", "", "")
			ev["subtype"] = "message_deleted"
			ev["deleted_ts"] = "1.2"
			return ev
		}, nil, ""},
		{"channel join", func() map[string]any {
			ev := srv.MessageEvent("C1", "channel", "U1", "<@U1> has joined", "")
			ev["subtype"] = "channel_join"
			return ev
		}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := srv.Inject(tc.event())
			// a sentinel after every case: an ignored event must not be
			// what reaches the sink
			sentinel := srv.DM("U7", "sentinel")
			m := sink.next(t)
			if tc.want == nil {
				if m.ID != sentinel.TS {
					t.Fatalf("ignored event reached the sink: %+v", m)
				}
				return
			}
			if m.ID != in.TS {
				t.Fatalf("got message %+v, want id %s", m, in.TS)
			}
			thread := tc.want.thread
			if thread == "ts" {
				thread = in.TS
			}
			if m.Source.ChatType != tc.want.chatType || m.Source.ThreadID != thread || m.Text != tc.want.text || m.Mentioned != tc.want.mentioned {
				t.Errorf("got type=%s thread=%q text=%q mentioned=%v; want %+v (thread %q)", m.Source.ChatType, m.Source.ThreadID, m.Text, m.Mentioned, *tc.want, thread)
			}
			if s := sink.next(t); s.ID != sentinel.TS {
				t.Fatalf("expected the sentinel, got %+v", s)
			}
		})
	}
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
}

func TestThreadTheBotRepliedInCountsAsMention(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	sink := make(chanSink, 8)
	run(t, ad, sink)

	srv.Mention("C5", "U1", "start")
	m := sink.next(t)
	if _, err := ad.Send(ctxT(t), m.Source.Target(), adapters.Outgoing{Text: "in the thread"}); err != nil {
		t.Fatal(err)
	}
	posts, err := srv.WaitPosts(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if posts[0].ThreadTS != m.ID || posts[0].Channel != "C5" {
		t.Fatalf("reply to a top-level mention = %+v, want thread_ts %s", posts[0], m.ID)
	}
	srv.ThreadReply("C5", m.ID, "U1", "and a follow-up without a mention")
	f := sink.next(t)
	if !f.Mentioned || f.Source.ThreadID != m.ID || f.ReplyTo != m.ID {
		t.Errorf("follow-up = %+v, want Mentioned in thread %s", f, m.ID)
	}
	srv.ThreadReply("C5", "1600000000.000001", "U1", "another thread")
	if o := sink.next(t); o.Mentioned {
		t.Errorf("reply in a thread the bot never joined counted as a mention: %+v", o)
	}
}

func TestSendErrors(t *testing.T) {
	cases := []struct {
		name  string
		fail  *slacktest.Failure
		close bool
		check func(t *testing.T, err error)
	}{
		{"429 with Retry-After", &slacktest.Failure{Status: 429, RetryAfter: 1}, false, func(t *testing.T, err error) {
			var ra *adapters.RetryAfterError
			if !errors.As(err, &ra) || ra.After != time.Second {
				t.Errorf("err = %v, want RetryAfterError of 1s", err)
			}
		}},
		{"invalid_auth", &slacktest.Failure{Error: "invalid_auth"}, false, func(t *testing.T, err error) {
			if !adapters.IsFatal(err) || !strings.Contains(err.Error(), "SLACK_BOT_TOKEN") {
				t.Errorf("err = %v, want a FatalError naming SLACK_BOT_TOKEN", err)
			}
		}},
		{"token_revoked", &slacktest.Failure{Error: "token_revoked"}, false, func(t *testing.T, err error) {
			if !adapters.IsFatal(err) {
				t.Errorf("err = %v, want fatal", err)
			}
		}},
		{"msg_too_long", &slacktest.Failure{Error: "msg_too_long"}, false, func(t *testing.T, err error) {
			var ra *adapters.RetryAfterError
			var tmp *adapters.TemporaryError
			if err == nil || adapters.IsFatal(err) || errors.As(err, &ra) || errors.As(err, &tmp) || !strings.Contains(err.Error(), "msg_too_long") {
				t.Errorf("err = %v, want a plain error", err)
			}
		}},
		{"HTTP 503", &slacktest.Failure{Status: 503}, false, func(t *testing.T, err error) {
			var tmp *adapters.TemporaryError
			if !errors.As(err, &tmp) {
				t.Errorf("err = %v, want TemporaryError", err)
			}
		}},
		{"server gone", nil, true, func(t *testing.T, err error) {
			var tmp *adapters.TemporaryError
			if !errors.As(err, &tmp) {
				t.Errorf("err = %v, want TemporaryError", err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			ad := newAdapter(srv)
			if tc.fail != nil {
				srv.FailNext("chat.postMessage", 1, *tc.fail)
			}
			if tc.close {
				srv.Close()
			}
			_, err := ad.Send(ctxT(t), herald.Target{Platform: herald.PlatformSlack, ChatID: "C1"}, adapters.Outgoing{Text: "x"})
			tc.check(t, err)
			if strings.Contains(err.Error(), botToken) {
				t.Errorf("error leaks the token: %v", err)
			}
		})
	}
}

func TestPlainAndHomeChannel(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, func(c *slack.Config) { c.HomeChannel = "CHOME" })
	if ad.HomeChannel() != "CHOME" || ad.Limits().MaxLength != 4000 {
		t.Fatalf("home %q, limits %+v", ad.HomeChannel(), ad.Limits())
	}
	if _, err := ad.Send(ctxT(t), herald.Target{Platform: herald.PlatformSlack}, adapters.Outgoing{Text: "**not bold** & <b>", Plain: true, ReplyTo: "1.5"}); err != nil {
		t.Fatal(err)
	}
	p := srv.Posts()[0]
	if p.Channel != "CHOME" || p.Mrkdwn || p.Text != "**not bold** &amp; &lt;b&gt;" || p.ThreadTS != "1.5" {
		t.Errorf("post = %+v", p)
	}
}

func TestEditSkipsIdentical(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	to := herald.Target{Platform: herald.PlatformSlack, ChatID: "C1", ThreadID: "1.1"}
	sent, err := ad.Send(ctxT(t), to, adapters.Outgoing{Text: "draft"})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"draft", "draft and more", "draft and more"} {
		if err := ad.Edit(ctxT(t), to, sent.MessageID, text); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Calls("chat.update"); n != 1 {
		t.Errorf("chat.update called %d times, want 1 (identical edits skipped)", n)
	}
	posts := srv.Posts()
	if last := posts[len(posts)-1]; last.Method != "chat.update" || last.TS != sent.MessageID || last.Text != "draft and more" {
		t.Errorf("edit = %+v", last)
	}
}

func TestRunFatal(t *testing.T) {
	cases := []struct {
		name  string
		mod   func(*slack.Config)
		token string
	}{
		{"bad bot token", func(c *slack.Config) { c.BotToken = "xoxb-wrong-token-0000" }, "SLACK_BOT_TOKEN"},
		{"bad app token", func(c *slack.Config) { c.AppToken = "xapp-wrong-token-0000" }, "SLACK_APP_TOKEN"},
		{"no bot token", func(c *slack.Config) { c.BotToken = "" }, "SLACK_BOT_TOKEN"},
		{"no app token", func(c *slack.Config) { c.AppToken = "" }, "SLACK_APP_TOKEN"},
		{"events mode without secret", func(c *slack.Config) { c.Mode = slack.ModeEvents; c.SigningSecret = "" }, "SLACK_SIGNING_SECRET"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			ad := newAdapter(srv, tc.mod)
			err := ad.Run(ctxT(t), make(chanSink, 1))
			if !adapters.IsFatal(err) || !strings.Contains(err.Error(), tc.token) {
				t.Fatalf("Run = %v, want a FatalError naming %s", err, tc.token)
			}
			if h := ad.Health(); !strings.HasPrefix(h, "failed: ") || strings.Contains(h, "wrong-token") {
				t.Errorf("Health = %q", h)
			}
		})
	}
}

func TestReconnect(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	sink := make(chanSink, 8)
	run(t, ad, sink)
	if err := srv.WaitConnected(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name      string
		breakConn func()
	}{
		{"disconnect request", func() { srv.Disconnect("refresh_requested") }},
		{"dropped socket", srv.DropConnections},
	}
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.breakConn()
			if err := srv.WaitConnected(ctxT(t), i+2); err != nil {
				t.Fatal(err)
			}
			in := srv.DM("U1", st.name)
			if m := sink.next(t); m.ID != in.TS {
				t.Fatalf("after reconnect got %+v", m)
			}
			// the ack is written after the hand-off; let it land before
			// the next step breaks the connection
			if err := srv.WaitAcked(ctxT(t), in.EnvelopeID); err != nil {
				t.Fatal(err)
			}
		})
	}
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
}

func TestPingTimeoutReconnects(t *testing.T) {
	// a server that pings less often than the client expects is treated as
	// dead: slack-go reconnects, and messages keep flowing
	srv := slacktest.New(slacktest.Options{BotToken: botToken, AppToken: appToken, PingInterval: time.Hour})
	t.Cleanup(srv.Close)
	ad := newAdapter(srv, func(c *slack.Config) { c.PingInterval = 300 * time.Millisecond })
	sink := make(chanSink, 8)
	run(t, ad, sink)
	if err := srv.WaitConnected(ctxT(t), 2); err != nil {
		t.Fatal(err)
	}
	in := srv.DM("U1", "still there?")
	if m := sink.next(t); m.ID != in.TS {
		t.Fatalf("got %+v", m)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, make(chanSink, 1)) }()
	if err := srv.WaitConnected(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Run did not stop")
	}
	t.Logf("Run returned %s after cancel", time.Since(start))
	if h := ad.Health(); h != "stopped" {
		t.Errorf("Health = %q", h)
	}
}

func TestRunUnreachableIsTemporary(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv)
	srv.Close()
	err := ad.Run(ctxT(t), make(chanSink, 1))
	var tmp *adapters.TemporaryError
	if !errors.As(err, &tmp) {
		t.Fatalf("Run = %v, want a TemporaryError (the gateway restarts it)", err)
	}
	if h := ad.Health(); !strings.HasPrefix(h, "reconnecting: ") {
		t.Errorf("Health = %q", h)
	}
}
