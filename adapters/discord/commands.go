package discord

// commands.go publishes the gateway's command catalogue as application
// (slash) commands and turns their invocations into herald messages.

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// ArgsOption is the optional string option every command gets: what the
// user would type after the command (Hermes' name for it).
const ArgsOption = "args"

// Discord's rules for chat commands: names of 1–32 lower-case letters,
// digits, "-" and "_"; descriptions of 1–100 characters; at most 100
// commands.
const (
	maxCommands           = 100
	maxCommandDescription = 100
	argsDescription       = "Arguments, as you would type them after the command"
)

var commandNameRE = regexp.MustCompile(`^[-_\p{L}\p{N}]{1,32}$`)

var _ adapters.CommandMenu = (*Adapter)(nil)

// SetCommands implements adapters.CommandMenu: Run registers cmds as
// application commands when it connects (bulk overwrite, global or in
// Config.CommandGuilds), and again at a later connect only when the list
// changed since it last succeeded. A name Discord cannot take is left out
// with a warning.
func (a *Adapter) SetCommands(cmds []adapters.Command) {
	list := []*discordgo.ApplicationCommand{}
	seen := map[string]bool{}
	for _, c := range cmds {
		name := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(c.Name), "/"))
		if !commandNameRE.MatchString(name) {
			a.log.Warn("discord: command left out of the slash commands: Discord takes 1-32 letters, digits, - and _", "command", c.Name)
			continue
		}
		if seen[name] {
			continue
		}
		if len(list) == maxCommands {
			a.log.Warn("discord: slash commands full (100); the rest left out", "first_left_out", c.Name)
			break
		}
		seen[name] = true
		list = append(list, &discordgo.ApplicationCommand{
			Name: name, Type: discordgo.ChatApplicationCommand, Description: commandDescription(c.Description, name),
			Options: []*discordgo.ApplicationCommandOption{{Type: discordgo.ApplicationCommandOptionString, Name: ArgsOption, Description: argsDescription}},
		})
	}
	a.mu.Lock()
	a.commands, a.commandsSet = list, true
	a.mu.Unlock()
}

// commandDescription fits d to Discord's 1–100 characters.
func commandDescription(d, name string) string {
	d = strings.Join(strings.Fields(d), " ")
	if d == "" {
		return "/" + name
	}
	if utf8.RuneCountInString(d) > maxCommandDescription {
		d = string([]rune(d)[:maxCommandDescription-1]) + "…"
	}
	return d
}

// registerCommands publishes the commands SetCommands gave, unless the
// same list is already registered. A refusal (a bot invited without the
// applications.commands scope, a rate limit) is logged and tried again at
// the next connect; it never stops the adapter.
func (a *Adapter) registerCommands(ctx context.Context) {
	a.mu.Lock()
	list, set, done := a.commands, a.commandsSet, a.registered
	a.mu.Unlock()
	if !set {
		return
	}
	key, _ := json.Marshal(list)
	if string(key) == done {
		return
	}
	app := a.appID.Load().(string)
	if app == "" {
		app = a.botID.Load().(string)
	}
	guilds := a.cfg.CommandGuilds
	if len(guilds) == 0 {
		guilds = []string{""}
	}
	for _, g := range guilds {
		if _, err := a.rest.ApplicationCommandBulkOverwrite(app, g, list, discordgo.WithContext(ctx)); err != nil {
			if ctx.Err() == nil {
				a.log.Warn("discord: could not register the slash commands (does the bot's invite have the applications.commands scope?); trying again at the next connect",
					"guild", g, "err", a.interactionError(ctx, "register slash commands", err))
			}
			return
		}
	}
	a.mu.Lock()
	a.registered = string(key)
	a.mu.Unlock()
	a.log.Info("discord: slash commands registered", "commands", len(list), "guilds", len(a.cfg.CommandGuilds))
}

// deferAnswer bounds the deferral of a slash command: after Discord's
// 3 s it is useless.
const deferAnswer = 3 * time.Second

// deferSlash answers a slash command with a deferred response
// ("thinking…"), reporting whether Discord took it. It runs as the
// interaction arrives, before the command waits in any queue.
func (a *Adapter) deferSlash(ctx context.Context, i *discordgo.Interaction) bool {
	if interactionUser(i) == nil || i.ApplicationCommandData().Name == "" {
		return false // slash drops it
	}
	ctx, cancel := context.WithTimeout(ctx, deferAnswer)
	defer cancel()
	err := a.rest.InteractionRespond(i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}, discordgo.WithContext(ctx))
	if err != nil {
		a.log.Warn("discord: could not answer a slash command in time; its replies go to the channel", "interaction", i.ID, "err", a.interactionError(ctx, "defer", err))
	}
	return err == nil
}

// slash hands a slash command to the sink as the text the user would have
// typed ("/name args"), addressed to the bot. It was answered first,
// deferred (deferSlash); the replies then go through the interaction
// (webhook.go). When the deferral failed, the command still reaches the
// gateway and its replies go to the channel.
func (a *Adapter) slash(ctx context.Context, sink adapters.Sink, s *discordgo.Session, i *discordgo.Interaction, deferred bool) {
	u := interactionUser(i)
	data := i.ApplicationCommandData()
	if u == nil || data.Name == "" {
		return
	}
	src := a.chatOf(ctx, s, i.GuildID, i.ChannelID)
	src.UserID, src.UserName, src.IsBot = u.ID, displayName(u), u.Bot
	m := herald.Message{ID: i.ID, Text: slashText(data), Source: src, Mentioned: true, Received: time.Now()}
	if i.GuildID != "" && i.Member != nil {
		m.UserRoles = i.Member.Roles
	}
	if !deferred {
		sink.Receive(ctx, m)
		return
	}
	a.openReply(i)
	// counted before the sink sees the command, so that whoever waits
	// for the followers after that waits for this one
	a.watchers.Add(1)
	a.follow(ctx, i.ID, sink.Receive(ctx, m))
}

// slashText is the command as typed: "/name" and the args option, if
// given.
func slashText(data discordgo.ApplicationCommandInteractionData) string {
	text := "/" + data.Name
	for _, o := range data.Options {
		if o == nil || o.Name != ArgsOption || o.Type != discordgo.ApplicationCommandOptionString {
			continue
		}
		if v, ok := o.Value.(string); ok && strings.TrimSpace(v) != "" {
			text += " " + strings.TrimSpace(v)
		}
	}
	return text
}
