package hooks

// commands.go: the slash-command catalogue. The gateway's built-in
// commands are listed here, in the lowest package that needs them, so that
// a Go plugin's command (PluginContext.RegisterCommand) is checked against
// them when it registers; the gateway dispatches both, fires
// command:<name> first for either, lists both in /help and gives both to
// platforms with a command menu.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/heraldgw/herald"
)

// BuiltinCommand is one of the gateway's own commands.
type BuiltinCommand struct {
	// Name is the canonical name, without its slash.
	Name string
	// Aliases are other names that run it ("reset" for "new").
	Aliases []string
	// Description is its one-line help.
	Description string
}

// BuiltinCommands returns the gateway's own commands, in /help's order
// (a copy: the catalogue itself cannot be changed).
func BuiltinCommands() []BuiltinCommand {
	out := make([]BuiltinCommand, len(builtinCommands))
	for i, b := range builtinCommands {
		out[i] = b.clone()
	}
	return out
}

func (b BuiltinCommand) clone() BuiltinCommand {
	b.Aliases = append([]string(nil), b.Aliases...)
	return b
}

var builtinCommands = []BuiltinCommand{
	{Name: "new", Aliases: []string{"reset"}, Description: "start a new conversation (alias /reset)"},
	{Name: "stop", Description: "stop the running turn"},
	{Name: "status", Description: "show this conversation's session and state"},
	{Name: "queue", Aliases: []string{"q"}, Description: "queue a message for after the running turn (alias /q)"},
	{Name: "approve", Description: "allow the command waiting for approval (/approve session, /approve always)"},
	{Name: "deny", Description: "refuse the command waiting for approval"},
	{Name: "model", Description: "show the model in use"},
	{Name: "whoami", Description: "show your platform user id"},
	{Name: "help", Aliases: []string{"commands"}, Description: "list commands (alias /commands)"},
}

// DefaultCommandDescription is the help of a plugin command registered
// without one (Hermes' default).
const DefaultCommandDescription = "Plugin command"

// CommandCall is one use of a plugin command.
type CommandCall struct {
	// Command is the command's name; RawArgs the text after it, trimmed.
	Command string
	RawArgs string
	// SessionID is the chat's current session ("" before its first).
	SessionID string
	// Source is who sent the command, from which chat.
	Source herald.Source
}

// CommandHandler answers a plugin command with the text to reply ("" for
// no reply), or an error, which the user is shown as the command's
// failure. It runs in the chat's order, before anything the chat sends
// next: keep it quick and honour ctx (it carries a deadline).
type CommandHandler func(ctx context.Context, call *CommandCall) (string, error)

// PluginCommand is a command a Go plugin registered.
type PluginCommand struct {
	Name        string
	Description string
	// ArgsHint says what the command takes ("<city>"), "" when nothing.
	ArgsHint string
	// Plugin is the name of the plugin that registered it.
	Plugin  string
	Handler CommandHandler
}

// commandTable holds the registry's plugin commands in registration order.
type commandTable struct {
	mu   sync.RWMutex
	cmds []PluginCommand
}

// NormalizeCommandName is how a plugin command's name is kept, as Hermes
// keeps it: lower case, trimmed, without a leading "/", each run of white
// space as "-"; and "_" as "-", the way the gateway reads a typed command
// (Telegram's menu can only show "_").
func NormalizeCommandName(name string) string {
	name = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "/")
	return strings.ReplaceAll(strings.Join(strings.Fields(name), "-"), "_", "-")
}

// BuiltinCommandNamed returns the built-in command name (a canonical name
// or an alias, read as NormalizeCommandName reads it) runs.
func BuiltinCommandNamed(name string) (BuiltinCommand, bool) {
	for _, b := range builtinCommands {
		if b.Name == name || slices.Contains(b.Aliases, name) {
			return b.clone(), true
		}
	}
	return BuiltinCommand{}, false
}

// add registers c, normalised and checked; it returns a function that
// removes it.
func (t *commandTable) add(c PluginCommand) (func(), error) {
	raw := c.Name
	c.Name = NormalizeCommandName(c.Name)
	switch {
	case c.Name == "":
		return nil, fmt.Errorf("plugin %q: command name %q is empty", c.Plugin, raw)
	case strings.ContainsAny(c.Name, "/@"):
		return nil, fmt.Errorf("plugin %q: command name %q cannot be typed as a command (no \"/\" or \"@\" inside it)", c.Plugin, raw)
	case c.Handler == nil:
		return nil, fmt.Errorf("plugin %q: command /%s has no handler", c.Plugin, c.Name)
	}
	if b, ok := BuiltinCommandNamed(c.Name); ok {
		return nil, fmt.Errorf("plugin %q: command /%s clashes with the built-in command /%s", c.Plugin, c.Name, b.Name)
	}
	c.Description = strings.TrimSpace(c.Description)
	if c.Description == "" {
		c.Description = DefaultCommandDescription
	}
	c.ArgsHint = strings.TrimSpace(c.ArgsHint)
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, have := range t.cmds {
		if have.Name == c.Name {
			return nil, fmt.Errorf("plugin %q: command /%s is already registered by plugin %q", c.Plugin, c.Name, have.Plugin)
		}
	}
	t.cmds = append(t.cmds, c)
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		for i, have := range t.cmds {
			if have.Name == c.Name && have.Plugin == c.Plugin {
				t.cmds = append(t.cmds[:i:i], t.cmds[i+1:]...)
				return
			}
		}
	}, nil
}

// Commands returns the plugin commands in the order they were registered.
func (r *Registry) Commands() []PluginCommand {
	r.commands.mu.RLock()
	defer r.commands.mu.RUnlock()
	return append([]PluginCommand(nil), r.commands.cmds...)
}

// PluginCommand returns the plugin command called name (as typed, read as
// NormalizeCommandName reads it).
func (r *Registry) PluginCommand(name string) (PluginCommand, bool) {
	name = NormalizeCommandName(name)
	r.commands.mu.RLock()
	defer r.commands.mu.RUnlock()
	for _, c := range r.commands.cmds {
		if c.Name == name {
			return c, true
		}
	}
	return PluginCommand{}, false
}
