package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// chat is the gateway's state for one session key.
type chat struct {
	key string

	mu       sync.Mutex
	intake   []*job
	intaking bool
	queue    []*job // turns waiting for the running one
	running  *job
	cancel   context.CancelCauseFunc

	sess       *sessions.Session // open session, nil until loaded
	loaded     bool
	history    []openai.ChatCompletionMessage
	freshReset bool
}

type job struct {
	msg herald.Message
	rec *adapters.Receipt
}

var (
	errInterrupted = errors.New("interrupted by a newer message")
	errStopped     = errors.New("stopped by /stop")
	errReset       = errors.New("session reset by /new")
)

// Receive implements adapters.Sink.
func (r *Runner) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	if !r.accepting.Load() {
		return adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped, Err: errors.New("gateway is shutting down")})
	}
	if m.ID != "" && !m.Internal && !r.dedup.first(string(m.Source.Platform)+"\x00"+m.Source.ChatID+"\x00"+m.ID) {
		r.log.Debug("duplicate message dropped", "platform", m.Source.Platform, "chat", m.Source.ChatID, "message_id", m.ID)
		return adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped})
	}
	if m.Source.ChatType == "" {
		m.Source.ChatType = herald.ChatDM
	}
	j := &job{msg: m, rec: adapters.NewReceipt()}
	c := r.chat(sessions.Key(m.Source, r.cfg.Keys))
	c.mu.Lock()
	c.intake = append(c.intake, j)
	start := !c.intaking
	c.intaking = true
	c.mu.Unlock()
	if start {
		go r.intakeLoop(c)
	}
	return j.rec
}

func (r *Runner) chat(key string) *chat {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.chats[key]
	if c == nil {
		c = &chat{key: key}
		r.chats[key] = c
	}
	return c
}

// intakeLoop handles a chat's inbound messages one at a time, in arrival
// order. It never waits for a turn.
func (r *Runner) intakeLoop(c *chat) {
	for {
		c.mu.Lock()
		if len(c.intake) == 0 {
			c.intaking = false
			c.mu.Unlock()
			return
		}
		j := c.intake[0]
		c.intake = c.intake[1:]
		c.mu.Unlock()
		func() {
			defer func() {
				if x := recover(); x != nil {
					r.log.Error("dispatch panicked; message dropped", "session_key", c.key, "panic", fmt.Sprint(x), "stack", string(debug.Stack()))
					j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped, Err: fmt.Errorf("internal error: %v", x)})
				}
			}()
			r.dispatch(c, j)
		}()
	}
}

// dispatch is the order of one inbound message: internal events skip
// hooks and auth; pre_gateway_dispatch; auth; busy chats; commands; the
// turn.
func (r *Runner) dispatch(c *chat, j *job) {
	ctx := r.baseCtx
	m := &j.msg
	if !m.Internal {
		if r.hooks.Has(hooks.PreGatewayDispatchHook) {
			d := r.hooks.PreGatewayDispatch(ctx, &hooks.Dispatch{Message: *m, Replier: r, Transcript: r})
			switch d.Action {
			case "skip":
				r.log.Info("pre_gateway_dispatch skip", "reason", d.Reason, "platform", m.Source.Platform, "chat", m.Source.ChatID)
				if d.Ingest {
					if err := r.AppendTranscript(ctx, m.Source, "user", m.Text); err != nil {
						r.log.Error("ingest failed", "err", err)
					}
				}
				j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped})
				return
			case "rewrite":
				if d.TextSet {
					m.Text = d.Text
				}
			}
		}
		if m.Source.UserID == "" {
			r.log.Debug("message without a user id dropped", "platform", m.Source.Platform, "chat", m.Source.ChatID)
			j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped})
			return
		}
		if !r.authorize(ctx, c, j) {
			return
		}
		if m.Source.ChatType != herald.ChatDM && r.cfg.Auth[m.Source.Platform].RequireMention && !m.Mentioned && !m.IsCommand() {
			j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped})
			return
		}
	}

	name, args := m.Command()
	canonical, known := r.canonical(name)
	c.mu.Lock()
	busy := c.running != nil
	c.mu.Unlock()

	if busy {
		if known {
			r.busyCommand(ctx, c, j, canonical, args)
			return
		}
		r.busyText(c, j)
		return
	}
	if name != "" && !m.Internal {
		if !known {
			r.reply(ctx, j, fmt.Sprintf("Unknown command `/%s`. Type /commands to see what's available, or resend without the leading slash to send as a regular message.", name))
			j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone})
			return
		}
		if r.command(ctx, c, j, name, canonical, args) {
			return
		}
	}
	r.startTurn(c, j)
}

// busyText follows busy_input_mode for plain text sent while a turn runs.
func (r *Runner) busyText(c *chat, j *job) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running == nil { // the turn ended meanwhile
		c.mu.Unlock()
		r.startTurn(c, j)
		c.mu.Lock()
		return
	}
	c.queue = append(c.queue, j)
	if r.cfg.BusyMode == "queue" {
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusQueued, SessionID: c.sessID()})
		return
	}
	// interrupt: cancel the running turn; the new message is answered
	// next, with the interrupted one in its history
	if c.cancel != nil {
		c.cancel(errInterrupted)
	}
}

