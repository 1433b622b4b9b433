package gateway

// Tests of the intake's edges: shutdown racing Receive, an interrupt
// during a chat's first load, and the bounds on per-chat state.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// Shutdown closes the Runner's work between a Receive's door check and
// its intake; every receipt of messages that Receive calls appended at
// that moment resolves (refused: the journal keeps them for the next
// start), none waits for good.
func TestShutdownResolvesEveryReceipt(t *testing.T) {
	st, err := sessions.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg := hooks.NewRegistry(nil)
	ad := &fakeAdapter{name: "fake"}
	for round := range 100 {
		r := New(Config{Adapters: []adapters.Adapter{ad}, Store: st, Hooks: reg, AllowAllUsers: true,
			Agent: &agent.Agent{Model: agent.Echo{}, Tools: agent.NewTools(), Hooks: reg}})
		r.work.close() // Run is shutting down; accepting is still true for those already past it
		var wg sync.WaitGroup
		recs := make([]*adapters.Receipt, 16)
		for i := range recs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				recs[i] = r.Receive(context.Background(), fakeMsg("c1", fmt.Sprint(round, "-", i), "hi"))
			}()
		}
		wg.Wait()
		for i, rec := range recs {
			select {
			case <-rec.Done():
			case <-time.After(journalWait):
				t.Fatalf("round %d: receipt %d never resolved", round, i)
			}
			if !adapters.Refused(rec) {
				t.Fatalf("round %d: receipt %d: %+v; want refused", round, i, rec.Outcome())
			}
		}
	}
	rows, err := st.UnfinishedInbound(context.Background())
	if err != nil || len(rows) != 100*16 {
		t.Fatalf("%d unfinished journal rows (%v); want every refused message kept", len(rows), err)
	}
}

// Two messages at once to a new chat right after start: the second
// interrupts the first while its session is still being loaded. That is
// an interrupt like any other: no "could not open" error, the first text
// is stored and folded into the turn that answers the second.
func TestInterruptDuringFirstLoad(t *testing.T) {
	ad := &fakeAdapter{name: "fake"}
	rn := runAt(t, t.TempDir(), nil, []adapters.Adapter{ad})
	const pairs = 100
	firsts := make([]*adapters.Receipt, pairs)
	seconds := make([]*adapters.Receipt, pairs)
	for i := range pairs {
		chat := fmt.Sprint("pair", i)
		firsts[i] = rn.r.Receive(context.Background(), fakeMsg(chat, "1", fmt.Sprint("one ", i)))
		seconds[i] = rn.r.Receive(context.Background(), fakeMsg(chat, "2", fmt.Sprint("two ", i)))
	}
	for i := range pairs {
		for _, rec := range []*adapters.Receipt{firsts[i], seconds[i]} {
			select {
			case <-rec.Done():
			case <-time.After(journalWait):
				t.Fatalf("pair %d: receipt never resolved", i)
			}
			if err := rec.Outcome().Err; err != nil {
				t.Errorf("pair %d: %v", i, err)
			}
		}
	}
	for _, text := range ad.texts() {
		if strings.Contains(text, "could not open") {
			t.Fatalf("an interrupt was answered as a store failure: %q", text)
		}
	}
	lost := 0
	for i := range pairs {
		src := herald.Source{Platform: "fake", ChatID: fmt.Sprint("pair", i), ChatType: herald.ChatDM, UserID: "u1"}
		s, err := rn.store.OpenSession(context.Background(), sessions.Key(src, sessions.KeyOptions{}))
		if err != nil || s == nil {
			t.Fatalf("pair %d: no session (%v)", i, err)
		}
		msgs, _ := rn.store.Messages(context.Background(), s.ID, 0)
		var users []string
		for _, m := range msgs {
			if m.Role == "user" {
				users = append(users, m.Content)
			}
		}
		if !strings.Contains(strings.Join(users, "\n"), fmt.Sprint("one ", i)) {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("the first text of %d of %d pairs was never stored", lost, pairs)
	}
}

// Messages refused by auth leave no per-chat state behind.
func TestStrangersLeaveNoState(t *testing.T) {
	ad := &fakeAdapter{name: "fake"}
	rn := runAt(t, t.TempDir(), nil, []adapters.Adapter{ad}, func(c *Config) {
		c.AllowAllUsers = false
		c.Auth = map[herald.Platform]PlatformAuth{"fake": {AllowedUsers: []string{"owner"}, UnauthorizedDM: DMIgnore}}
	})
	for i := range 200 {
		m := fakeMsg(fmt.Sprint("stranger", i), "1", "let me in")
		m.Source.UserID = fmt.Sprint("s", i)
		rec := rn.r.Receive(context.Background(), m)
		select {
		case <-rec.Done():
		case <-time.After(journalWait):
			t.Fatal("receipt never resolved")
		}
	}
	rn.stop() // every intake goroutine has ended
	rn.r.mu.Lock()
	n := len(rn.r.chats)
	rn.r.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d chats kept for 200 refused strangers", n)
	}
}

