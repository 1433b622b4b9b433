package slack_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/slack"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
)

const (
	botToken      = "xoxb-0000-test-bot-token"
	appToken      = "xapp-1-test-app-token-0000"
	signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	// wait bounds every wait for an event that should come at once
	wait = 60 * time.Second
)

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func newFake(t *testing.T) *slacktest.Server {
	t.Helper()
	srv := slacktest.New(slacktest.Options{BotToken: botToken, AppToken: appToken, PingInterval: 200 * time.Millisecond})
	t.Cleanup(srv.Close)
	return srv
}

func newAdapter(srv *slacktest.Server, mods ...func(*slack.Config)) *slack.Adapter {
	cfg := slack.Config{BotToken: botToken, AppToken: appToken, SigningSecret: signingSecret, APIURL: srv.APIURL(), PingInterval: 5 * time.Second}
	for _, m := range mods {
		m(&cfg)
	}
	return slack.New(cfg)
}

// startAdapter runs an adapter in Socket Mode on a new fake until the
// test ends, handing its messages to sink.
func startAdapter(t *testing.T, sink adapters.Sink, mods ...func(*slack.Config)) (*slacktest.Server, *slack.Adapter) {
	t.Helper()
	srv := newFake(t)
	ad := newAdapter(srv, mods...)
	run(t, ad, sink)
	return srv, ad
}

// chanSink is a Sink that hands every message to a channel.
type chanSink chan herald.Message

func (s chanSink) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	select {
	case s <- m:
	case <-ctx.Done():
	}
	return adapters.Resolved(adapters.Outcome{Status: adapters.StatusDone})
}

func (s chanSink) next(t *testing.T) herald.Message {
	t.Helper()
	select {
	case m := <-s:
		return m
	case <-time.After(wait):
		t.Fatal("no message reached the sink")
		return herald.Message{}
	}
}

// run runs the adapter until the test ends.
func run(t *testing.T, ad *slack.Adapter, sink adapters.Sink) {
	t.Helper()
	t.Cleanup(runUntil(t, ad, sink))
}

// runUntil runs the adapter until stop is called; stop waits for Run to
// return and checks it returned nil.
func runUntil(t *testing.T, ad *slack.Adapter, sink adapters.Sink) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ad.Run(ctx, sink) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run after cancel = %v, want nil", err)
			}
		case <-time.After(wait):
			t.Error("Run did not return after cancel")
		}
	}
}

// runEvents runs the adapter in Events API mode on a free port until the
// test ends and returns the receiver's URL.
func runEvents(t *testing.T, srv *slacktest.Server, sink adapters.Sink) (*slack.Adapter, string) {
	t.Helper()
	addr := make(chan string, 1)
	ad := newAdapter(srv, func(c *slack.Config) {
		c.Mode = slack.ModeEvents
		c.AppToken = ""
		c.EventsListen = "127.0.0.1:0"
		c.OnListen = func(a string) { addr <- a }
	})
	run(t, ad, sink)
	select {
	case a := <-addr:
		return ad, "http://" + a + "/slack/events"
	case <-time.After(wait):
		t.Fatal("events receiver did not listen")
		return nil, ""
	}
}

// postSigned posts body to an Events API receiver at url, signed by sign,
// checks the answer's status and returns its body.
func postSigned(t *testing.T, url, contentType string, body []byte, sign func(h http.Header, body []byte), status int) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	sign(req.Header, body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, status, b)
	}
	return b
}
