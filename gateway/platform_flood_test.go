package gateway

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
)

// A send whose answer comes after the client's timeout may have gone
// through: it is not sent again (so a slow network never doubles a
// message), and Deliver says so (herald.ErrMaybeSent). A connection
// dropped without an answer is still retried.
func TestTimedOutSendNotRepeated(t *testing.T) {
	srv := telegramtest.New(telegramtest.Options{})
	defer srv.Close()
	ad := telegram.New(telegram.Config{Token: srv.Token(), APIEndpoint: srv.Endpoint()})
	rn := runAt(t, t.TempDir(), nil, []adapters.Adapter{ad}, func(c *Config) {
		c.SendTimeout = 300 * time.Millisecond
		c.RetryBase = 10 * time.Millisecond
	})
	defer rn.stop()
	to := herald.Target{Platform: herald.PlatformTelegram, ChatID: "42"}

	srv.Slow("sendMessage", 1, 10*time.Second) // answers long after the timeout
	if err := rn.r.Deliver(ctxFor(t), to, "only once"); !errors.Is(err, herald.ErrMaybeSent) {
		t.Fatalf("deliver: %v, want ErrMaybeSent", err)
	}
	if calls := srv.Calls("sendMessage"); len(calls) != 1 || calls[0].Text != "only once" {
		t.Fatalf("sendMessage calls: %+v", calls)
	}
	if n := rn.r.MaybeSent(); n != 1 {
		t.Fatalf("MaybeSent = %d, want 1", n)
	}

	srv.Drop("sendMessage", 1)
	if err := rn.r.Deliver(ctxFor(t), to, "after a drop"); err != nil {
		t.Fatalf("deliver: %v", err)
	}
	if calls := srv.Calls("sendMessage"); len(calls) != 2 || calls[1].Text != "after a drop" {
		t.Fatalf("sendMessage calls: %+v", calls)
	}
	if n := rn.r.MaybeSent(); n != 1 {
		t.Fatalf("MaybeSent = %d after a dropped connection, want 1", n)
	}
}

// Through Telegram's fake and the real library: streamed edits keep to
// the chat's pace and wait out a 429 instead of hammering, and the one
// message ends up holding the whole answer.
func TestTelegramStreamRateLimited(t *testing.T) {
	srv := telegramtest.New(telegramtest.Options{})
	defer srv.Close()
	ad := telegram.New(telegram.Config{Token: srv.Token(), APIEndpoint: srv.Endpoint(), PollTimeout: time.Second})
	words := strings.Fields("one two three four five six seven eight")
	rn := runAt(t, t.TempDir(), trickle{words: words}, []adapters.Adapter{ad}, func(c *Config) {
		c.StreamInterval = 50 * time.Millisecond
	})
	defer rn.stop()
	srv.RateLimit("editMessageText", 1, 1)
	start := time.Now()
	srv.DM(42, "alice", "go")
	final := strings.Join(words, " ")
	ctx := ctxFor(t)
	if err := srv.Wait(ctx, func() bool {
		edits := srv.Calls("editMessageText")
		return len(edits) > 0 && edits[len(edits)-1].Text == final
	}); err != nil {
		t.Fatalf("the answer never replaced the preview: %v; edits %+v", err, srv.Calls("editMessageText"))
	}
	took := time.Since(start)
	rn.stop()
	if sent := srv.Calls("sendMessage"); len(sent) != 1 {
		t.Fatalf("%d messages sent: %+v", len(sent), sent)
	}
	// the chat's pace (one a second) and the 429's second: no more than
	// one edit a second, plus the final one
	if n, most := srv.Attempts("editMessageText"), int(took/time.Second)+2; n < 2 || n > most {
		t.Fatalf("%d edit attempts in %s, want 2 to %d", n, took, most)
	}
}
