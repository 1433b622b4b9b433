package slacktest

// conversations.go keeps what was said in each channel (the messages
// injected, added with AddMessage, and the bot's own posts) and serves it
// back through conversations.replies; it also records the bot's feedback
// while it works: assistant.threads.setStatus and reactions.add/remove.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Message is one message in the fake's history.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string // "" for a top-level message
	User     string
	BotID    string // set on the bot's own posts
	Text     string
}

// StatusCall is one assistant.threads.setStatus the bot made ("" clears).
type StatusCall struct {
	Channel, ThreadTS, Status string
}

// ReactionCall is one reactions.add or reactions.remove the bot made.
type ReactionCall struct {
	Method          string // "reactions.add" or "reactions.remove"
	Channel, TS     string
	Name            string
	Error           string // the error Slack answered, if any
	ReactionsNowSet []string
}

// AddMessage puts a message in a channel's history without sending it to
// the bot, as if the bot had missed it (it was down, or not mentioned),
// and returns its ts. threadTS "" makes it top-level.
func (s *Server) AddMessage(channel, threadTS, user, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.nextTS()
	s.recordLocked(Message{Channel: channel, TS: ts, ThreadTS: threadTS, User: user, Text: text})
	return ts
}

// History returns a channel's messages, in ts order.
func (s *Server) History(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.history[channel])
}

// recordLocked adds m to its channel's history; a message already there
// (the message and app_mention events of one mention) is kept once.
func (s *Server) recordLocked(m Message) {
	if s.history == nil {
		s.history = map[string][]Message{}
	}
	h := s.history[m.Channel]
	i, found := slices.BinarySearchFunc(h, m.TS, func(x Message, ts string) int { return compareTS(x.TS, ts) })
	if found {
		return
	}
	s.history[m.Channel] = slices.Insert(h, i, m)
}

// recordInjected adds an injected message or app_mention to the history.
func (s *Server) recordInjected(inner map[string]any) {
	typ, _ := inner["type"].(string)
	if typ != "message" && typ != "app_mention" {
		return
	}
	var m Message
	m.Channel, _ = inner["channel"].(string)
	m.TS, _ = inner["ts"].(string)
	m.ThreadTS, _ = inner["thread_ts"].(string)
	m.User, _ = inner["user"].(string)
	m.BotID, _ = inner["bot_id"].(string)
	m.Text, _ = inner["text"].(string)
	if m.Channel == "" || m.TS == "" {
		return
	}
	s.mu.Lock()
	s.recordLocked(m)
	s.mu.Unlock()
}

// compareTS orders Slack timestamps ("seconds.micros") numerically.
func compareTS(a, b string) int {
	as, af, _ := strings.Cut(a, ".")
	bs, bf, _ := strings.Cut(b, ".")
	if len(as) != len(bs) {
		return len(as) - len(bs)
	}
	if c := strings.Compare(as, bs); c != 0 {
		return c
	}
	return strings.Compare(af, bf)
}

// replies serves conversations.replies: the thread's parent and replies
// in ts order, filtered by oldest/latest (inclusive only when asked), in
// pages of limit (default 1000) with an offset cursor.
func (s *Server) replies(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	channel, thread := f.Get("channel"), f.Get("ts")
	inclusive := f.Get("inclusive") == "true" || f.Get("inclusive") == "1"
	latest, oldest := f.Get("latest"), f.Get("oldest")
	s.mu.Lock()
	var msgs []Message
	parent := false
	for _, m := range s.history[channel] {
		parent = parent || m.TS == thread
		if m.TS != thread && m.ThreadTS != thread {
			continue
		}
		if latest != "" && (compareTS(m.TS, latest) > 0 || (!inclusive && m.TS == latest)) {
			continue
		}
		if oldest != "" && (compareTS(m.TS, oldest) < 0 || (!inclusive && m.TS == oldest)) {
			continue
		}
		msgs = append(msgs, m)
	}
	s.mu.Unlock()
	if !parent {
		writeJSON(w, 200, apiResp{"ok": false, "error": "thread_not_found"})
		return
	}
	limit, _ := strconv.Atoi(f.Get("limit"))
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	start, _ := strconv.Atoi(f.Get("cursor"))
	start = min(max(start, 0), len(msgs))
	end := min(start+limit, len(msgs))
	out := make([]apiResp, 0, end-start)
	for _, m := range msgs[start:end] {
		j := apiResp{"type": "message", "ts": m.TS, "user": m.User, "text": m.Text}
		if m.ThreadTS != "" {
			j["thread_ts"] = m.ThreadTS
		} else {
			j["thread_ts"] = m.TS
		}
		if m.BotID != "" {
			j["bot_id"] = m.BotID
		}
		out = append(out, j)
	}
	next := ""
	if end < len(msgs) {
		next = strconv.Itoa(end)
	}
	writeJSON(w, 200, apiResp{"ok": true, "messages": out, "has_more": next != "",
		"response_metadata": apiResp{"next_cursor": next}})
}