// The sweep frees idle chats, never one with a running turn; a freed
// chat's next message finds its history again.
func TestSweepFreesIdleChats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, g, func(c *Config) {
			c.Reset = sessions.ResetPolicy{Mode: sessions.ResetNone}
			c.SweepInterval = time.Hour
		})
		defer b.stop()
		chats := func() int {
			b.runner.mu.Lock()
			defer b.runner.mu.Unlock()
			return len(b.runner.chats)
		}
		idle := b.send("idle", "u1", "remember apples")
		<-g.started
		g.release <- struct{}{}
		outcome(t, idle)
		busy := b.send("busy", "u2", "a long one")
		<-g.started
		time.Sleep(idleEvict + 2*time.Hour) // sweeps run meanwhile
		synctest.Wait()
		if n := chats(); n != 1 {
			t.Fatalf("%d chats after the sweeps; want only the one with a running turn", n)
		}
		b.runner.mu.Lock()
		_, kept := b.runner.chats[sessions.Key(herald.Source{Platform: "fake", ChatID: "busy", ChatType: herald.ChatDM, UserID: "u2"}, sessions.KeyOptions{})]
		b.runner.mu.Unlock()
		if !kept {
			t.Fatal("the chat with a running turn was freed")
		}
		g.release <- struct{}{}
		if o := outcome(t, busy); o.Status != adapters.StatusDone {
			t.Fatalf("the long turn: %+v", o)
		}
		// the freed chat reloads its history from the store
		again := b.send("idle", "u1", "what did I say?")
		<-g.started
		g.release <- struct{}{}
		outcome(t, again)
		g.mu.Lock()
		last := g.seen[len(g.seen)-1]
		g.mu.Unlock()
		if len(last) < 3 || last[0].Content != "remember apples" {
			t.Fatalf("history after the chat was freed: %+v", last)
		}
	})
}

// Over the per-chat cap, the user is told the message was not taken.
func TestQueueCapTellsUser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, g, func(c *Config) { c.BusyMode = "queue"; c.MaxQueue = 3 })
		defer b.stop()
		first := b.send("c1", "u1", "first")
		<-g.started
		for i := range 3 {
			if o := outcome(t, b.send("c1", "u1", fmt.Sprint("queued ", i))); o.Status != adapters.StatusQueued {
				t.Fatalf("queued %d: %+v", i, o)
			}
		}
		over := outcome(t, b.send("c1", "u1", "one too many"))
		if over.Status != adapters.StatusSkipped || over.Err != nil {
			t.Fatalf("over the cap: %+v", over)
		}
		if got := ad.texts(); len(got) != 1 || got[0] != TooManyText {
			t.Fatalf("sent %q; want the user told", got)
		}
		for range 4 {
			g.release <- struct{}{}
		}
		outcome(t, first)
		synctest.Wait()
		if got := ad.texts(); len(got) != 5 {
			t.Fatalf("sent %q; want the notice and four answers", got)
		}
	})
}
