package cmd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/sessions/pgtest"
)

// Three replicas on one PostgreSQL share a bot that long-polls Telegram:
// one replica polls (the others stand by, /healthz still ok), a message is
// answered once; the polling replica stops and another takes the polling
// over and answers the next message, once.
func TestReplicasPollTelegramOneAtATime(t *testing.T) {
	u := pgtest.URL(t)
	tg := telegramtest.New(telegramtest.Options{MaxPoll: time.Second})
	defer tg.Close()
	model := agenttest.New(t)
	model.Default = agenttest.Reply{Func: func(req *agenttest.Request) agenttest.Reply {
		return agenttest.Reply{Content: "re: " + req.LastMessage().Content}
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	// each replica reaches the fake through its own proxy, which counts
	// the replica's getUpdates calls
	target, err := url.Parse(tg.URL())
	if err != nil {
		t.Fatal(err)
	}
	polls := make([]atomic.Int64, 3)
	gws := make([]*cmdtest.Gateway, 3)
	for i := range gws {
		rp := httputil.NewSingleHostReverseProxy(target)
		rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) { w.WriteHeader(http.StatusBadGateway) }
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/getUpdates") {
				polls[i].Add(1)
			}
			rp.ServeHTTP(w, r)
		}))
		defer proxy.Close()
		home := t.TempDir()
		cfg := "platforms:\n  telegram:\n    api_endpoint: " + proxy.URL + "/bot%s/%s\n    poll_timeout: 1\n    allowed_users: [\"*\"]\n"
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		gws[i] = cmdtest.Start(t, cmdtest.Options{Home: home, Env: map[string]string{
			"HERALD_DATABASE_URL": u, "HERALD_REPLICA_ID": fmt.Sprintf("r%d", i), "HERALD_REPLICA_POLL": "100ms",
			"TELEGRAM_BOT_TOKEN": tg.Token(),
			"OPENAI_BASE_URL":    model.BaseURL(), "OPENAI_API_KEY": "sk-test-key-0123456789abcdef", "HERALD_MODEL": "fake-model",
		}})
	}
	counts := func() []int64 {
		out := make([]int64, len(polls))
		for i := range polls {
			out[i] = polls[i].Load()
		}
		return out
	}

	first := waitOnePoller(t, ctx, gws)
	tg.DM(42, "alice", "first")
	waitAnsweredOnce(t, ctx, tg, "re: first")
	before := counts()
	for i, n := range before {
		if (n > 0) != (i == first) {
			t.Fatalf("getUpdates calls per replica %v; only r%d polls", before, first)
		}
	}

	// the polling replica stops; one of the others polls and answers
	if code := gws[first].Stop(); code != 0 {
		t.Fatalf("r%d exited with %d", first, code)
	}
	stopped, stoppedAt := counts(), time.Now()
	rest := slices.Delete(slices.Clone(gws), first, first+1)
	next := waitOnePoller(t, ctx, rest)
	if next >= first {
		next++
	}
	t.Logf("r%d polled (%v getUpdates calls); r%d took over %s after r%d stopped", first, stopped, next, time.Since(stoppedAt).Round(time.Millisecond), first)
	tg.DM(42, "alice", "second")
	waitAnsweredOnce(t, ctx, tg, "re: second")
	after := counts()
	for i := range after {
		if grew := after[i] > stopped[i]; grew != (i == next) {
			t.Fatalf("getUpdates calls per replica %v, %v when r%d stopped; only r%d polls after it", after, stopped, first, next)
		}
	}
	// the first message was not answered again meanwhile (its chat's
	// second message came after it)
	if n := answersWith(tg, "re: first"); n != 1 {
		t.Fatalf("%q answered %d times", "re: first", n)
	}
}

// waitOnePoller waits until exactly one of gws reports Telegram
// connected and leading "telegram-polling", and every other "standby"
// with /healthz status ok; it returns the poller's index.
func waitOnePoller(t *testing.T, ctx context.Context, gws []*cmdtest.Gateway) int {
	t.Helper()
	var last []string
	for ctx.Err() == nil {
		last = last[:0]
		poller, standby := -1, 0
		for i, g := range gws {
			var h struct {
				Status    string            `json:"status"`
				Platforms map[string]string `json:"platforms"`
				Replica   struct {
					Leads []string `json:"leads"`
				} `json:"replica"`
			}
			res, err := http.Get("http://" + g.Addr + "/healthz")
			if err != nil {
				continue
			}
			json.NewDecoder(res.Body).Decode(&h)
			res.Body.Close()
			last = append(last, fmt.Sprintf("%s %s %v", h.Status, h.Platforms["telegram"], h.Replica.Leads))
			switch {
			case h.Status != "ok":
			case h.Platforms["telegram"] == "connected" && slices.Contains(h.Replica.Leads, "telegram-polling"):
				if poller >= 0 {
					t.Fatalf("two replicas poll Telegram: %v", last)
				}
				poller = i
			case h.Platforms["telegram"] == "standby" && !slices.Contains(h.Replica.Leads, "telegram-polling"):
				standby++
			}
		}
		if poller >= 0 && standby == len(gws)-1 {
			return poller
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("not one replica polling and the others standing by: %v", last)
	return -1
}

// waitAnsweredOnce waits until a message whose last text has want was
// sent on the fake Telegram, and checks it was sent once.
func waitAnsweredOnce(t *testing.T, ctx context.Context, tg *telegramtest.Server, want string) {
	t.Helper()
	if err := tg.Wait(ctx, func() bool { return answersWith(tg, want) > 0 }); err != nil {
		t.Fatalf("%q never answered: %v", want, err)
	}
	if n := answersWith(tg, want); n != 1 {
		t.Fatalf("%q answered %d times", want, n)
	}
}

// answersWith counts the messages sent on the fake Telegram whose last
// text (after edits) has want.
func answersWith(tg *telegramtest.Server, want string) int {
	last := map[string]string{} // message id → its last text
	for _, m := range []string{"sendMessage", "editMessageText"} {
		for _, c := range tg.Calls(m) {
			last[c.MessageID] = c.Text
		}
	}
	n := 0
	for _, text := range last {
		if strings.Contains(text, want) {
			n++
		}
	}
	return n
}
