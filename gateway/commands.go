package gateway

import (
	"context"
	"fmt"
	"strings"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// builtin commands: canonical name → one-line help.
var builtins = map[string]string{
	"new":    "start a new conversation (alias /reset)",
	"stop":   "stop the running turn",
	"status": "show this conversation's session and state",
	"help":   "list commands (alias /commands)",
	"queue":  "queue a message for after the running turn (alias /q)",
	"whoami": "show your platform user id",
	"model":  "show the model in use",
}

var aliases = map[string]string{"reset": "new", "commands": "help", "q": "queue"}

// commandOrder is how /help lists them.
var commandOrder = []string{"new", "stop", "status", "queue", "model", "whoami", "help"}

// canonical resolves a typed command name to its canonical one.
func (r *Runner) canonical(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	name = strings.ReplaceAll(name, "_", "-")
	if c, ok := aliases[name]; ok {
		return c, true
	}
	if _, ok := builtins[name]; ok {
		return name, true
	}
	return "", false
}

// command handles a recognised command on an idle chat; it returns false
// when the message should go on to a turn (a rewrite to text, say).
func (r *Runner) command(ctx context.Context, c *chat, j *job, typed, canonical, args string) bool {
	for hops := 0; hops < 4; hops++ {
		if !r.hooks.Has(hooks.CommandPrefix + canonical) {
			break
		}
		src := j.msg.Source
		out := r.hooks.Command(ctx, &hooks.Command{
			Platform: string(src.Platform), UserID: src.UserID, Command: canonical, RawCommand: typed, Args: args, RawArgs: args,
		})
		switch out.Decision {
		case "deny", "handled":
			r.reply(ctx, j, out.Reply)
			j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: c.sessID()})
			return true
		case "rewrite":
			j.msg.Text = strings.TrimSpace("/" + out.Rewrite + " " + args)
			name, a := j.msg.Command()
			cn, ok := r.canonical(name)
			if !ok {
				r.reply(ctx, j, fmt.Sprintf("Unknown command `/%s`. Type /commands to see what's available, or resend without the leading slash to send as a regular message.", name))
				j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone})
				return true
			}
			// the hook is not fired again for the rewritten command
			r.builtin(ctx, c, j, cn, a)
			return true
		}
		break
	}
	r.builtin(ctx, c, j, canonical, args)
	return true
}

// busyCommand handles a recognised command while a turn runs: commands
// bypass the queue.
func (r *Runner) busyCommand(ctx context.Context, c *chat, j *job, canonical, args string) {
	r.builtin(ctx, c, j, canonical, args)
}

func (r *Runner) builtin(ctx context.Context, c *chat, j *job, canonical, args string) {
	done := func(status string) {
		j.rec.Resolve(adapters.Outcome{Status: status, SessionID: c.sessID()})
	}
	switch canonical {
	case "help":
		var b strings.Builder
		b.WriteString("Commands:\n")
		for _, n := range commandOrder {
			fmt.Fprintf(&b, "/%s — %s\n", n, builtins[n])
		}
		r.reply(ctx, j, strings.TrimRight(b.String(), "\n"))
		done(adapters.StatusDone)
	case "whoami":
		src := j.msg.Source
		r.reply(ctx, j, fmt.Sprintf("You are %s on %s (user id %s).", nonEmpty(src.UserName, "unnamed"), src.Platform, src.UserID))
		done(adapters.StatusDone)
	case "model":
		r.reply(ctx, j, "Model: "+r.cfg.Agent.ModelName)
		done(adapters.StatusDone)
	case "status":
		c.mu.Lock()
		busy, queued := c.running != nil, len(c.queue)
		id := c.sessID()
		c.mu.Unlock()
		state := "idle"
		if busy {
			state = fmt.Sprintf("running a turn (%d queued)", queued)
		}
		if id == "" {
			id = "(none yet)"
		}
		r.reply(ctx, j, fmt.Sprintf("Session: %s\nModel: %s\nState: %s", id, r.cfg.Agent.ModelName, state))
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
		c.mu.Unlock()
		for _, q := range dropped {
			q.rec.Resolve(adapters.Outcome{Status: adapters.StatusInterrupted})
		}
		if running {
			r.reply(ctx, j, "⏹ Stopped.")
		} else {
			r.reply(ctx, j, "Nothing is running.")
		}
		done(adapters.StatusDone)
	case "queue":
		text := strings.TrimSpace(args)
		if text == "" {
			r.reply(ctx, j, "Usage: /queue <prompt>")
			done(adapters.StatusDone)
			return
		}
		q := &job{msg: j.msg, rec: adapters.NewReceipt()}
		q.msg.Text = text
		c.mu.Lock()
		busy := c.running != nil
		n := len(c.queue) + 1
		c.mu.Unlock()
		if !busy {
			j.msg.Text = text
			r.startTurn(c, j)
			return
		}
		r.startTurn(c, q)
		if n > 1 {
			r.reply(ctx, j, fmt.Sprintf("Queued for the next turn. (%d queued)", n))
		} else {
			r.reply(ctx, j, "Queued for the next turn.")
		}
		done(adapters.StatusQueued)
	case "new":
		r.reset(ctx, c, j)
		done(adapters.StatusDone)
	default:
		r.reply(ctx, j, fmt.Sprintf("⏳ `/%s` can't run right now.", canonical))
		done(adapters.StatusDone)
	}
}

// reset is /new: interrupt a running turn, then on_session_finalize(old)
// → session:end → session:reset → on_session_reset(new).
func (r *Runner) reset(ctx context.Context, c *chat, j *job) {
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
	src := j.msg.Source
	old, err := r.store.OpenSession(ctx, c.key)
	if err != nil {
		r.log.Error("reset: session store unavailable", "err", err)
	}
	next := sessions.NewSession(c.key, src, r.cfg.Now())
	next.Model = r.cfg.Agent.ModelName
	if err := r.store.ReplaceSession(ctx, old, "session_reset", next); err != nil {
		r.log.Error("reset: could not start a new session", "err", err)
	}
	var oldID *string
	if old != nil {
		id := old.ID
		oldID = &id
	}
	p := string(src.Platform)
	r.hooks.Emit(hooks.OnSessionFinalizeHook, &hooks.SessionFinalized{SessionID: oldID, Platform: p})
	r.hooks.Emit(hooks.SessionEndEv, &hooks.SessionBoundary{Platform: p, UserID: src.UserID, SessionKey: c.key})
	r.hooks.Emit(hooks.SessionResetEv, &hooks.SessionBoundary{Platform: p, UserID: src.UserID, SessionKey: c.key})
	r.hooks.Emit(hooks.OnSessionResetHook, &hooks.SessionWasReset{SessionID: next.ID, Platform: p})
	c.mu.Lock()
	c.sess, c.loaded, c.history, c.freshReset = next, true, nil, true
	c.mu.Unlock()
	r.reply(ctx, j, "✨ New session started. Session: "+next.ID)
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
