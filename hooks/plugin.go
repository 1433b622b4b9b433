package hooks

import (
	"context"
	"fmt"
)

// Plugin is a compiled-in Go plugin: a name and a Register function that
// subscribes its callbacks. A user's own main passes plugins to cmd.Main.
type Plugin struct {
	Name        string
	Description string
	Register    func(*PluginContext) error
	// Priority orders the plugin's callbacks among an event's other
	// attachments (Subscription.Priority; higher first, default 0).
	Priority int
}

// PluginContext is what a plugin's Register gets.
type PluginContext struct {
	plugin   *Plugin
	reg      *Registry
	events   []string
	commands []string
	unsubs   []func()
}

// RegisterHook subscribes h to one catalogue name; an alias (PreToolUse,
// post_tool_use) stands for the name it aliases. Unknown names are kept
// with a warning (a later herald may emit them).
func (c *PluginContext) RegisterHook(name string, h Handler) {
	name = CanonicalEvent(name)
	c.events = append(c.events, name)
	c.unsubs = append(c.unsubs, c.reg.Subscribe(Subscription{
		Name: c.plugin.Name, Attach: AttachGo, Events: []string{name}, Handler: h, Priority: c.plugin.Priority,
		// one queue for the whole plugin: its callbacks see events in the
		// order they happened, and its observers are flushed before any
		// of its interceptors
		Group: "plugin\x00" + c.plugin.Name,
	}))
}

// RegisterCommand adds a slash command the gateway answers with handler:
// /name in any chat (after the command:<name> hooks, as for a built-in),
// listed in /help and in the command menu of platforms that have one,
// with description ("Plugin command" when empty) and argsHint (what it
// takes, e.g. "<city>"; trimmed). name is kept lower case, without a
// leading "/", white space and "_" as "-". An empty name, a name of a
// built-in command or its alias, or one another plugin registered, is
// refused with an error naming the plugin; Register may return it (the
// plugin is then skipped) or go on without the command.
func (c *PluginContext) RegisterCommand(name, description, argsHint string, handler CommandHandler) error {
	remove, err := c.reg.commands.add(PluginCommand{Name: name, Description: description, ArgsHint: argsHint, Plugin: c.plugin.Name, Handler: handler})
	if err != nil {
		return err
	}
	c.unsubs = append(c.unsubs, remove)
	c.commands = append(c.commands, NormalizeCommandName(name))
	return nil
}

// Logger returns the gateway's logger, scoped to the plugin.
func (c *PluginContext) Logger() interface {
	Info(string, ...any)
	Warn(string, ...any)
	Error(string, ...any)
} {
	return c.reg.log.With("plugin", c.plugin.Name)
}

// Func adapts a typed callback to a Handler: fn gets the point's payload
// struct and returns one of the result types (or nil). A payload of
// another type (a mistake in the event name) is reported as an error.
func Func[P any, R any](fn func(ctx context.Context, p *P) R) Handler {
	return func(ctx context.Context, ev Event) (any, error) {
		p, ok := ev.Payload.(*P)
		if !ok {
			var want *P
			return nil, fmt.Errorf("event %s carries %T, callback wants %T", ev.Name, ev.Payload, want)
		}
		return fn(ctx, p), nil
	}
}

// Observe adapts a typed observer callback (no result) to a Handler.
func Observe[P any](fn func(ctx context.Context, p *P)) Handler {
	return func(ctx context.Context, ev Event) (any, error) {
		p, ok := ev.Payload.(*P)
		if !ok {
			var want *P
			return nil, fmt.Errorf("event %s carries %T, callback wants %T", ev.Name, ev.Payload, want)
		}
		fn(ctx, p)
		return nil, nil
	}
}

// LoadedPlugin describes a registered plugin (for `herald hooks list`).
type LoadedPlugin struct {
	Name        string
	Description string
	Events      []string
	// Commands are the slash commands it registered, without the slash.
	Commands []string
}

// LoadPlugins registers each plugin, in order. A plugin whose Register
// fails or panics is logged with its name and its subscriptions removed;
// the rest still load.
func (r *Registry) LoadPlugins(plugins ...Plugin) []LoadedPlugin {
	var out []LoadedPlugin
	for i := range plugins {
		p := &plugins[i]
		c := &PluginContext{plugin: p, reg: r}
		err := func() (err error) {
			defer func() {
				if x := recover(); x != nil {
					err = fmt.Errorf("panic: %v", x)
				}
			}()
			if p.Register == nil {
				return fmt.Errorf("no Register function")
			}
			return p.Register(c)
		}()
		if err != nil {
			r.log.Error("plugin failed to register; skipped", "plugin", p.Name, "err", err)
			for _, u := range c.unsubs {
				u()
			}
			continue
		}
		out = append(out, LoadedPlugin{Name: p.Name, Description: p.Description, Events: c.events, Commands: c.commands})
	}
	return out
}
