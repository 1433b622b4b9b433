package slacktest

// slash.go injects slash commands: as a Socket Mode "slash_commands"
// envelope, or as the form body Slack posts to an HTTP request URL.

import (
	"encoding/json"
	"fmt"
	"net/url"
)

// SlashCommand is what Slack sends when a user runs one of the app's
// slash commands.
type SlashCommand struct {
	Command   string // with its slash, e.g. "/herald"
	Text      string // what follows the command
	Channel   string // where it was typed ("D…" in a DM)
	User      string
	TriggerID string
}

// Slash builds a slash command typed by user in channel, with a fresh
// trigger id.
func (s *Server) Slash(channel, user, command, text string) SlashCommand {
	s.mu.Lock()
	s.seq++
	trigger := fmt.Sprintf("%d.%d.trigger", 1700000000+s.seq, s.seq)
	s.mu.Unlock()
	return SlashCommand{Command: command, Text: text, Channel: channel, User: user, TriggerID: trigger}
}

// Form is the command as Slack posts it to a request URL
// (application/x-www-form-urlencoded); sign it with Sign.
func (s *Server) Form(c SlashCommand) []byte {
	v := url.Values{}
	for k, x := range s.fields(c) {
		v.Set(k, x)
	}
	return []byte(v.Encode())
}

func (s *Server) fields(c SlashCommand) map[string]string {
	return map[string]string{
		"token": "verification-token", "team_id": s.opts.TeamID, "team_domain": "fake",
		"channel_id": c.Channel, "channel_name": c.Channel, "user_id": c.User, "user_name": c.User,
		"command": c.Command, "text": c.Text, "api_app_id": "A0000001", "trigger_id": c.TriggerID,
		"response_url": s.http.URL + "/commands/" + s.opts.TeamID + "/" + c.TriggerID,
	}
}

// InjectSlash sends a slash command over Socket Mode in a new envelope.
func (s *Server) InjectSlash(c SlashCommand) Injected {
	// a map of strings always encodes
	payload, _ := json.Marshal(s.fields(c))
	return Injected{EnvelopeID: s.injectEnvelope("slash_commands", payload), Channel: c.Channel, Payload: payload}
}

// SlashCommandIn injects user typing "command text" in channel over Socket
// Mode.
func (s *Server) SlashCommandIn(channel, user, command, text string) Injected {
	return s.InjectSlash(s.Slash(channel, user, command, text))
}
