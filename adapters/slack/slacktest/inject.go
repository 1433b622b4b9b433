package slacktest

// inject.go builds the inbound events a test sends: Events API
// event_callback payloads, delivered over Socket Mode envelopes or signed
// for an Events API HTTP request.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Injected identifies an event the fake sent.
type Injected struct {
	EnvelopeID string
	EventID    string
	Channel    string
	TS         string // the message's ts
	ThreadTS   string // its thread_ts, if any
	// Payload is the event_callback JSON (the envelope's payload, or an
	// Events API request body).
	Payload []byte
}

// Callback wraps an inner event (a "message", "app_mention", …) in
// Slack's event_callback outer event.
func (s *Server) Callback(inner map[string]any) (eventID string, payload []byte) {
	s.mu.Lock()
	s.seq++
	eventID = fmt.Sprintf("Ev%08d", s.seq)
	s.mu.Unlock()
	outer := map[string]any{
		"token": "verification-token", "team_id": s.opts.TeamID, "api_app_id": "A0000001",
		"type": "event_callback", "event_id": eventID, "event_time": time.Now().Unix(),
		"authed_users": []string{s.opts.BotUserID}, "event": inner,
	}
	// the inner event is the caller's map of JSON values; a value that
	// cannot be encoded gives an empty payload, which the client rejects
	b, _ := json.Marshal(outer)
	return eventID, b
}

// Inject sends an inner event over Socket Mode in a new envelope.
func (s *Server) Inject(inner map[string]any) Injected {
	s.recordInjected(inner)
	evID, payload := s.Callback(inner)
	in := Injected{EnvelopeID: s.injectEnvelope("", payload), EventID: evID, Payload: payload}
	in.Channel, _ = inner["channel"].(string)
	in.TS, _ = inner["ts"].(string)
	in.ThreadTS, _ = inner["thread_ts"].(string)
	return in
}

// injectEnvelope sends payload over Socket Mode in a new envelope of
// kind (the frame's type; "" is events_api) and returns its id.
func (s *Server) injectEnvelope(kind string, payload []byte) string {
	s.mu.Lock()
	s.seq++
	e := &envelope{id: fmt.Sprintf("env-%06d", s.seq), kind: kind, payload: payload}
	s.envs = append(s.envs, e)
	s.byID[e.id] = e
	s.mu.Unlock()
	s.deliver(e)
	return e.id
}

// Redeliver sends an envelope again, as Slack does with envelopes it
// thinks were not acknowledged (retry_attempt counts up).
func (s *Server) Redeliver(envelopeID string) bool {
	s.mu.Lock()
	e := s.byID[envelopeID]
	s.mu.Unlock()
	if e == nil {
		return false
	}
	s.deliver(e)
	return true
}

// MessageEvent builds a user's "message" event. channelType is im, mpim,
// group or channel; threadTS may be empty.
func (s *Server) MessageEvent(channel, channelType, user, text, threadTS string) map[string]any {
	s.mu.Lock()
	ts := s.nextTS()
	s.mu.Unlock()
	ev := map[string]any{
		"type": "message", "client_msg_id": "cm-" + ts, "user": user, "text": text,
		"ts": ts, "channel": channel, "channel_type": channelType, "event_ts": ts,
		"team": s.opts.TeamID,
	}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	return ev
}

// DM injects a direct message from user (channel "D" + user).
func (s *Server) DM(user, text string) Injected {
	return s.Inject(s.MessageEvent("D"+user, "im", user, text, ""))
}

// ChannelMessage injects a top-level message in a public channel.
func (s *Server) ChannelMessage(channel, user, text string) Injected {
	return s.Inject(s.MessageEvent(channel, "channel", user, text, ""))
}

// ThreadReply injects a reply in a channel thread.
func (s *Server) ThreadReply(channel, threadTS, user, text string) Injected {
	return s.Inject(s.MessageEvent(channel, "channel", user, text, threadTS))
}

// MentionEvent builds the "app_mention" event for a top-level channel
// message "<@BOT> text".
func (s *Server) MentionEvent(channel, user, text string) map[string]any {
	s.mu.Lock()
	ts := s.nextTS()
	s.mu.Unlock()
	return map[string]any{
		"type": "app_mention", "client_msg_id": "cm-" + ts, "user": user,
		"text": "<@" + s.opts.BotUserID + "> " + text, "ts": ts, "channel": channel, "event_ts": ts,
		"team": s.opts.TeamID,
	}
}

// Mention injects an app_mention of the bot at the top of a channel.
func (s *Server) Mention(channel, user, text string) Injected {
	return s.Inject(s.MentionEvent(channel, user, text))
}

// Signature returns Slack's request signature: "v0=" + hex HMAC-SHA256 of
// "v0:<ts>:<body>" keyed by the signing secret.
func Signature(secret string, ts time.Time, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "v0:%d:", ts.Unix())
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}

// Sign sets the X-Slack-Signature and X-Slack-Request-Timestamp headers of
// an Events API request with body, signed at ts.
func Sign(h http.Header, secret string, ts time.Time, body []byte) {
	h.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	h.Set("X-Slack-Signature", Signature(secret, ts, body))
}

// URLVerification is the body of Slack's url_verification request.
func URLVerification(challenge string) []byte {
	b, _ := json.Marshal(map[string]string{"token": "verification-token", "challenge": challenge, "type": "url_verification"})
	return b
}
