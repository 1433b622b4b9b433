package hooks

import (
	"context"
	"strings"
	"testing"
)

func noop(ctx context.Context, call *CommandCall) (string, error) { return "", nil }

// A plugin command's name is kept as Hermes keeps it (lower case, no
// leading "/", spaces as "-"); an empty name or a built-in's (or its
// alias's) is refused with an error naming the plugin; the description
// defaults to "Plugin command" and the arguments hint is trimmed.
func TestRegisterCommandRules(t *testing.T) {
	for _, tc := range []struct {
		name, desc, hint string
		want             PluginCommand // Name "" when refused
		err              string
	}{
		{name: "weather", desc: "tells the weather", hint: "<city>", want: PluginCommand{Name: "weather", Description: "tells the weather", ArgsHint: "<city>"}},
		{name: "/Deploy", want: PluginCommand{Name: "deploy", Description: DefaultCommandDescription}},
		{name: "  My Fancy  Cmd ", desc: "  fancy ", hint: "  [n]  ", want: PluginCommand{Name: "my-fancy-cmd", Description: "fancy", ArgsHint: "[n]"}},
		{name: "snake_case", want: PluginCommand{Name: "snake-case", Description: DefaultCommandDescription}},
		{name: "", err: `plugin "p": command name "" is empty`},
		{name: " / ", err: "is empty"},
		{name: "new", err: `plugin "p": command /new clashes with the built-in command /new`},
		{name: "/Reset", err: `plugin "p": command /reset clashes with the built-in command /new`},
		{name: "q", err: "clashes with the built-in command /queue"},
		{name: "commands", err: "clashes with the built-in command /help"},
		{name: "a@b", err: "cannot be typed as a command"},
		{name: "a/b", err: "cannot be typed as a command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := NewRegistry(nil)
			var got error
			reg.LoadPlugins(Plugin{Name: "p", Register: func(c *PluginContext) error {
				got = c.RegisterCommand(tc.name, tc.desc, tc.hint, noop)
				return nil
			}})
			cmds := reg.Commands()
			if tc.err != "" {
				if got == nil || !strings.Contains(got.Error(), tc.err) || len(cmds) != 0 {
					t.Fatalf("err %v, commands %+v; want an error with %q", got, cmds, tc.err)
				}
				return
			}
			if got != nil || len(cmds) != 1 {
				t.Fatalf("err %v, commands %+v", got, cmds)
			}
			c := cmds[0]
			if c.Name != tc.want.Name || c.Description != tc.want.Description || c.ArgsHint != tc.want.ArgsHint || c.Plugin != "p" || c.Handler == nil {
				t.Fatalf("registered %+v, want %+v", c, tc.want)
			}
			if found, ok := reg.PluginCommand(strings.ToUpper(tc.want.Name)); !ok || found.Name != tc.want.Name {
				t.Fatalf("PluginCommand(%q) = %+v, %v", tc.want.Name, found, ok)
			}
		})
	}
}

// Two plugins cannot own one command; a plugin whose Register fails
// leaves no command behind.
func TestRegisterCommandConflicts(t *testing.T) {
	reg := NewRegistry(nil)
	var second error
	loaded := reg.LoadPlugins(
		Plugin{Name: "first", Register: func(c *PluginContext) error { return c.RegisterCommand("deploy", "", "", noop) }},
		Plugin{Name: "second", Register: func(c *PluginContext) error {
			second = c.RegisterCommand("Deploy", "", "", noop)
			return nil
		}},
		Plugin{Name: "failing", Register: func(c *PluginContext) error {
			if err := c.RegisterCommand("rollback", "", "", noop); err != nil {
				return err
			}
			return c.RegisterCommand("status", "", "", noop)
		}},
	)
	if second == nil || !strings.Contains(second.Error(), `plugin "second": command /deploy is already registered by plugin "first"`) {
		t.Fatalf("second: %v", second)
	}
	if len(loaded) != 2 || len(loaded[0].Commands) != 1 || loaded[0].Commands[0] != "deploy" || len(loaded[1].Commands) != 0 {
		t.Fatalf("loaded %+v", loaded)
	}
	if cmds := reg.Commands(); len(cmds) != 1 || cmds[0].Name != "deploy" || cmds[0].Plugin != "first" {
		t.Fatalf("commands %+v", cmds)
	}
	if err := (&PluginContext{plugin: &Plugin{Name: "x"}, reg: reg}).RegisterCommand("nohandler", "", "", nil); err == nil || !strings.Contains(err.Error(), "no handler") {
		t.Fatalf("nil handler: %v", err)
	}
}
