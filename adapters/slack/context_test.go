package slack_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heraldgw/herald/adapters/slack/slacktest"
)

// A mention in the middle of a thread the bot never joined brings the
// thread's earlier messages along, bounded in count and size, newest
// kept; a failed read leaves the message without them.
func TestMidThreadMentionGetsThreadContext(t *testing.T) {
	sink := make(chanSink, 8)
	srv, _ := startAdapter(t, sink)

	parent := srv.AddMessage("C7", "", "U1", "our release plan")
	for i := range 50 {
		srv.AddMessage("C7", parent, fmt.Sprintf("U%d", 2+i%3), fmt.Sprintf("note %02d &lt;b&gt;", i))
	}
	ev := srv.MessageEvent("C7", "channel", "U9", "<@"+slacktest.DefaultBotUserID+"> sum this up", parent)
	srv.Inject(ev)
	m := sink.next(t)
	ctx := m.ThreadContext
	if !m.Mentioned || m.Text != "sum this up" {
		t.Fatalf("message = %+v", m)
	}
	lines := strings.Split(ctx, "\n")
	// a header, 30 messages, an end line
	if len(lines) != 32 || !strings.Contains(lines[1], "note 20 <b>") || !strings.Contains(lines[30], "note 49") {
		t.Errorf("thread context (%d lines):\n%s", len(lines), ctx)
	}
	if strings.Contains(ctx, "our release plan") || strings.Contains(ctx, "sum this up") {
		t.Errorf("thread context holds the oldest or the current message:\n%s", ctx)
	}

	// one huge message: the text is cut to the bound
	big := srv.AddMessage("C7", "", "U1", strings.Repeat("word ", 5000))
	srv.Inject(srv.MessageEvent("C7", "channel", "U9", "<@"+slacktest.DefaultBotUserID+"> too long?", big))
	if n := utf8.RuneCountInString(sink.next(t).ThreadContext); n > 8200 || n < 7000 {
		t.Errorf("thread context of a 25,000-character thread is %d characters, want about 8,000", n)
	}

	// Slack refuses the read: the message still comes, without context
	other := srv.AddMessage("C7", "", "U1", "another thread")
	srv.FailNext("conversations.replies", 1, slacktest.Failure{Error: "missing_scope"})
	srv.Inject(srv.MessageEvent("C7", "channel", "U9", "<@"+slacktest.DefaultBotUserID+"> hello", other))
	if m := sink.next(t); m.ThreadContext != "" || m.Text != "hello" {
		t.Errorf("message after a failed read = %+v", m)
	}
	// a reply in a thread that does not address the bot reads nothing
	calls := srv.Calls("conversations.replies")
	srv.ThreadReply("C7", other, "U2", "just chatting")
	if m := sink.next(t); m.ThreadContext != "" || srv.Calls("conversations.replies") != calls {
		t.Errorf("unaddressed thread reply read the thread: %+v", m)
	}
}

// A long thread is read page by page, at most 1,000 messages; what came
// after the bot's last post is what the model gets.
func TestThreadContextPagesAndBotPosts(t *testing.T) {
	sink := make(chanSink, 8)
	srv, _ := startAdapter(t, sink)
	parent := srv.AddMessage("C8", "", "U1", "long thread")
	for i := range 450 {
		user := "U2"
		if i == 440 {
			user = slacktest.DefaultBotUserID // the bot's last post
		}
		srv.AddMessage("C8", parent, user, fmt.Sprintf("msg %03d", i))
	}
	srv.Inject(srv.MessageEvent("C8", "channel", "U3", "<@"+slacktest.DefaultBotUserID+"> and now?", parent))
	ctx := sink.next(t).ThreadContext
	if n := srv.Calls("conversations.replies"); n != 3 {
		t.Errorf("conversations.replies called %d times for 451 messages, want 3 pages of 200", n)
	}
	lines := strings.Split(ctx, "\n")
	if len(lines) != 11 || lines[1] != "U2: msg 441" || lines[9] != "U2: msg 449" {
		t.Errorf("thread context after the bot's last post (%d lines):\n%s", len(lines), ctx)
	}
}
