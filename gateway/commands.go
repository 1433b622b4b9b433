package gateway

// commands.go: the built-in slash commands. On an idle chat the
// command:<canonical> hooks decide first; while a turn runs, commands
// bypass the queue and the hooks (as in Hermes).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// commandMenu is the catalogue platforms with a command menu show: the
// built-ins in /help's order, without aliases, then the plugins' commands
// in the order they registered.
func (r *Runner) commandMenu() []adapters.Command {
	builtin, plugin := hooks.BuiltinCommands(), r.hooks.Commands()
	out := make([]adapters.Command, 0, len(builtin)+len(plugin))
	for _, b := range builtin {
		out = append(out, adapters.Command{Name: b.Name, Description: b.Description, Aliases: b.Aliases})
	}
	for _, p := range plugin {
		out = append(out, adapters.Command{Name: p.Name, Description: p.Description})
	}
	return out
}

// canonicalCommand resolves a typed command name ("" for text) to its
// canonical one, a built-in's or a plugin's; underscores are read as
// dashes.
func (r *Runner) canonicalCommand(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	name = strings.ReplaceAll(name, "_", "-")
	if b, ok := hooks.BuiltinCommandNamed(name); ok {
		return b.Name, true
	}
	if p, ok := r.hooks.PluginCommand(name); ok {
		return p.Name, true
	}
	return "", false
}

// command handles a recognised command on an idle chat: command:<name>
// hooks first (deny, handled, rewrite), then the built-in.
func (r *Runner) command(ctx context.Context, c *chat, j *job, typed, canonical, args string) {
	if r.hooks.Has(hooks.CommandPrefix + canonical) {
		src := j.msg.Source
		out := r.hooks.Command(ctx, &hooks.Command{
			Platform: string(src.Platform), UserID: src.UserID, Command: canonical, RawCommand: typed, Args: args, RawArgs: args,
		})
		switch out.Decision {
		case "deny", "handled":
			r.reply(j, out.Reply)
			j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: c.sessID()})
			return
		case "rewrite":
			j.msg.Text = strings.TrimSpace("/" + out.Rewrite + " " + args)
			name, a := j.msg.Command()
			cn, ok := r.canonicalCommand(name)
			if !ok {
				r.reply(j, fmt.Sprintf(UnknownCommandText, out.Rewrite))
				j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: c.sessID()})
				return
			}
			// the hook is not fired again for the rewritten command
			typed, canonical, args = name, cn, a
		}
	}
	if p, ok := r.hooks.PluginCommand(canonical); ok {
		r.pluginCommand(ctx, c, j, p, args)
		return
	}
	r.builtin(ctx, c, j, typed, canonical, args, false)
}

// pluginCommandTimeout bounds a plugin command's handler.
const pluginCommandTimeout = 30 * time.Second

// pluginCommand runs a plugin's command on an idle chat and replies with
// what it returns. The handler is foreign code: a panic, an error or no
// answer within pluginCommandTimeout is told to the user as the command's
// failure and logged with the plugin's name. A handler that ignores its
// context is left behind (on its own goroutine) rather than hold the chat,
// as the registry leaves a Go callback that overruns.
func (r *Runner) pluginCommand(ctx context.Context, c *chat, j *job, p hooks.PluginCommand, args string) {
	c.mu.Lock()
	id := c.sessID()
	c.mu.Unlock()
	type answer struct {
		text string
		err  error
	}
	hctx, cancel := context.WithTimeout(ctx, pluginCommandTimeout)
	defer cancel()
	answered := make(chan answer, 1)
	go func() {
		defer func() {
			if x := recover(); x != nil {
				answered <- answer{err: fmt.Errorf("panic: %v", x)}
			}
		}()
		text, err := p.Handler(hctx, &hooks.CommandCall{Command: p.Name, RawArgs: args, SessionID: id, Source: j.msg.Source})
		answered <- answer{text, err}
	}()
	var a answer
	select {
	case a = <-answered:
	case <-hctx.Done():
		a.err = fmt.Errorf("no answer within %s", pluginCommandTimeout)
		if ctx.Err() != nil {
			a.err = ctx.Err()
		}
	}
	if a.err != nil {
		msg := r.cfg.Redactor.Redact(a.err.Error())
		r.log.Error("plugin command failed", "plugin", p.Plugin, "command", p.Name, "err", msg)
		a.text = fmt.Sprintf("⚠️ /%s failed: %s", p.Name, msg)
	}
	r.reply(j, a.text)
	j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: id})
}

