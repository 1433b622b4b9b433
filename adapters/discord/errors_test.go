package discord

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/heraldgw/herald/adapters"
)

func restErr(status int) error {
	return &discordgo.RESTError{Response: &http.Response{StatusCode: status, Status: fmt.Sprint(status)},
		Message: &discordgo.APIErrorMessage{Code: 1, Message: "m"}}
}

func TestConnectError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // fatal | temporary | retry
		text string
	}{
		{"401 on REST", restErr(401), "fatal", "DISCORD_BOT_TOKEN"},
		{"403 on REST", restErr(403), "fatal", "DISCORD_BOT_TOKEN"},
		{"close 4004", &websocket.CloseError{Code: 4004, Text: "Authentication failed."}, "fatal", "DISCORD_BOT_TOKEN"},
		{"close 4014", &websocket.CloseError{Code: 4014, Text: "Disallowed intent(s)."}, "fatal", "Message Content intent"},
		{"close 4000", &websocket.CloseError{Code: 4000}, "temporary", ""},
		{"eof", io.ErrUnexpectedEOF, "temporary", ""},
		{"502", restErr(502), "temporary", ""},
		{"429", &discordgo.RateLimitError{RateLimit: &discordgo.RateLimit{TooManyRequests: &discordgo.TooManyRequests{RetryAfter: 3 * time.Second}}}, "retry", ""},
		{"odd", errors.New("expecting Op 10, got Op 0 instead"), "temporary", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := connectError(context.Background(), "connect", tc.err)
			var tmp *adapters.TemporaryError
			var ra *adapters.RetryAfterError
			got := "plain"
			switch {
			case adapters.IsFatal(err):
				got = "fatal"
			case errors.As(err, &ra):
				got = "retry"
			case errors.As(err, &tmp):
				got = "temporary"
			}
			if got != tc.want || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("connectError(%v) = %v (%s), want %s containing %q", tc.err, err, got, tc.want, tc.text)
			}
		})
	}
}

func TestStripMention(t *testing.T) {
	for _, tc := range []struct {
		in, out string
		found   bool
	}{
		{"<@9> hi", "hi", true},
		{"hi <@!9>  there", "hi there", true},
		{"<@99> hi", "<@99> hi", false},
		{"no mention", "no mention", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			out, found := stripMention(tc.in, "9")
			if out != tc.out || found != tc.found {
				t.Errorf("stripMention(%q) = %q, %v", tc.in, out, found)
			}
		})
	}
}

func TestRewrite(t *testing.T) {
	var seen string
	rt := newRewrite("http://127.0.0.1:9/proxy/api/v9/", roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r.URL.String()
		return &http.Response{StatusCode: 204, Body: http.NoBody, Request: r}, nil
	}))
	req, _ := http.NewRequest("GET", discordgo.EndpointUser("@me"), nil)
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if seen != "http://127.0.0.1:9/proxy/api/v9/users/@me" {
		t.Errorf("rewrote to %q", seen)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
