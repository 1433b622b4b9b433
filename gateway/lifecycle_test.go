package gateway

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

var lifecycle = []string{hooks.SessionStartEv, hooks.OnSessionFinalizeHook, hooks.AgentStartEv}

func TestIdleResetOnNextMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, nil, func(c *Config) {
			c.Reset = sessions.ResetPolicy{Mode: sessions.ResetIdle, IdleMinutes: 60}
			c.SweepInterval = 24 * time.Hour // the message, not the sweep, notices here
		})
		defer b.stop()
		first := outcome(t, b.send("c1", "u1", "one"))
		time.Sleep(59 * time.Minute)
		same := outcome(t, b.send("c1", "u1", "two"))
		if same.SessionID != first.SessionID {
			t.Fatal("session changed before the idle limit")
		}
		time.Sleep(61 * time.Minute)
		next := outcome(t, b.send("c1", "u1", "three"))
		if next.SessionID == first.SessionID {
			t.Fatal("idle session was not reset")
		}
		got := ad.texts()
		if len(got) != 4 || got[2] != "◐ Session automatically reset (inactive for 1h). Conversation history cleared." || got[3] != echo+"three" {
			t.Fatalf("sent %q", got)
		}
		synctest.Wait()
		b.rec.waitFor(t, []string{"session:start", "agent:start", "agent:start", "on_session_finalize", "session:start", "agent:start"}, lifecycle...)
		old, err := b.store.Session(context.Background(), first.SessionID)
		if err != nil || old.EndedAt == nil || old.EndReason != sessions.ResetIdle {
			t.Fatalf("old session %+v %v", old, err)
		}
	})
}

func TestExpirySweep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, nil, func(c *Config) {
			c.Reset = sessions.ResetPolicy{Mode: sessions.ResetIdle, IdleMinutes: 1440}
			c.SweepInterval = 5 * time.Minute
		})
		defer b.stop()
		first := outcome(t, b.send("c1", "u1", "one"))
		time.Sleep(24*time.Hour + 5*time.Minute)
		synctest.Wait()
		fins := b.rec.payloads(hooks.OnSessionFinalizeHook)
		if len(fins) != 1 {
			t.Fatalf("finalize events %d", len(fins))
		}
		if f := fins[0].(*hooks.SessionFinalized); f.SessionID == nil || *f.SessionID != first.SessionID || f.Platform != "fake" {
			t.Fatalf("finalize %+v", f)
		}
		// the next message starts a new session, with the notice, and is
		// not finalized twice
		next := outcome(t, b.send("c1", "u1", "two"))
		if next.SessionID == first.SessionID {
			t.Fatal("no new session after expiry")
		}
		if got := ad.texts(); !strings.HasPrefix(got[1], "◐ Session automatically reset (inactive for 24h)") {
			t.Fatalf("sent %q", got)
		}
		synctest.Wait()
		if n := len(b.rec.payloads(hooks.OnSessionFinalizeHook)); n != 1 {
			t.Fatalf("finalized %d times", n)
		}
	})
}

func TestDailyReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// the bubble's clock starts at midnight UTC
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, nil, func(c *Config) {
			c.Reset = sessions.ResetPolicy{Mode: sessions.ResetDaily, AtHour: 4}
			c.Now = func() time.Time { return time.Now().UTC() }
		})
		defer b.stop()
		first := outcome(t, b.send("c1", "u1", "one"))
		time.Sleep(3 * time.Hour)
		if o := outcome(t, b.send("c1", "u1", "two")); o.SessionID != first.SessionID {
			t.Fatal("reset before 4:00")
		}
		time.Sleep(2 * time.Hour) // 5:00
		if o := outcome(t, b.send("c1", "u1", "three")); o.SessionID == first.SessionID {
			t.Fatal("no reset after 4:00")
		}
		if got := ad.texts(); got[2] != "◐ Session automatically reset (daily reset at 4:00). Conversation history cleared." {
			t.Fatalf("notice %q", got[2])
		}
	})
}

func TestShutdownFinalizesRunningSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, g, func(c *Config) { c.ShutdownGrace = time.Second })
		rec := b.send("c1", "u1", "long")
		<-g.started
		idle := outcome(t, b.send("c2", "u2", "/help")) // an idle chat is not finalized
		_ = idle
		b.cancel()
		<-b.done
		if o := rec.Outcome(); o.Status != adapters.StatusInterrupted {
			t.Fatalf("running turn after shutdown: %+v", o)
		}
		synctest.Wait()
		fins := b.rec.payloads(hooks.OnSessionFinalizeHook)
		if len(fins) != 1 || fins[0].(*hooks.SessionFinalized).Platform != "gateway" || *fins[0].(*hooks.SessionFinalized).SessionID != o2(rec) {
			t.Fatalf("finalize at shutdown: %+v", fins)
		}
		if r := b.send("c1", "u1", "late"); outcome(t, r).Status != adapters.StatusSkipped {
			t.Fatal("accepted a message after shutdown")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		b.reg.Close(ctx)
		cancel()
		b.store.Close()
	})
}

func o2(r *adapters.Receipt) string { return r.Outcome().SessionID }

// A session that never had a message expires without a notice, whether
// the sweep or the next message finds it expired.
func TestNoNoticeForEmptySession(t *testing.T) {
	for name, sweep := range map[string]time.Duration{"sweep": 5 * time.Minute, "next message": 24 * time.Hour} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ad := &fakeAdapter{name: "fake"}
				b := newBubble(t, ad, nil, func(c *Config) {
					c.Reset = sessions.ResetPolicy{Mode: sessions.ResetIdle, IdleMinutes: 60}
					c.SweepInterval = sweep
				})
				defer b.stop()
				outcome(t, b.send("c1", "u1", "/new"))
				time.Sleep(2 * time.Hour)
				outcome(t, b.send("c1", "u1", "hello"))
				got := ad.texts()
				if len(got) != 2 || got[1] != echo+"hello" {
					t.Fatalf("sent %q", got)
				}
			})
		})
	}
}
