package slacktest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/heraldgw/herald/adapters/slack/slacktest"
)

type frame struct {
	Type         string `json:"type"`
	EnvelopeID   string `json:"envelope_id"`
	RetryAttempt int    `json:"retry_attempt"`
}

// dial opens a Socket Mode connection as a client would and reads hello.
func dial(t *testing.T, srv *slacktest.Server) *websocket.Conn {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.APIURL()+"apps.connections.open", nil)
	req.Header.Set("Authorization", "Bearer xapp-any")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var open struct {
		OK  bool   `json:"ok"`
		URL string `json:"url"`
	}
	json.NewDecoder(resp.Body).Decode(&open)
	resp.Body.Close()
	if !open.OK || !strings.HasPrefix(open.URL, "ws://127.0.0.1:") {
		t.Fatalf("apps.connections.open = %+v", open)
	}
	h := http.Header{"Origin": {"https://api.slack.com"}}
	ws, _, err := websocket.DefaultDialer.Dial(open.URL, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	if f := read(t, ws); f.Type != "hello" {
		t.Fatalf("first frame = %+v, want hello", f)
	}
	return ws
}

func read(t *testing.T, ws *websocket.Conn) frame {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	var f frame
	if err := ws.ReadJSON(&f); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestUnackedEnvelopeIsResent(t *testing.T) {
	srv := slacktest.New(slacktest.Options{})
	defer srv.Close()
	in := srv.DM("U1", "hi") // queued: nobody is connected yet
	ws := dial(t, srv)
	if f := read(t, ws); f.Type != "events_api" || f.EnvelopeID != in.EnvelopeID || f.RetryAttempt != 0 {
		t.Fatalf("frame = %+v", f)
	}
	ws.Close() // without acking

	ws2 := dial(t, srv)
	f := read(t, ws2)
	if f.EnvelopeID != in.EnvelopeID || f.RetryAttempt != 1 {
		t.Fatalf("re-sent frame = %+v, want %s with retry_attempt 1", f, in.EnvelopeID)
	}
	ws2.WriteJSON(map[string]string{"envelope_id": f.EnvelopeID})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.WaitAcked(ctx, in.EnvelopeID); err != nil {
		t.Fatal(err)
	}
	if err := srv.CheckAcks(time.Minute); err != nil {
		t.Error(err)
	}
	if srv.Connections() != 2 {
		t.Errorf("Connections = %d", srv.Connections())
	}
}
