package slack_test

import (
	"strings"
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/slack"
)

// With several replicas (or after a restart) the reply to a slash command
// may be sent by a process that did not receive it: with slash_replies:
// ephemeral it must still be shown to the user who typed it alone, never
// to the whole channel.
func TestSlashEphemeralFromAnotherProcess(t *testing.T) {
	ephemeral := func(c *slack.Config) { c.SlashReplies = slack.SlashEphemeral }
	sink := make(chanSink, 1)
	srv, _ := startAdapter(t, sink, ephemeral)
	srv.SlashCommandIn("C1", "U1", "/herald", "what now")
	m := sink.next(t)
	other := newAdapter(srv, ephemeral) // never ran: knows nothing of the command
	if _, err := other.Send(ctxT(t), herald.Target{Platform: herald.PlatformSlack, ChatID: "C1"}, adapters.Outgoing{Text: "the answer", Cause: m.ID}); err != nil {
		t.Fatal(err)
	}
	posts, err := srv.WaitPosts(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if p := posts[0]; p.Method != "chat.postEphemeral" || p.User != "U1" || p.Channel != "C1" || !strings.Contains(p.Text, "the answer") {
		t.Errorf("reply = %+v, want it shown to U1 alone in C1", p)
	}
}

// Replicas share one store: a follow-up in a thread another replica
// answered counts as addressed to the bot on the replica that receives
// it, though that replica loaded its threads before the other posted.
func TestThreadMembershipAcrossProcesses(t *testing.T) {
	srv := newFake(t)
	st := openStore(t)
	ctx := ctxT(t)
	withStore := func(c *slack.Config) { c.Threads = st }
	sink := make(chanSink, 8)
	receiver := newAdapter(srv, withStore)
	run(t, receiver, sink)
	if err := srv.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}
	in := srv.Mention("C5", "U1", "start")
	m := sink.next(t)
	if err := srv.WaitAcked(ctx, in.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	// the replica that held the chat answers in the thread
	answering := newAdapter(srv, withStore)
	if _, err := answering.Send(ctx, m.Source.Target(), adapters.Outgoing{Text: "in the thread"}); err != nil {
		t.Fatal(err)
	}
	srv.ThreadReply("C5", m.ID, "U1", "a follow-up")
	if f := sink.next(t); !f.Mentioned || f.Source.ThreadID != m.ID {
		t.Errorf("follow-up received by the other replica = %+v, want Mentioned in thread %s", f, m.ID)
	}
	srv.ThreadReply("C5", "1600000000.000009", "U1", "a thread the bot never joined")
	if f := sink.next(t); f.Mentioned {
		t.Errorf("reply in a thread no replica joined counted as a mention: %+v", f)
	}
}