// setStatus serves assistant.threads.setStatus.
func (s *Server) setStatus(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	c := StatusCall{Channel: f.Get("channel_id"), ThreadTS: f.Get("thread_ts"), Status: f.Get("status")}
	if c.Channel == "" || c.ThreadTS == "" {
		writeJSON(w, 200, apiResp{"ok": false, "error": "invalid_arguments"})
		return
	}
	s.mu.Lock()
	s.statuses = append(s.statuses, c)
	s.notify()
	s.mu.Unlock()
	writeJSON(w, 200, apiResp{"ok": true})
}

// Statuses returns the setStatus calls the bot made, in order.
func (s *Server) Statuses() []StatusCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.statuses)
}

// WaitStatuses waits until the bot made at least n setStatus calls.
func (s *Server) WaitStatuses(ctx context.Context, n int) ([]StatusCall, error) {
	err := s.wait(ctx, fmt.Sprintf("%d setStatus calls", n), func() bool { return len(s.statuses) >= n })
	return s.Statuses(), err
}

// react serves reactions.add and reactions.remove, answering
// already_reacted and no_reaction as Slack does.
func (s *Server) react(w http.ResponseWriter, r *http.Request, method string) {
	f := r.PostForm
	c := ReactionCall{Method: method, Channel: f.Get("channel"), TS: f.Get("timestamp"), Name: f.Get("name")}
	if c.Channel == "" || c.TS == "" || c.Name == "" {
		writeJSON(w, 200, apiResp{"ok": false, "error": "invalid_arguments"})
		return
	}
	key := c.Channel + "/" + c.TS
	s.mu.Lock()
	if s.reactions == nil {
		s.reactions = map[string][]string{}
	}
	set := s.reactions[key]
	has := slices.Contains(set, c.Name)
	switch {
	case method == "reactions.add" && has:
		c.Error = "already_reacted"
	case method == "reactions.remove" && !has:
		c.Error = "no_reaction"
	case method == "reactions.add":
		set = append(set, c.Name)
	default:
		set = slices.DeleteFunc(set, func(n string) bool { return n == c.Name })
	}
	s.reactions[key] = set
	c.ReactionsNowSet = slices.Clone(set)
	s.reactionCalls = append(s.reactionCalls, c)
	s.notify()
	s.mu.Unlock()
	if c.Error != "" {
		writeJSON(w, 200, apiResp{"ok": false, "error": c.Error})
		return
	}
	writeJSON(w, 200, apiResp{"ok": true})
}

// Reactions returns the bot's reactions now on a message.
func (s *Server) Reactions(channel, ts string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactions[channel+"/"+ts])
}

// ReactionCalls returns the reactions.add/remove calls the bot made, in
// order.
func (s *Server) ReactionCalls() []ReactionCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reactionCalls)
}

// WaitReactionCalls waits until the bot made at least n reactions calls.
func (s *Server) WaitReactionCalls(ctx context.Context, n int) ([]ReactionCall, error) {
	err := s.wait(ctx, fmt.Sprintf("%d reactions calls", n), func() bool { return len(s.reactionCalls) >= n })
	return s.ReactionCalls(), err
}
