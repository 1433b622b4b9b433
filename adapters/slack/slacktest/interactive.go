package slacktest

// interactive.go is the other half of buttons: it keeps each message the
// bot posted as it shows now (chat.update replaces its text and, when
// given, its blocks, as Slack does), and builds the block_actions payload
// Slack sends when a user presses one of its buttons, delivered over
// Socket Mode ("interactive" envelopes) or as the form Slack posts to an
// app's Interactivity Request URL.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// showLocked records the bot's message p as it shows now; an update
// without a blocks field keeps the blocks it had. Call with s.mu held.
func (s *Server) showLocked(p Post, hasBlocks bool) {
	key := p.Channel + "/" + p.TS
	if p.Method == "chat.update" {
		old := s.shown[key]
		if old == nil {
			return
		}
		now := *old
		now.Text = p.Text
		if hasBlocks {
			now.Blocks = p.Blocks
		}
		s.shown[key] = &now
		return
	}
	s.shown[key] = &p
}

// Shown returns the bot's message channel/ts as it shows now (after its
// edits), and whether the bot posted it.
func (s *Server) Shown(channel, ts string) (Post, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.shown[channel+"/"+ts]
	if p == nil {
		return Post{}, false
	}
	return *p, true
}

// Press is a user's press of a button on one of the bot's messages.
type Press struct {
	Channel, TS string // the message the button is under
	UserID      string
	UserName    string // the presser's username ("" is the user id)
	Label       string // the text on the button pressed
}

// PressPayload builds the block_actions payload Slack sends for p, from
// the message as it shows now; an error when the bot posted no such
// message or it has no such button (any more).
func (s *Server) PressPayload(p Press) ([]byte, error) {
	msg, ok := s.Shown(p.Channel, p.TS)
	if !ok {
		return nil, fmt.Errorf("slacktest: press: the bot posted no message %s in %s", p.TS, p.Channel)
	}
	var block *Block
	var button *Element
	for i := range msg.Blocks {
		for j := range msg.Blocks[i].Elements {
			if e := &msg.Blocks[i].Elements[j]; e.Text != nil && e.Text.Text == p.Label {
				block, button = &msg.Blocks[i], e
			}
		}
	}
	if button == nil {
		return nil, fmt.Errorf("slacktest: press: message %s in %s has no button %q", p.TS, p.Channel, p.Label)
	}
	name := p.UserName
	if name == "" {
		name = p.UserID
	}
	s.mu.Lock()
	actionTS := s.nextTS()
	s.mu.Unlock()
	container := map[string]any{"type": "message", "message_ts": msg.TS, "channel_id": msg.Channel,
		"is_ephemeral": msg.Ephemeral()}
	message := map[string]any{"type": "message", "user": s.opts.BotUserID, "bot_id": s.opts.BotID,
		"text": msg.Text, "ts": msg.TS, "blocks": msg.Blocks}
	if msg.ThreadTS != "" {
		container["thread_ts"] = msg.ThreadTS
		message["thread_ts"] = msg.ThreadTS
	}
	action := map[string]any{"type": "button", "action_id": button.ActionID, "block_id": block.BlockID,
		"text": button.Text, "value": button.Value, "action_ts": actionTS}
	if button.Style != "" {
		action["style"] = button.Style
	}
	payload := map[string]any{
		"type": "block_actions", "token": "verification-token", "api_app_id": "A0000001",
		"user":      map[string]any{"id": p.UserID, "username": name, "name": name, "team_id": s.opts.TeamID},
		"team":      map[string]any{"id": s.opts.TeamID, "domain": "fake"},
		"channel":   map[string]any{"id": msg.Channel, "name": msg.Channel},
		"container": container, "trigger_id": strings.ReplaceAll(actionTS, ".", "") + ".trigger",
		"response_url": s.http.URL + "/actions/" + s.opts.TeamID + "/" + actionTS,
		"state":        map[string]any{"values": map[string]any{}},
		"actions":      []any{action},
	}
	if !msg.Ephemeral() {
		// Slack sends no message with a press on an ephemeral one
		payload["message"] = message
	}
	return json.Marshal(payload)
}

// Ephemeral reports whether the post is shown to one user alone.
func (p Post) Ephemeral() bool { return p.Method == "chat.postEphemeral" }

// PressButton injects p over Socket Mode.
func (s *Server) PressButton(p Press) (Injected, error) {
	payload, err := s.PressPayload(p)
	if err != nil {
		return Injected{}, err
	}
	in := s.InjectInteractive(payload)
	in.Channel, in.TS = p.Channel, p.TS
	return in, nil
}

// InjectInteractive sends an interactive payload (block_actions,
// view_submission, …) over Socket Mode in a new "interactive" envelope.
func (s *Server) InjectInteractive(payload []byte) Injected {
	return Injected{EnvelopeID: s.injectEnvelope("interactive", payload), Payload: payload}
}

// InteractiveForm is an interactive payload as Slack posts it to an
// app's Interactivity Request URL: an application/x-www-form-urlencoded
// body whose one field, payload, is the JSON. Sign it with Sign.
func InteractiveForm(payload []byte) []byte {
	return []byte(url.Values{"payload": {string(payload)}}.Encode())
}
