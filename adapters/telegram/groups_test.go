package telegram_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/gateway"
)

// In a group, /cmd@otherbot is another bot's: no answer, and /new@otherbot
// does not reset herald's session; /cmd@herald's_bot is herald's and
// counts as a mention; a plain /cmd without a mention is ignored as any
// other unmentioned message is. The answer quotes the command (group,
// reply_to_mode first).
func TestGatewayGroupCommandsForOtherBots(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), agent.Echo{}, func(c *gateway.Config) {
		c.Auth[herald.PlatformTelegram] = gateway.PlatformAuth{RequireMention: true, GroupManners: gateway.GroupManners{ReplyToMode: "first"}}
	})
	alice := telegramtest.User{ID: 42, UserName: "alice"}
	srv.Mention(-7, alice, "remember me")
	if _, err := srv.WaitCalls(ctxT(t), "sendMessage", 1); err != nil {
		t.Fatal(err)
	}
	srv.GroupMessage(-7, alice, "/status@otherbot")
	srv.GroupMessage(-7, alice, "/new@otherbot")
	srv.GroupMessage(-7, alice, "/status")
	mine := srv.GroupMessage(-7, alice, "/status@"+strings.ToUpper(srv.BotUsername()))
	calls, err := srv.WaitCalls(ctxT(t), "sendMessage", 2)
	if err != nil {
		t.Fatal(err)
	}
	// one chat's messages are handled in order: when the last is
	// answered, the three before it were handled
	if len(calls) != 2 {
		t.Fatalf("sent %+v", calls)
	}
	st := calls[1]
	if !strings.HasPrefix(st.Text, "Session: ") || strings.Contains(st.Text, "(none yet)") {
		t.Fatalf("/status@%s answered %q: want the session made by the first message (no reset)", srv.BotUsername(), st.Text)
	}
	if st.ReplyTo != strconv.Itoa(mine.MessageID) {
		t.Errorf("answer quotes %q, want the command %d", st.ReplyTo, mine.MessageID)
	}
	if first := calls[0]; first.ReplyTo == "" {
		t.Errorf("the first answer does not quote: %+v", first)
	}
}
