package slack_test

// Slash commands: over Socket Mode and the Events API's HTTP request URL,
// through slack-go, into the sink as herald commands, and their replies
// in the channel or to the user alone.

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/slack"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
	"github.com/heraldgw/herald/agent"
)

func TestSlashCommandSocketMode(t *testing.T) {
	sink := make(chanSink, 8)
	srv, _ := startAdapter(t, sink)
	cases := []struct {
		channel, command, text string
		want                   string
		chat                   herald.ChatType
	}{
		{"C1", "/new", "", "/new", herald.ChatChannel},
		{"C1", "/model", " gpt-x ", "/model gpt-x", herald.ChatChannel},
		{"C1", "/herald", "status", "/status", herald.ChatChannel},
		{"G1", "/herald", "model  gpt-x", "/model  gpt-x", herald.ChatGroup},
		{"DU1", "/herald", "/new", "/new", herald.ChatDM},
		{"DU1", "/herald", "", "/help", herald.ChatDM},
		{"DU1", "/HERALD", "whoami", "/whoami", herald.ChatDM},
	}
	for _, tc := range cases {
		in := srv.SlashCommandIn(tc.channel, "U1", tc.command, tc.text)
		m := sink.next(t)
		if m.Text != tc.want || !m.Mentioned || m.Source.ChatID != tc.channel || m.Source.ChatType != tc.chat ||
			m.Source.UserID != "U1" || m.Source.ThreadID != "" || m.Source.Platform != herald.PlatformSlack || m.ID == "" {
			t.Errorf("%s %q in %s: message = %+v, want text %q, mentioned, chat type %s", tc.command, tc.text, tc.channel, m, tc.want, tc.chat)
		}
		if err := srv.WaitAcked(ctxT(t), in.EnvelopeID); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
}

// A slash command the gateway refused (it could not store it) is not
// acknowledged, so Slack sends it again.
func TestSlashCommandRefusedNotAcked(t *testing.T) {
	sink := refuseSlash{make(chanSink, 8)}
	srv, _ := startAdapter(t, sink)
	refused := srv.SlashCommandIn("C1", "U1", "/new", "")
	// the drain goroutine handles envelopes in order: once the message
	// after the command is acked, the command was handled
	after := srv.ChannelMessage("C1", "U1", "after")
	if m := sink.next(t); m.Text != "after" {
		t.Fatalf("sink got %+v", m)
	}
	if err := srv.WaitAcked(ctxT(t), after.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	for _, a := range srv.Acks() {
		if a.EnvelopeID == refused.EnvelopeID {
			t.Errorf("refused slash command %s was acknowledged", refused.EnvelopeID)
		}
	}
}

// refuseSlash refuses the commands made from slash commands, as a gateway
// that cannot store them does, and takes the rest.
type refuseSlash struct{ chanSink }

func (s refuseSlash) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	if strings.HasPrefix(m.Text, "/") {
		return adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped, Err: errors.New("store unavailable")})
	}
	return s.chanSink.Receive(ctx, m)
}

func TestSlashCommandEventsAPI(t *testing.T) {
	srv := newFake(t)
	sink := make(chanSink, 8)
	_, url := runEvents(t, srv, sink)
	form := srv.Form(srv.Slash("C7", "U2", "/herald", "new"))
	cases := []struct {
		name     string
		sign     func(h http.Header, body []byte)
		status   int
		received bool
	}{
		{"signed", func(h http.Header, b []byte) { slacktest.Sign(h, signingSecret, time.Now(), b) }, 200, true},
		{"wrong secret", func(h http.Header, b []byte) { slacktest.Sign(h, "another-secret-value", time.Now(), b) }, 401, false},
		{"unsigned", func(http.Header, []byte) {}, 401, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			postSigned(t, url, "application/x-www-form-urlencoded", form, tc.sign, tc.status)
			if !tc.received {
				select {
				case m := <-sink:
					t.Errorf("refused request reached the sink: %+v", m)
				default:
				}
				return
			}
			// the 200 comes after the gateway took it
			select {
			case m := <-sink:
				if m.Text != "/new" || !m.Mentioned || m.Source.ChatID != "C7" || m.Source.UserID != "U2" {
					t.Errorf("message = %+v", m)
				}
			default:
				t.Error("the command was answered 200 before it reached the sink")
			}
		})
	}
}