func (c *chat) sessID() string {
	if c.sess == nil {
		return ""
	}
	return c.sess.ID
}

// startTurn runs j now if the chat is idle, else queues it.
func (r *Runner) startTurn(c *chat, j *job) {
	c.mu.Lock()
	if c.running != nil {
		c.queue = append(c.queue, j)
		c.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancelCause(r.baseCtx)
	c.running, c.cancel = j, cancel
	c.mu.Unlock()
	r.turns.Add(1)
	go r.turnLoop(c, j, ctx, cancel)
}

func (r *Runner) turnLoop(c *chat, j *job, ctx context.Context, cancel context.CancelCauseFunc) {
	defer r.turns.Done()
	for {
		r.safeTurn(ctx, c, j)
		cancel(nil)
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.running, c.cancel = nil, nil
			c.mu.Unlock()
			return
		}
		j = c.queue[0]
		c.queue = c.queue[1:]
		ctx, cancel = context.WithCancelCause(r.baseCtx)
		c.running, c.cancel = j, cancel
		c.mu.Unlock()
	}
}

func (r *Runner) safeTurn(ctx context.Context, c *chat, j *job) {
	defer func() {
		if x := recover(); x != nil {
			r.log.Error("turn panicked", "session_key", c.key, "panic", fmt.Sprint(x), "stack", string(debug.Stack()))
			j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, Err: fmt.Errorf("internal error: %v", x)})
		}
	}()
	r.turn(ctx, c, j)
}

// ApologyText is sent when a turn fails.
const ApologyText = "Sorry — something went wrong while I was answering (the model did not respond). Please try again in a moment."

// turn runs one agent turn for j and delivers its answer.
func (r *Runner) turn(ctx context.Context, c *chat, j *job) {
	m := j.msg
	sess, created, err := r.session(ctx, c, m.Source)
	c.mu.Lock()
	hist := c.history
	c.mu.Unlock()
	if err != nil {
		r.log.Error("session store unavailable", "session_key", c.key, "err", err)
		r.reply(ctx, j, "Sorry — herald could not open this conversation's history. Please try again.")
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, Err: err})
		return
	}
	src := m.Source
	start := hooks.AgentStart{
		Platform: string(src.Platform), UserID: src.UserID, ChatID: src.ChatID, SessionID: sess.ID,
		Message: truncate(m.Text, 500), ThreadID: src.ThreadID, ChatType: string(src.ChatType),
	}
	end := &hooks.AgentEnd{AgentStart: start, Model: r.cfg.Agent.ModelName}
	r.hooks.Emit(hooks.AgentStartEv, &start)
	defer r.hooks.Emit(hooks.AgentEndEv, end)

	res, runErr := r.cfg.Agent.Run(ctx, m.Text, agent.Options{
		Turn: agent.Turn{SessionID: sess.ID, SessionKey: c.key, Platform: string(src.Platform), UserID: src.UserID,
			ChatID: src.ChatID, ChatType: string(src.ChatType), ThreadID: src.ThreadID, Surface: "gateway"},
		History: hist,
	})
	// commit what the turn produced (even when interrupted, so the next
	// turn sees the interrupted message) before anything is delivered
	stored := r.toStored(sess.ID, res, &m)
	var create *sessions.Session
	if created {
		create = sess
	}
	if err := r.store.Append(context.WithoutCancel(ctx), create, stored...); err != nil {
		r.log.Error("could not store the turn", "session_id", sess.ID, "err", err)
	}
	c.mu.Lock()
	if created && c.sess == nil {
		c.sess = sess
	}
	if c.sess != nil && c.sess.ID == sess.ID { // not reset meanwhile
		// copy on append: a turn holds the old slice as its history
		h := make([]openai.ChatCompletionMessage, 0, len(c.history)+len(res.Messages))
		h = append(append(h, c.history...), res.Messages...)
		if n := len(h); n > r.cfg.HistoryLimit {
			h = h[n-r.cfg.HistoryLimit:]
		}
		c.history = h
	}
	c.mu.Unlock()

	switch {
	case res.Interrupted || ctx.Err() != nil:
		cause := context.Cause(ctx)
		end.Failed, end.Error = true, fmt.Sprint(cause)
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusInterrupted, SessionID: sess.ID})
		return
	case runErr != nil:
		end.Failed, end.Error = true, r.cfg.Redactor.Redact(runErr.Error())
		r.log.Error("turn failed", "session_id", sess.ID, "err", end.Error)
		r.reply(ctx, j, ApologyText)
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: sess.ID, Err: runErr})
		return
	}
	end.Response = truncate(res.FinalResponse, 500)
	r.reply(ctx, j, res.FinalResponse)
	j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: sess.ID})
}