// builtin runs a built-in command; busy says a turn is running.
func (r *Runner) builtin(ctx context.Context, c *chat, j *job, typed, canonical, args string, busy bool) {
	done := func(status string) {
		c.mu.Lock()
		id := c.sessID()
		c.mu.Unlock()
		j.rec.Resolve(adapters.Outcome{Status: status, SessionID: id})
	}
	switch canonical {
	case "help":
		r.reply(j, r.helpText())
		done(adapters.StatusDone)
	case "whoami":
		src := j.msg.Source
		r.reply(j, fmt.Sprintf("You are %s on %s (user id %s).", nonEmpty(src.UserName, "unnamed"), src.Platform, src.UserID))
		done(adapters.StatusDone)
	case "model":
		switch {
		case busy:
			r.reply(j, "Agent is running — wait or /stop first, then switch models.")
		case strings.TrimSpace(args) != "":
			r.reply(j, fmt.Sprintf("Model: %s\nSwitching the model per conversation is not supported; set model.default in config.yaml.", r.cfg.Agent.ModelName))
		default:
			r.reply(j, "Model: "+r.cfg.Agent.ModelName)
		}
		done(adapters.StatusDone)
	case "status":
		// after a restart the chat's stored session is read first: it is
		// the one the next message resumes
		if err := r.load(ctx, c); err != nil {
			r.log.Warn("status: reading the chat's session", "chat", c.key, "err", err)
		}
		c.mu.Lock()
		running, queued := c.running != nil, len(c.queue)
		waiting := c.approval != nil
		id := c.sessID()
		if running && c.turnSess != nil {
			id = c.turnSess.ID
		} else if _, expired := r.cfg.Reset.Expired(c.lastActive, r.cfg.Now()); id != "" && !running && expired {
			id = "(none: the reset policy ends " + id + " at the next message)"
		}
		c.mu.Unlock()
		state := "idle"
		switch {
		case waiting:
			state = "waiting for /approve or /deny"
		case running:
			state = fmt.Sprintf("running a turn (%d queued)", queued)
		}
		if id == "" {
			id = "(none yet)"
		}
		r.reply(j, fmt.Sprintf("Session: %s\nModel: %s\nState: %s", id, r.cfg.Agent.ModelName, state))
		done(adapters.StatusDone)
	case "stop":
		c.mu.Lock()
		running := c.running != nil
		if running && c.cancel != nil {
			c.cancel(errStopped)
		}
		// drop what was queued behind the stopped turn
		dropped := c.queue
		c.queue = nil
		var idle chan struct{}
		if running {
			if c.idle == nil {
				c.idle = make(chan struct{})
			}
			idle = c.idle
		}
		c.mu.Unlock()
		for _, q := range dropped {
			q.rec.Resolve(adapters.Outcome{Status: adapters.StatusInterrupted})
		}
		if running {
			// answer once the turn has really stopped (tools and model
			// streams end within about 100 ms), so that what the user does
			// next finds the chat idle
			select {
			case <-idle:
			case <-time.After(stopWait):
				r.log.Warn("turn still stopping after /stop", "session_key", c.key)
			}
			r.reply(j, "⏹ Stopped.")
		} else {
			r.reply(j, "Nothing is running.")
		}
		done(adapters.StatusDone)
	case "queue":
		text := strings.TrimSpace(args)
		if text == "" {
			r.reply(j, "Usage: /queue <prompt>")
			done(adapters.StatusDone)
			return
		}
		q := &job{msg: j.msg, rec: adapters.NewReceipt()}
		q.msg.Text = text
		c.mu.Lock()
		// a turn that has already answered is finishing, not running:
		// the queued text is simply the next turn, answered as such
		running := c.running != nil && !answered(c.running)
		n := len(c.queue) + 1
		c.mu.Unlock()
		if !running {
			j.msg.Text = text
			r.startTurn(c, j)
			return
		}
		r.startTurn(c, q)
		if n > 1 {
			r.reply(j, fmt.Sprintf("Queued for the next turn. (%d queued)", n))
		} else {
			r.reply(j, "Queued for the next turn.")
		}
		done(adapters.StatusQueued)
	case "new":
		r.reset(ctx, c, j)
		done(adapters.StatusDone)
	case "approve", "deny":
		r.answerApproval(c, j, canonical, args)
	default:
		r.reply(j, fmt.Sprintf("⏳ Agent is running — `/%s` can't run mid-turn. Wait for the current response or `/stop` first.", typed))
		done(adapters.StatusDone)
	}
}

