package slack_test

// The Events API receiver: signatures, url_verification, and events handed
// on after the 200.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters/slack/slacktest"
)

func TestEventsAPI(t *testing.T) {
	srv := newFake(t)
	sink := make(chanSink, 8)
	ad, url := runEvents(t, srv, sink)
	if h := ad.Health(); h != "connected" {
		t.Errorf("Health = %q", h)
	}

	_, mention := srv.Callback(srv.MentionEvent("C9", "U3", "over http"))
	cases := []struct {
		name     string
		body     []byte
		sign     func(h http.Header, body []byte)
		status   int
		respBody string
		received bool
	}{
		{"valid mention", mention, func(h http.Header, b []byte) { slacktest.Sign(h, signingSecret, time.Now(), b) }, 200, "", true},
		{"tampered body", mention, func(h http.Header, b []byte) {
			slacktest.Sign(h, signingSecret, time.Now(), append([]byte(nil), b[:len(b)-1]...))
		}, 401, "", false},
		{"wrong secret", mention, func(h http.Header, b []byte) { slacktest.Sign(h, "another-secret-value", time.Now(), b) }, 401, "", false},
		{"stale timestamp", mention, func(h http.Header, b []byte) { slacktest.Sign(h, signingSecret, time.Now().Add(-10*time.Minute), b) }, 401, "", false},
		{"unsigned", mention, func(http.Header, []byte) {}, 401, "", false},
		{"url_verification", slacktest.URLVerification("chal-123"), func(h http.Header, b []byte) { slacktest.Sign(h, signingSecret, time.Now(), b) }, 200, `{"challenge":"chal-123"}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := postSigned(t, url, "application/json", tc.body, tc.sign, tc.status)
			if tc.respBody != "" {
				var got, want any
				json.Unmarshal(b, &got)
				json.Unmarshal([]byte(tc.respBody), &want)
				if !jsonEqual(got, want) {
					t.Errorf("body = %s, want %s", b, tc.respBody)
				}
			}
			if tc.received {
				m := sink.next(t)
				if m.Source.ChatID != "C9" || m.Source.ChatType != herald.ChatChannel || !m.Mentioned || m.Text != "over http" || m.Source.ThreadID != m.ID {
					t.Errorf("message = %+v", m)
				}
			}
			select {
			case m := <-sink:
				t.Errorf("unexpected message %+v", m)
			default:
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
