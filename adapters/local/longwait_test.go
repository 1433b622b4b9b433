package local_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
)

// heldSink answers nothing until released.
type heldSink struct{ release chan struct{} }

func (s heldSink) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	rec := adapters.NewReceipt()
	go func() {
		<-s.release
		rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: "s1"})
	}()
	return rec
}

// A POST that waits longer than the listener's whole-request read
// deadline still gets its answer: the deadline is for reading the
// request, not for the turn.
func TestPostWaitOutlivesTheBodyTimeout(t *testing.T) {
	const bodyTimeout = 200 * time.Millisecond
	sink := heldSink{release: make(chan struct{})}
	cfg := local.Config{Listen: "127.0.0.1:0", Token: "test-token", Limits: adapters.HTTPLimits{BodyTimeout: bodyTimeout}}
	addr := make(chan string, 1)
	cfg.OnListen = func(a string) { addr <- a }
	a := local.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, sink) }()
	defer func() { cancel(); <-done }()
	base := "http://" + <-addr

	released := time.AfterFunc(3*bodyTimeout, func() { close(sink.release) })
	defer released.Stop()
	req, _ := http.NewRequest("POST", base+"/v1/messages?wait=30", strings.NewReader(`{"chat_id":"c1","user_id":"u1","text":"hi"}`))
	req.Header.Set("Authorization", "Bearer test-token")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST past the body timeout: %v", err)
	}
	defer res.Body.Close()
	var out struct{ Status string }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 || out.Status != "done" {
		t.Fatalf("status %d, %+v, %v", res.StatusCode, out, err)
	}
}