// session returns the chat's open session, making a new one (not yet
// stored: the turn's first commit creates it) when there is none.
func (r *Runner) session(ctx context.Context, c *chat, src herald.Source) (*sessions.Session, bool, error) {
	c.mu.Lock()
	sess, loaded, fresh := c.sess, c.loaded, c.freshReset
	c.freshReset = false
	c.mu.Unlock()
	if !loaded {
		s, err := r.store.OpenSession(ctx, c.key)
		if err != nil {
			return nil, false, err
		}
		var hist []openai.ChatCompletionMessage
		if s != nil {
			msgs, err := r.store.Messages(ctx, s.ID, r.cfg.HistoryLimit)
			if err != nil {
				return nil, false, err
			}
			hist = toOpenAI(msgs)
		}
		c.mu.Lock()
		c.sess, c.loaded, c.history = s, true, hist
		sess = s
		c.mu.Unlock()
	}
	if sess != nil {
		if fresh {
			r.hooks.Emit(hooks.SessionStartEv, &hooks.SessionStart{Platform: string(src.Platform), UserID: src.UserID, SessionID: sess.ID, SessionKey: c.key})
		}
		return sess, false, nil
	}
	sess = sessions.NewSession(c.key, src, r.cfg.Now())
	sess.Model = r.cfg.Agent.ModelName
	r.hooks.Emit(hooks.SessionStartEv, &hooks.SessionStart{Platform: string(src.Platform), UserID: src.UserID, SessionID: sess.ID, SessionKey: c.key})
	return sess, true, nil
}

func (r *Runner) toStored(sessionID string, res *agent.Result, m *herald.Message) []sessions.Message {
	if res == nil {
		return nil
	}
	out := make([]sessions.Message, 0, len(res.Messages))
	now := r.cfg.Now()
	for i, om := range res.Messages {
		sm := sessions.Message{SessionID: sessionID, Role: om.Role, Content: r.cfg.Redactor.Redact(om.Content), ToolCallID: om.ToolCallID, ToolName: om.Name, CreatedAt: now}
		if len(om.ToolCalls) > 0 {
			b, _ := json.Marshal(om.ToolCalls)
			sm.ToolCalls = r.cfg.Redactor.Redact(string(b))
		}
		if i == 0 && om.Role == openai.ChatMessageRoleUser {
			sm.PlatformID = m.ID
		}
		out = append(out, sm)
	}
	return out
}

func toOpenAI(msgs []sessions.Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.ToolName}
		if m.ToolCalls != "" {
			json.Unmarshal([]byte(m.ToolCalls), &om.ToolCalls)
		}
		out = append(out, om)
	}
	// a tool message must follow the assistant message that called it; a
	// history cut in the middle of a tool exchange starts after it
	for len(out) > 0 && out[0].Role == openai.ChatMessageRoleTool {
		out = out[1:]
	}
	return out
}

// reply delivers text to the chat a job came from, as caused by it.
func (r *Runner) reply(ctx context.Context, j *job, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	a, ok := r.adapters[j.msg.Source.Platform]
	if !ok {
		r.log.Error("no adapter for reply", "platform", j.msg.Source.Platform)
		return
	}
	if err := r.send(context.WithoutCancel(ctx), a, j.msg.Source.Target(), text, j.msg.ID); err != nil {
		r.log.Error("reply not delivered", "platform", j.msg.Source.Platform, "chat", j.msg.Source.ChatID, "err", r.cfg.Redactor.Redact(err.Error()))
	}
}

// AppendTranscript implements herald.TranscriptAppender: the message is
// stored in the session of from's chat (created if needed) with no turn.
func (r *Runner) AppendTranscript(ctx context.Context, from herald.Source, role, text string) error {
	c := r.chat(sessions.Key(from, r.cfg.Keys))
	sess, created, err := r.session(ctx, c, from)
	if err != nil {
		return err
	}
	var create *sessions.Session
	if created {
		create = sess
	}
	msg := sessions.Message{SessionID: sess.ID, Role: role, Content: r.cfg.Redactor.Redact(text), CreatedAt: r.cfg.Now()}
	if err := r.store.Append(ctx, create, msg); err != nil {
		return err
	}
	c.mu.Lock()
	if created {
		c.sess = sess
	}
	c.history = append(c.history, openai.ChatCompletionMessage{Role: role, Content: msg.Content})
	c.mu.Unlock()
	return nil
}

// finalizeRunning fires on_session_finalize for every session with a
// running turn (shutdown).
func (r *Runner) finalizeRunning() {
	r.mu.Lock()
	chats := make([]*chat, 0, len(r.chats))
	for _, c := range r.chats {
		chats = append(chats, c)
	}
	r.mu.Unlock()
	for _, c := range chats {
		c.mu.Lock()
		running := c.running != nil
		id := c.sessID()
		c.mu.Unlock()
		if running && id != "" {
			r.hooks.Emit(hooks.OnSessionFinalizeHook, &hooks.SessionFinalized{SessionID: &id, Platform: "gateway"})
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	return string(rs[:n])
}