// /status typed as a Slack slash command gets the gateway's status reply
// in the channel, at its top level (a slash command has no message to
// thread under).
func TestGatewaySlashStatus(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, agent.Echo{})
	srv.SlashCommandIn("C1", "U1", "/status", "")
	posts, err := srv.WaitPosts(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	p := posts[0]
	if p.Method != "chat.postMessage" || p.Channel != "C1" || p.ThreadTS != "" || !strings.Contains(p.Text, "Session:") || !strings.Contains(p.Text, "State: idle") {
		t.Errorf("reply = %+v, want the status in C1", p)
	}
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
}

// With slash_replies: ephemeral, the replies to a slash command are shown
// to its user alone, the answers to typed messages stay in the channel.
func TestGatewaySlashEphemeral(t *testing.T) {
	srv := newFake(t)
	_, stop := startGatewayConfigured(t, filepath.Join(t.TempDir(), "state.db"), srv, agent.Echo{}, func(c *slack.Config) { c.SlashReplies = slack.SlashEphemeral })
	t.Cleanup(stop)
	srv.SlashCommandIn("C1", "U1", "/herald", "status")
	posts, err := srv.WaitPosts(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	p := posts[0]
	if p.Method != "chat.postEphemeral" || p.Channel != "C1" || p.User != "U1" || p.ThreadTS != "" || !strings.Contains(p.Text, "State: idle") {
		t.Errorf("reply = %+v, want the status shown to U1 alone in C1", p)
	}
	// an agent answer to a slash command is sent whole, ephemerally
	srv.SlashCommandIn("DU2", "U2", "/herald", "/nocommand hello")
	posts, err = srv.WaitPosts(ctxT(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if p := posts[1]; p.Method != "chat.postEphemeral" || p.User != "U2" || p.Channel != "DU2" {
		t.Errorf("second reply = %+v", p)
	}
	srv.Mention("C1", "U1", "typed")
	posts, err = srv.WaitPosts(ctxT(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	if p := posts[2]; p.Method != "chat.postMessage" || p.Channel != "C1" || !strings.Contains(p.Text, "typed") {
		t.Errorf("answer to a mention = %+v, want it in the channel", p)
	}
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
}

func TestSlashRepliesInvalid(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, func(c *slack.Config) { c.SlashReplies = "thread" })
	err := ad.Run(ctxT(t), make(chanSink))
	if err == nil || !strings.Contains(err.Error(), "slash_replies") {
		t.Errorf("Run = %v, want an error naming slash_replies", err)
	}
}

// With the gateway's catalogue, the umbrella command carries a command
// only when its first word is one; anything else is a message.
func TestSlashUmbrellaFreeText(t *testing.T) {
	sink := make(chanSink, 8)
	srv, ad := startAdapter(t, sink)
	ad.SetCommands([]adapters.Command{{Name: "new"}, {Name: "status"}, {Name: "help"}, {Name: "set-home"}})
	for _, tc := range []struct{ text, want string }{
		{"what is the weather", "what is the weather"},
		{"status", "/status"},
		{"STATUS", "/STATUS"},
		{"new  please", "/new  please"},
		{"set_home", "/set_home"},
		{"newt facts", "newt facts"},
		{"/weather now", "/weather now"}, // a slash says it is a command
		{"", "/help"},
	} {
		srv.SlashCommandIn("C1", "U1", "/herald", tc.text)
		if m := sink.next(t); m.Text != tc.want || !m.Mentioned {
			t.Errorf("/herald %q: message %q (mentioned %v), want %q", tc.text, m.Text, m.Mentioned, tc.want)
		}
	}
}

// Through the gateway: "/herald what is the weather" is a question to the
// agent, "/herald status" the status command.
func TestGatewaySlashFreeText(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, agent.Echo{})
	srv.SlashCommandIn("C1", "U1", "/herald", "what is the weather")
	posts, err := srv.WaitMessages(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if p := posts[0]; p.Channel != "C1" || p.Text != agent.EchoPrefix+"what is the weather" {
		t.Errorf("answer = %+v, want the agent's echo of the question", p)
	}
	srv.SlashCommandIn("C1", "U1", "/herald", "status")
	posts, err = srv.WaitMessages(ctxT(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	if p := posts[1]; !strings.Contains(p.Text, "Session:") || !strings.Contains(p.Text, "State:") {
		t.Errorf("reply to /herald status = %+v, want the status", p)
	}
	// an alias of a built-in is a command too
	srv.SlashCommandIn("C1", "U1", "/herald", "commands")
	posts, err = srv.WaitMessages(ctxT(t), 3)
	if err != nil {
		t.Fatal(err)
	}
	if p := posts[2]; !strings.Contains(p.Text, "Commands:") {
		t.Errorf("reply to /herald commands = %+v, want the help", p)
	}
	if err := srv.CheckAcks(3 * time.Second); err != nil {
		t.Error(err)
	}
}
