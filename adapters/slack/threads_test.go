package slack_test

import (
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/slack"
	"github.com/heraldgw/herald/sessions"
)

func openStore(t *testing.T) *sessions.Store {
	t.Helper()
	st, err := sessions.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// A follow-up in a thread the bot answered before a restart is still
// addressed to the bot; a thread last active before the TTL is not, and
// is deleted from the store.
func TestThreadMembershipSurvivesRestart(t *testing.T) {
	srv := newFake(t)
	st := openStore(t)
	ctx := ctxT(t)
	old := strconv.FormatInt(time.Now().Add(-8*24*time.Hour).UnixMilli(), 10)
	if err := st.SetKV(ctx, "slack.thread/C9/1600000000.000001", old); err != nil {
		t.Fatal(err)
	}
	withStore := func(c *slack.Config) { c.Threads = st }

	first := newAdapter(srv, withStore)
	sink := make(chanSink, 8)
	stop := runUntil(t, first, sink)
	if err := srv.WaitConnected(ctx, 1); err != nil {
		t.Fatal(err)
	}
	in := srv.Mention("C5", "U1", "start")
	m := sink.next(t)
	// acknowledged before the restart, or the fake sends it again
	if err := srv.WaitAcked(ctx, in.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Send(ctx, m.Source.Target(), adapters.Outgoing{Text: "in the thread"}); err != nil {
		t.Fatal(err)
	}
	stop()

	second := newAdapter(srv, withStore)
	run(t, second, sink)
	if err := srv.WaitConnected(ctx, 2); err != nil {
		t.Fatal(err)
	}
	srv.ThreadReply("C5", m.ID, "U1", "a follow-up after the restart")
	if f := sink.next(t); !f.Mentioned || f.Source.ThreadID != m.ID {
		t.Errorf("follow-up after a restart = %+v, want Mentioned in thread %s", f, m.ID)
	}
	srv.ThreadReply("C9", "1600000000.000001", "U1", "a reply in a thread gone quiet 8 days ago")
	if f := sink.next(t); f.Mentioned {
		t.Errorf("reply in an expired thread counted as a mention: %+v", f)
	}
	if _, ok, err := st.KV(ctx, "slack.thread/C9/1600000000.000001"); err != nil || ok {
		t.Errorf("expired thread still stored (%v, %v)", ok, err)
	}
}

// Membership is bounded: past MaxThreads the least recently active
// threads are forgotten, in memory and in the store.
func TestThreadMembershipBounded(t *testing.T) {
	srv := newFake(t)
	st := openStore(t)
	ctx := ctxT(t)
	ad := newAdapter(srv, func(c *slack.Config) { c.Threads = st; c.MaxThreads = 10 })
	for i := range 11 {
		to := adapters.Outgoing{Text: "x"}
		if _, err := ad.Send(ctx, target("C1", strconv.Itoa(1600000000+i)+".000001"), to); err != nil {
			t.Fatal(err)
		}
	}
	kv, err := st.KVWithPrefix(ctx, "slack.thread/")
	if err != nil {
		t.Fatal(err)
	}
	if len(kv) != 9 {
		t.Errorf("%d threads stored after 11 with MaxThreads 10, want 9 (a tenth evicted): %v", len(kv), kv)
	}
	if _, ok := kv["slack.thread/C1/1600000000.000001"]; ok {
		t.Error("the least recently active thread was kept")
	}
	if _, ok := kv["slack.thread/C1/1600000010.000001"]; !ok {
		t.Error("the newest thread was not stored")
	}
}

func target(channel, thread string) herald.Target {
	return herald.Target{Platform: herald.PlatformSlack, ChatID: channel, ThreadID: thread}
}
