package slack

// slash.go turns Slack slash commands into herald commands. Slack apps
// register each slash command by name: "/new args" becomes herald's
// "/new args", and the umbrella command "/herald new args" becomes
// "/new args" too ("/herald" alone is "/help") when "new" is a command of
// the gateway's catalogue (SetCommands); "/herald what is the weather" is
// the message "what is the weather" to the agent. Replies go to the
// channel the command was typed in, or, with SlashReplies ephemeral, only
// to the user who typed it (chat.postEphemeral).

import (
	"context"
	"net/url"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// Slash reply modes (Config.SlashReplies).
const (
	SlashChannel   = "channel"
	SlashEphemeral = "ephemeral"
)

// Umbrella is the slash command that carries any herald command as its
// text: "/herald new" is "/new".
const Umbrella = "/herald"

// slashIDPrefix marks the ids of messages made from slash commands,
// which have no ts of their own: "slash:" + the user id + ":" + the
// trigger id. The user is in the id so that whichever process sends the
// reply (another replica, or this one after a restart) can show it to
// that user alone; Slack's user and trigger ids hold no ":".
const slashIDPrefix = "slash:"

var _ adapters.CommandMenu = (*Adapter)(nil)

// SetCommands implements adapters.CommandMenu: the catalogue tells the
// umbrella command's commands from free text. Slack's own menu is the
// slash commands registered in the app's settings, which an app cannot
// set through the API.
func (a *Adapter) SetCommands(cmds []adapters.Command) {
	names := make(map[string]bool, len(cmds))
	for _, c := range cmds {
		names[commandName(c.Name)] = true
		for _, al := range c.Aliases {
			names[commandName(al)] = true
		}
	}
	a.mu.Lock()
	a.commands = names
	a.mu.Unlock()
}

// commandName is a command's name as the catalogue is looked up: without
// its slash, lower case, "_" read as "-" (as the gateway reads it).
func commandName(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "/")), "_", "-")
}

// isCommand reports whether word names a command of the catalogue; with
// no catalogue (SetCommands never called) every word does.
func (a *Adapter) isCommand(word string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.commands == nil || a.commands[commandName(word)]
}

// slashText is the herald command (or, for the umbrella's free text, the
// message) a slash command stands for.
func (a *Adapter) slashText(command, text string) string {
	command = strings.TrimSpace(command)
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(command, "/") {
		command = "/" + command
	}
	if strings.EqualFold(command, Umbrella) {
		switch {
		case text == "":
			return "/help"
		case strings.HasPrefix(text, "/"):
			return text
		case !a.isCommand(strings.Fields(text)[0]):
			return text
		}
		return "/" + text
	}
	if text == "" {
		return command
	}
	return command + " " + text
}

// slashMessage turns a slash command into a message for the sink; false
// when it lacks what a message needs.
func (a *Adapter) slashMessage(c slackapi.SlashCommand) (herald.Message, bool) {
	if c.UserID == "" || c.ChannelID == "" || c.TriggerID == "" || strings.TrimSpace(c.Command) == "" {
		return herald.Message{}, false
	}
	name := c.UserName
	if name == "" {
		name = c.UserID
	}
	m := herald.Message{
		ID:   slashIDPrefix + c.UserID + ":" + c.TriggerID,
		Text: a.slashText(c.Command, c.Text),
		Source: herald.Source{
			Platform: herald.PlatformSlack, ChatID: c.ChannelID, ChatType: chatTypeOf("", c.ChannelID),
			UserID: c.UserID, UserName: name,
		},
		// a slash command is always addressed to the app
		Mentioned: true,
		Received:  time.Now(),
	}
	return m, true
}

// ephemeralUser is the user a reply caused by message id is shown to
// alone, or "" when it goes to the channel. It reads the id only, so it
// answers alike in every process.
func (a *Adapter) ephemeralUser(cause string) string {
	rest, ok := strings.CutPrefix(cause, slashIDPrefix)
	if !ok || a.cfg.SlashReplies != SlashEphemeral {
		return ""
	}
	user, _, ok := strings.Cut(rest, ":")
	if !ok {
		return ""
	}
	return user
}

// handleSlash hands a slash command to the sink. Like handle, it reports
// false when the sink refused it: the command must not be acknowledged,
// so Slack re-sends it (Socket Mode) or the user sees it fail (HTTP).
// Slash commands have no message of their own to react to, so they get
// no processing reactions.
func (a *Adapter) handleSlash(ctx context.Context, sink adapters.Sink, c slackapi.SlashCommand) bool {
	m, ok := a.slashMessage(c)
	if !ok {
		a.log.Warn("slack sent a slash command without a user, channel, command or trigger id; dropped", "command", c.Command)
		return true
	}
	a.log.Debug("slack slash command", "command", c.Command, "channel", c.ChannelID, "user", c.UserID)
	return !adapters.Refused(sink.Receive(ctx, m))
}

// slashFromForm reads the form Slack posts to a request URL for a slash
// command.
func slashFromForm(v url.Values) slackapi.SlashCommand {
	return slackapi.SlashCommand{
		TeamID: v.Get("team_id"), ChannelID: v.Get("channel_id"), ChannelName: v.Get("channel_name"),
		UserID: v.Get("user_id"), UserName: v.Get("user_name"), Command: v.Get("command"),
		Text: v.Get("text"), ResponseURL: v.Get("response_url"), TriggerID: v.Get("trigger_id"),
		APIAppID: v.Get("api_app_id"),
	}
}