// helpText is /help: the built-ins, then the plugins' commands.
func (r *Runner) helpText() string {
	var b strings.Builder
	b.WriteString("Commands:")
	for _, c := range hooks.BuiltinCommands() {
		fmt.Fprintf(&b, "\n/%s — %s", c.Name, c.Description)
	}
	if plugin := r.hooks.Commands(); len(plugin) > 0 {
		b.WriteString("\n\nPlugin commands:")
		for _, c := range plugin {
			fmt.Fprintf(&b, "\n/%s", c.Name)
			if c.ArgsHint != "" {
				b.WriteString(" " + c.ArgsHint)
			}
			fmt.Fprintf(&b, " — %s", c.Description)
		}
	}
	return b.String()
}

// reset is /new: interrupt a running turn, then on_session_finalize(old)
// → session:end → session:reset → on_session_reset(new). The next message
// fires session:start.
func (r *Runner) reset(ctx context.Context, c *chat, j *job) {
	next := r.resetSession(ctx, c, j.msg.Source)
	r.reply(j, "✨ New session started. Session: "+next.ID)
}

// resetSession is reset without the reply in the chat (src is whom the
// new session is for).
func (r *Runner) resetSession(ctx context.Context, c *chat, src herald.Source) *sessions.Session {
	c.mu.Lock()
	if c.cancel != nil {
		c.cancel(errReset)
	}
	dropped := c.queue
	c.queue = nil
	c.mu.Unlock()
	for _, q := range dropped {
		q.rec.Resolve(adapters.Outcome{Status: adapters.StatusInterrupted})
	}
	if err := r.load(ctx, c); err != nil {
		r.log.Error("reset: session store unavailable", "err", err)
	}
	c.mu.Lock()
	old := c.sess
	c.mu.Unlock()
	now := r.cfg.Now()
	next := sessions.NewSession(c.key, src, now)
	next.Model = r.cfg.Agent.ModelName
	if err := r.store.ReplaceSession(ctx, old, "session_reset", next); err != nil {
		r.log.Error("reset: could not start a new session", "err", err)
	}
	var oldID *string
	if old != nil {
		id := old.ID
		oldID = &id
	}
	if old != nil {
		r.dropMedia(old.ID)
	}
	p := string(src.Platform)
	r.hooks.Emit(hooks.OnSessionFinalizeHook, &hooks.SessionFinalized{SessionID: oldID, Platform: p, Reason: "clear", Claude: r.claudeSession(oldID)})
	r.hooks.Emit(hooks.SessionEndEv, &hooks.SessionBoundary{Platform: p, UserID: src.UserID, SessionKey: c.key})
	r.hooks.Emit(hooks.SessionResetEv, &hooks.SessionBoundary{Platform: p, UserID: src.UserID, SessionKey: c.key})
	c.mu.Lock()
	c.sess, c.loaded, c.history, c.freshReset, c.autoReset, c.lastActive, c.resumable = next, true, nil, true, "", now, false
	c.mu.Unlock()
	r.hooks.Emit(hooks.OnSessionResetHook, &hooks.SessionWasReset{SessionID: next.ID, Platform: p})
	return next
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// stopWait bounds how long /stop waits for the turn to end.
const stopWait = 2 * time.Second

// answered reports whether a running job's message has its final answer
// (the turn is only finishing up).
func answered(j *job) bool {
	select {
	case <-j.rec.Done():
		return j.rec.Outcome().Status != adapters.StatusAwaitingInput
	default:
		return false
	}
}
