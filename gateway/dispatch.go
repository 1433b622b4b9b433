package gateway

// dispatch.go: the order of one inbound message (Receive → per-chat
// intake → pre_gateway_dispatch → auth → busy chat → command → turn) and
// the turns themselves.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// chat is the gateway's state for one session key. Its intake goroutine
// handles inbound messages in arrival order; its turn goroutine runs one
// turn at a time. Both exist only while there is work.
type chat struct {
	key string

	mu       sync.Mutex
	intake   []*job
	intaking bool
	queue    []*job // turns waiting for the running one, FIFO
	// running is the job the running turn answers (nil when idle); an
	// approval answer makes the /approve message the one answered.
	running  *job
	cancel   context.CancelCauseFunc
	approval *pendingApproval
	// idle, when not nil, is closed the next time the chat stops running
	// a turn (/stop waits on it).
	idle chan struct{}

	sess       *sessions.Session // open session; nil when none (yet)
	loaded     bool
	history    []openai.ChatCompletionMessage
	freshReset bool      // made by /new: its first message fires session:start
	lastActive time.Time // for the reset policy
	autoReset  string    // why the policy ended the last session (for the notice)
	// resumable is set when the open session was read from the store and
	// this process has not run a turn on it yet (SessionStart "resume").
	resumable bool
	// startSource is why the next turn's session starts (SessionStart's
	// source), set by session() for the turn that takes it.
	startSource string
	// turnSess is the running turn's session (maybe not stored yet);
	// whatever is written to the chat while the turn runs goes there.
	turnSess *sessions.Session
	// hookMsg is the id of the message pre_gateway_dispatch is looking
	// at: side-channel replies during the hook are caused by it.
	hookMsg string
	// evicted is set when the chat was freed (evict.go): a Receive that
	// found it just before looks it up again.
	evicted bool
}

type job struct {
	msg herald.Message
	rec *adapters.Receipt
	// interrupt marks text that interrupted a turn (busy_input_mode
	// interrupt): several in a row are answered as one message.
	interrupt bool
	// inbox is the message's inbound journal row (nil for internal
	// messages), finished when its handling ends.
	inbox *inboxKey
	// shared is the chat queue row of a message taken from the database
	// (replicas.go; nil for one process), removed when its handling ends.
	shared *sharedRow
}

var (
	errInterrupted = errors.New("interrupted by a newer message")
	errStopped     = errors.New("stopped by /stop")
	errReset       = errors.New("session reset by /new")
	// errShuttingDown refuses a message at the door; its journal row
	// stays unfinished, so the next start handles it.
	errShuttingDown = errors.New("gateway is shutting down")
)

// UnknownCommandText is Hermes' guidance for a slash command nobody knows.
const UnknownCommandText = "Unknown command `/%s`. Type /commands to see what's available, or resend without the leading slash to send as a regular message."

// Receive implements adapters.Sink. It never blocks on a turn, but it
// stores a platform message in the inbound journal before it returns (one
// commit's time), so an adapter that acknowledges the message once
// Receive returned acknowledges only what is stored. A message already in
// the journal is a duplicate (a replay, also after a restart) and is
// skipped; one that cannot be stored is refused with an error (the
// adapter does not acknowledge it) and the user is told.
func (r *Runner) Receive(ctx context.Context, m herald.Message) *adapters.Receipt {
	if !r.accepting.Load() {
		return adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped, Err: errShuttingDown})
	}
	if m.Source.ChatType == "" {
		m.Source.ChatType = herald.ChatDM
	}
	if m.Received.IsZero() {
		m.Received = r.cfg.Now()
	}
	if r.coord != nil && !m.Internal {
		return r.receiveShared(ctx, m)
	}
	j := &job{msg: m, rec: adapters.NewReceipt()}
	if !m.Internal {
		key, fresh, err := r.journal(ctx, &j.msg)
		switch {
		case err != nil:
			return r.refuseUnsaved(ctx, j, err)
		case !fresh:
			r.log.Debug("duplicate message dropped", "platform", m.Source.Platform, "chat", m.Source.ChatID, "message_id", m.ID)
			return adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped})
		}
		j.inbox = &key
	}
	r.enqueue(j)
	return j.rec
}

// refuseUnsaved answers a message that could not be stored: refused at
// shutdown, or refused with err after the user was told (bounded: a client
// waiting on this message, the local API, then gets the notice).
func (r *Runner) refuseUnsaved(ctx context.Context, j *job, err error) *adapters.Receipt {
	m := &j.msg
	if ctx.Err() != nil || !r.accepting.Load() {
		return adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped, Err: errShuttingDown})
	}
	r.log.Error("inbound message not saved; not taken", "platform", m.Source.Platform, "chat", m.Source.ChatID, "message_id", m.ID, "err", err)
	r.storeResult(err)
	told := make(chan struct{})
	if r.background(func() { defer close(told); r.reply(j, NotSavedText) }) {
		select {
		case <-told:
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	}
	return adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped, Err: fmt.Errorf("message not saved: %w", err)})
}

// enqueue hands j to its chat's intake, starting the intake goroutine when
// none runs. Over MaxQueue waiting messages the user is told and j is
// skipped.
func (r *Runner) enqueue(j *job) {
	if j.inbox != nil {
		r.watch(j)
	}
	if j.shared != nil {
		r.watchShared(j)
	}
	c, full := r.appendIntake(sessions.Key(j.msg.Source, r.cfg.Keys), j)
	if full {
		r.log.Warn("chat intake full; message not taken", "session_key", c.key, "waiting", r.cfg.MaxQueue)
		r.tooMany(j)
		return
	}
	if c == nil {
		return
	}
	if !r.work.add() {
		// shutting down: every job a concurrent Receive added meanwhile
		// is refused too (the journal keeps them for the next start)
		c.mu.Lock()
		dropped := c.intake
		c.intake, c.intaking = nil, false
		c.mu.Unlock()
		for _, d := range dropped {
			d.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped, Err: errShuttingDown})
		}
		return
	}
	go r.intakeLoop(c)
}

// appendIntake adds j to the intake of the chat with key, creating the
// chat if needed. It returns the chat when its intake goroutine must be
// started (nil when one runs), and full when the intake is at its cap.
func (r *Runner) appendIntake(key string, j *job) (c *chat, full bool) {
	for {
		c = r.chat(key)
		c.mu.Lock()
		if c.evicted { // freed between the lookup and the lock
			c.mu.Unlock()
			continue
		}
		break
	}
	defer c.mu.Unlock()
	if len(c.intake) >= r.cfg.MaxQueue {
		return c, true
	}
	c.intake = append(c.intake, j)
	if c.intaking {
		return nil, false
	}
	c.intaking = true
	return c, false
}

// existingChat is the chat with key, nil when it has no state here.
func (r *Runner) existingChat(key string) *chat {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.chats[key]
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
// order. It never waits for a turn. When its last message leaves nothing
// behind (a stranger refused by auth, say), the chat is freed at once.
func (r *Runner) intakeLoop(c *chat) {
	defer r.work.done()
	for {
		c.mu.Lock()
		if len(c.intake) == 0 {
			c.intaking = false
			free := c.unused()
			c.mu.Unlock()
			if free {
				r.evict(c, func(c *chat) bool { return c.unused() })
			}
			r.chatIdle(c.key)
			return
		}
		j := c.intake[0]
		c.intake[0] = nil
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

// dispatch is the order of one inbound message:
//  1. internal messages skip hooks and auth;
//  2. the channel policy (allowed and ignored channels, manners.go);
//  3. pre_gateway_dispatch: skip (optionally ingesting), rewrite, allow;
//  4. auth and pairing (a message without a user id is dropped), then in
//     groups, only messages addressed to herald (commands too);
//  5. a busy chat: commands bypass, plain text interrupts or queues;
//  6. commands, command:<name> hooks first;
//  7. the turn.
func (r *Runner) dispatch(c *chat, j *job) {
	ctx := r.baseCtx
	m := &j.msg
	if j.shared != nil && !r.holdsLease(c.key) {
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped, Err: errLeaseLost})
		return
	}
	if !m.Internal {
		if !r.cfg.Auth[m.Source.Platform].channelAllowed(m.Source) {
			r.log.Debug("message in a channel herald does not answer in", "platform", m.Source.Platform, "chat", m.Source.ChatID)
			j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped})
			return
		}
		if r.hooks.Has(hooks.PreGatewayDispatchHook) {
			c.mu.Lock()
			c.hookMsg = m.ID
			c.mu.Unlock()
			d := r.hooks.PreGatewayDispatch(ctx, &hooks.Dispatch{Message: *m, Replier: r, Transcript: r})
			c.mu.Lock()
			c.hookMsg = ""
			c.mu.Unlock()
			switch d.Action {
			case "skip":
				r.log.Info("pre_gateway_dispatch skip", "reason", d.Reason, "platform", m.Source.Platform, "chat", m.Source.ChatID)
				if d.Ingest {
					if err := r.AppendTranscript(ctx, m.Source, openai.ChatMessageRoleUser, m.Text); err != nil {
						r.log.Error("pre_gateway_dispatch ingest failed", "session_key", c.key, "err", err)
					}
				}
				j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped, SessionID: c.sessID()})
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
		if !r.authorize(ctx, j) {
			return
		}
		if m.Source.ChatType != herald.ChatDM && !r.cfg.Auth[m.Source.Platform].addressed(m) {
			j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped})
			return
		}
	}

	name, args := m.Command()
	canonical, known := r.canonicalCommand(name)
	c.mu.Lock()
	busy := c.running != nil
	var finishing chan struct{}
	if busy && known && len(c.queue) == 0 && answered(c.running) {
		// the turn has answered and only finishes (its log line, its
		// hooks): a command sent after the answer waits for that rather
		// than being refused as mid-turn
		if c.idle == nil {
			c.idle = make(chan struct{})
		}
		finishing = c.idle
	}
	c.mu.Unlock()
	if finishing != nil {
		select {
		case <-finishing:
		case <-time.After(stopWait):
		}
		c.mu.Lock()
		busy = c.running != nil
		c.mu.Unlock()
	}

	if busy {
		if known {
			r.builtin(ctx, c, j, name, canonical, args, true)
			return
		}
		// unknown commands and paths are text while a turn runs
		r.busyText(c, j)
		return
	}
	if name != "" && !m.Internal {
		if !known {
			r.reply(j, fmt.Sprintf(UnknownCommandText, name))
			j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: c.sessID()})
			return
		}
		r.command(ctx, c, j, name, canonical, args)
		return
	}
	r.startTurn(c, j)
}

// busyText follows busy_input_mode for plain text sent while a turn runs.
func (r *Runner) busyText(c *chat, j *job) {
	c.mu.Lock()
	if c.running == nil { // the turn ended meanwhile
		c.mu.Unlock()
		r.startTurn(c, j)
		return
	}
	if len(c.queue) >= r.cfg.MaxQueue {
		c.mu.Unlock()
		r.tooMany(j)
		return
	}
	c.queue = append(c.queue, j)
	if r.cfg.BusyMode == "queue" {
		id := c.sessID()
		c.mu.Unlock()
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusQueued, SessionID: id})
		return
	}
	// interrupt: cancel the running turn; the new message is answered
	// next, with the interrupted one in its history
	j.interrupt = true
	if c.cancel != nil {
		c.cancel(errInterrupted)
	}
	c.mu.Unlock()
}

// sessID is the open session's id; call with c.mu held or from the intake.
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
		if len(c.queue) >= r.cfg.MaxQueue {
			c.mu.Unlock()
			r.tooMany(j)
			return
		}
		c.queue = append(c.queue, j)
		c.mu.Unlock()
		return
	}
	if !r.work.add() {
		c.mu.Unlock()
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusSkipped, Err: errShuttingDown})
		return
	}
	ctx, cancel := context.WithCancelCause(r.baseCtx)
	c.running, c.cancel = j, cancel
	c.mu.Unlock()
	go r.turnLoop(c, j, ctx, cancel)
}

// turnLoop runs j and then, one at a time, whatever was queued behind it.
func (r *Runner) turnLoop(c *chat, j *job, ctx context.Context, cancel context.CancelCauseFunc) {
	defer r.work.done()
	for {
		r.safeTurn(ctx, c, j)
		r.turnDone(j)
		cancel(nil)
		c.mu.Lock()
		c.turnSess = nil
		if len(c.queue) == 0 {
			c.running, c.cancel = nil, nil
			if c.idle != nil {
				close(c.idle)
				c.idle = nil
			}
			c.mu.Unlock()
			r.chatIdle(c.key)
			return
		}
		j = c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		// texts that came in a row while a turn was being interrupted
		// are one message: the last one is answered, with all their text
		var folded []*job
		for j.interrupt && len(c.queue) > 0 && c.queue[0].interrupt {
			next := c.queue[0]
			c.queue[0] = nil
			c.queue = c.queue[1:]
			next.msg.Text = j.msg.Text + "\n" + next.msg.Text
			next.msg.Media = append(append([]herald.Media(nil), j.msg.Media...), next.msg.Media...)
			if next.msg.ThreadContext == "" {
				next.msg.ThreadContext = j.msg.ThreadContext
			}
			folded = append(folded, j)
			j = next
		}
		ctx, cancel = context.WithCancelCause(r.baseCtx)
		c.running, c.cancel = j, cancel
		id := c.sessID()
		c.mu.Unlock()
		for _, f := range folded {
			f.rec.Resolve(adapters.Outcome{Status: adapters.StatusInterrupted, SessionID: id})
		}
	}
}

func (r *Runner) safeTurn(ctx context.Context, c *chat, j *job) {
	defer func() {
		if x := recover(); x != nil {
			r.log.Error("turn panicked", "session_key", c.key, "panic", fmt.Sprint(x), "stack", string(debug.Stack()))
			r.answering(c, j).rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, Err: fmt.Errorf("internal error: %v", x)})
		}
	}()
	r.turn(ctx, c, j)
}

// answering is the job a running turn now answers: j, or the /approve
// message that let it go on.
func (r *Runner) answering(c *chat, j *job) *job {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != nil {
		return c.running
	}
	return j
}

// ApologyText is sent when a turn fails.
const ApologyText = "Sorry — something went wrong while I was answering (the model did not respond). Please try again in a moment."

// NotSavedText is sent instead of an answer that could not be stored: a
// reply is only delivered once the turn is committed, so that what the
// user reads is what the next turn remembers.
const NotSavedText = "⚠️ Sorry — herald could not save this message (its storage is failing), so it was not answered. Please try again later."

// turn runs one agent turn for j, commits it, and delivers its answer.
func (r *Runner) turn(ctx context.Context, c *chat, j *job) {
	m := j.msg
	sess, created, notice, err := r.session(ctx, c, m.Source, true)
	if err != nil {
		r.storeResult(err)
		r.log.Error("session store unavailable", "session_key", c.key, "err", err)
		r.reply(j, "Sorry — herald could not open this conversation's history. Please try again.")
		j.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, Err: err})
		return
	}
	if notice != "" {
		r.reply(j, notice)
	}
	began := time.Now()
	var (
		res     *agent.Result
		outcome = outcomeFailed
		failure error
	)
	defer func() { r.logTurn(m.Source, sess.ID, time.Since(began), res, outcome, failure) }()
	c.mu.Lock()
	hist := c.history
	c.turnSess = sess
	source := c.startSource
	c.startSource, c.resumable = "", false
	c.mu.Unlock()
	src := m.Source
	in := r.prepare(ctx, sess.ID, m)
	for _, note := range in.notes {
		r.reply(j, note)
	}
	start := hooks.AgentStart{
		Platform: string(src.Platform), UserID: src.UserID, ChatID: src.ChatID, SessionID: sess.ID,
		Message: truncate(in.prompt, 500), ThreadID: src.ThreadID, ChatType: string(src.ChatType), Media: hooks.MediaOf(in.media),
	}
	end := &hooks.AgentEnd{AgentStart: start, Model: r.cfg.Agent.ModelName}
	r.hooks.Emit(hooks.AgentStartEv, &start)
	defer r.hooks.Emit(hooks.AgentEndEv, end)

	opts := agent.Options{
		Turn: agent.Turn{SessionID: sess.ID, SessionKey: c.key, Platform: string(src.Platform), UserID: src.UserID,
			ChatID: src.ChatID, ChatType: string(src.ChatType), ThreadID: src.ThreadID, Surface: surface(src.Platform),
			MediaDir: r.mediaDirOf(sess.ID)},
		History:       hist,
		Approver:      r.approver(c, sess.ID, src.Platform),
		SessionSource: source,
		// a hook's systemMessage reaches the chat as it happens
		Notice: func(text string) { r.reply(j, text) },
		Media:  in.media,
	}
	if dt := r.cfg.Auth[src.Platform].DisabledTools; len(dt) > 0 {
		opts.DisabledTools = dt
	}
	st := r.newStream(c, j)
	if st != nil {
		opts.Stream = st.update
	}
	prompt := in.prompt
	if m.ThreadContext != "" {
		// what the thread said before, which the history lacks (an adapter's)
		prompt = m.ThreadContext + "\n\n" + prompt
	}
	stopTyping := r.typing(ctx, src)
	res, runErr := r.runAgent(ctx, prompt, opts)
	failure = runErr
	stopTyping()
	if st != nil {
		st.stop()
	}
	deliver := answerDelivered(ctx, res, runErr)
	if !deliver && (res.Interrupted || ctx.Err() != nil) {
		res.Messages = withoutUnsentAnswer(res.Messages)
	}
	// commit what the turn produced (even when interrupted, so the next
	// turn sees the interrupted message) before anything is delivered
	if err := r.commit(ctx, c, sess, created, res, &m); err != nil {
		outcome, failure = outcomeNotSaved, err
		end.Failed, end.Error = true, r.cfg.Redactor.Redact(err.Error())
		cur := r.answering(c, j)
		// a streamed preview of the answer becomes the notice: nothing
		// the next turn will not remember stays shown
		if st == nil || !st.finish(NotSavedText) {
			r.reply(cur, NotSavedText)
		}
		cur.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: sess.ID, Err: err})
		return
	}
	outcome = r.finishTurn(ctx, c, j, sess, res, runErr, deliver, st, end)
}

// answerDelivered reports whether a turn's answer is to be delivered: it
// is complete, and the turn was not cancelled, or was cancelled only by a
// newer message after the answer was already made (that message is
// answered next, with this answer in its history). An answer cut short,
// or one made before /stop, /new or shutdown ended the turn, is not.
func answerDelivered(ctx context.Context, res *agent.Result, runErr error) bool {
	if runErr != nil || !res.Completed {
		return false
	}
	return ctx.Err() == nil || errors.Is(context.Cause(ctx), errInterrupted)
}

// withoutUnsentAnswer drops the assistant text that ends an interrupted
// turn: the user never saw it, so the next turn must not remember having
// said it. The user's message and any tool calls (they ran) are kept.
func withoutUnsentAnswer(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	if n := len(msgs); n > 0 && msgs[n-1].Role == openai.ChatMessageRoleAssistant && len(msgs[n-1].ToolCalls) == 0 {
		return msgs[:n-1]
	}
	return msgs
}

// commit stores a turn's messages (creating its session if it is new) and
// then makes them the chat's history, unless the chat moved on to another
// session meanwhile (/new): a session this turn made is then ended.
func (r *Runner) commit(ctx context.Context, c *chat, sess *sessions.Session, created bool, res *agent.Result, m *herald.Message) error {
	stored := r.toStored(sess.ID, res, m)
	err := r.store.Append(context.WithoutCancel(ctx), sess, stored...)
	r.storeResult(err)
	if err != nil {
		return err
	}
	now := r.cfg.Now()
	c.mu.Lock()
	if created && c.sess == nil {
		c.sess = sess
	}
	current := c.sess != nil && c.sess.ID == sess.ID
	if current {
		// copy on append: a turn holds the old slice as its history
		h := make([]openai.ChatCompletionMessage, 0, len(c.history)+len(res.Messages))
		h = append(append(h, c.history...), res.Messages...)
		if n := len(h); n > r.cfg.HistoryLimit {
			h = h[n-r.cfg.HistoryLimit:]
		}
		c.history = h
		c.lastActive = now
	}
	c.mu.Unlock()
	if created && !current { // /new came while this turn made its session
		if err := r.store.EndSession(context.WithoutCancel(ctx), sess.ID, "session_reset", now); err != nil {
			r.log.Error("could not end a superseded session", "session_id", sess.ID, "err", err)
		}
		r.dropMedia(sess.ID)
	}
	return nil
}

// finishTurn delivers a committed turn's answer (or apology), resolves
// the receipt of the message it answers, and says how the turn ended.
func (r *Runner) finishTurn(ctx context.Context, c *chat, j *job, sess *sessions.Session, res *agent.Result, runErr error, deliver bool, st *stream, end *hooks.AgentEnd) string {
	cur := r.answering(c, j)
	switch {
	case deliver:
	case res.Interrupted || ctx.Err() != nil:
		end.Failed, end.Error = true, fmt.Sprint(context.Cause(ctx))
		cur.rec.Resolve(adapters.Outcome{Status: adapters.StatusInterrupted, SessionID: sess.ID})
		return outcomeInterrupted
	case runErr != nil:
		end.Failed, end.Error = true, r.cfg.Redactor.Redact(runErr.Error())
		r.reply(cur, ApologyText)
		cur.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: sess.ID, Err: runErr})
		return outcomeFailed
	}
	end.Response = truncate(res.FinalResponse, 500)
	text, files := outgoing(res)
	if st != nil && strings.TrimSpace(text) == "" && len(files) > 0 {
		text = "📎" // a streamed message cannot be edited to nothing
	}
	if st == nil || !st.finish(text) {
		r.reply(cur, text)
	}
	r.sendFiles(cur, files, r.mediaDirOf(sess.ID))
	cur.rec.Resolve(adapters.Outcome{Status: adapters.StatusDone, SessionID: sess.ID})
	return answeredOutcome(res)
}

// runAgent calls the agent behind a recover boundary; res is never nil.
func (r *Runner) runAgent(ctx context.Context, text string, o agent.Options) (res *agent.Result, err error) {
	defer func() {
		if x := recover(); x != nil {
			err = fmt.Errorf("agent panicked: %v", x)
			r.log.Error("agent panicked", "panic", fmt.Sprint(x), "stack", string(debug.Stack()))
		}
		if res == nil {
			res = &agent.Result{}
		}
	}()
	return r.cfg.Agent.Run(ctx, text, o)
}

// session returns the session c's messages go to. For a turn (forTurn)
// it applies the reset policy: an expired session is finalized and ended,
// and a new one (not yet stored: the turn's commit creates it) takes its
// place. Anything else written while a turn runs (an ingested message, a
// transcript line) joins the running turn's session and never ends it:
// like the sweep, the policy waits for the turn. session:start is emitted
// for a new session and for the first message after /new. notice is the
// text telling the user about an automatic reset.
func (r *Runner) session(ctx context.Context, c *chat, src herald.Source, forTurn bool) (sess *sessions.Session, created bool, notice string, err error) {
	if err := r.load(ctx, c); err != nil {
		return nil, false, "", err
	}
	now := r.cfg.Now()
	c.mu.Lock()
	sess = c.sess
	var expired *sessions.Session
	var reason string
	if !forTurn && c.running != nil {
		if c.turnSess != nil {
			sess = c.turnSess
		}
		if sess != nil {
			c.mu.Unlock()
			return sess, false, "", nil
		}
	} else if sess != nil {
		if why, ok := r.cfg.Reset.Expired(c.lastActive, now); ok {
			expired, reason = sess, why
			c.autoReset = ""
			if len(c.history) > 0 { // only a conversation that had something in it is worth a notice
				c.autoReset = why
			}
			c.sess, c.history, c.freshReset, c.resumable = nil, nil, false, false
			sess = nil
		}
	}
	fresh := c.freshReset
	c.freshReset = false
	auto := c.autoReset
	if forTurn {
		switch {
		case fresh:
			c.startSource = "clear"
		case sess == nil:
			c.startSource = "startup"
		case c.resumable:
			c.startSource = "resume"
		}
	}
	if sess == nil {
		sess = sessions.NewSession(c.key, src, now)
		sess.Model = r.cfg.Agent.ModelName
		created = true
		c.autoReset = ""
		if !forTurn && c.running != nil {
			// the turn about to start in this chat finds it and joins it
			c.sess = sess
		}
	}
	c.lastActive = now
	c.mu.Unlock()
	if expired != nil {
		r.expire(ctx, c.key, expired, reason)
	}
	if created || fresh {
		r.hooks.Emit(hooks.SessionStartEv, &hooks.SessionStart{Platform: string(src.Platform), UserID: src.UserID, SessionID: sess.ID, SessionKey: c.key})
	}
	if created && auto != "" && r.notifyReset(src.Platform) {
		notice = fmt.Sprintf("◐ Session automatically reset (%s). Conversation history cleared.", r.cfg.Reset.Describe(auto))
	}
	return sess, created, notice, nil
}

// load reads the chat's open session and its history from the store the
// first time the chat is used. An interrupt does not cut it short: the
// interrupted turn still has a session to store its message in, so the
// text is folded into the next turn instead of being lost.
func (r *Runner) load(ctx context.Context, c *chat) error {
	c.mu.Lock()
	loaded := c.loaded
	c.mu.Unlock()
	if loaded {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	s, err := r.store.OpenSession(ctx, c.key)
	if err != nil {
		return err
	}
	var hist []openai.ChatCompletionMessage
	if s != nil {
		msgs, err := r.store.Messages(ctx, s.ID, r.cfg.HistoryLimit)
		if err != nil {
			return err
		}
		hist = toOpenAI(msgs)
	}
	c.mu.Lock()
	if !c.loaded {
		c.sess, c.loaded, c.history, c.resumable = s, true, hist, s != nil
		if s != nil {
			c.lastActive = s.UpdatedAt
		}
	}
	c.mu.Unlock()
	return nil
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

// reply delivers text to the chat a job came from, as caused by it. It
// waits for delivery (so a receipt resolved after it covers the reply);
// only a hard shutdown cuts its retries short.
func (r *Runner) reply(j *job, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	a, ok := r.adapters[j.msg.Source.Platform]
	if !ok {
		r.log.Error("no adapter for reply", "platform", j.msg.Source.Platform)
		return
	}
	if _, err := r.send(r.baseCtx, a, j.msg.Source.Target(), text, j.msg.ID, r.quoteFor(j.msg)); err != nil {
		r.log.Error("reply not delivered", "platform", j.msg.Source.Platform, "chat", j.msg.Source.ChatID, "err", r.cfg.Redactor.Redact(err.Error()))
	}
}

// AppendTranscript implements herald.TranscriptAppender: the message is
// stored in the session of from's chat (created if needed; the running
// turn's while one runs) with no turn.
func (r *Runner) AppendTranscript(ctx context.Context, from herald.Source, role, text string) error {
	if from.ChatType == "" {
		from.ChatType = herald.ChatDM
	}
	c := r.chat(sessions.Key(from, r.cfg.Keys))
	sess, created, _, err := r.session(ctx, c, from, false)
	if err != nil {
		r.storeResult(err)
		return fmt.Errorf("append to the transcript of %s: %w", c.key, err)
	}
	msg := sessions.Message{SessionID: sess.ID, Role: role, Content: r.cfg.Redactor.Redact(text), CreatedAt: r.cfg.Now()}
	err = r.store.Append(ctx, sess, msg)
	r.storeResult(err)
	if err != nil {
		return fmt.Errorf("append to the transcript of %s: %w", c.key, err)
	}
	c.mu.Lock()
	if created && c.sess == nil {
		c.sess = sess
	}
	c.mu.Unlock()
	r.remember(c, sess.ID, role, msg.Content)
	return nil
}

// remember adds a stored message to c's history when it went to the
// chat's current session.
func (r *Runner) remember(c *chat, sessionID, role, content string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil || c.sess.ID != sessionID {
		return
	}
	// copy on append: a running turn holds the old slice as its history
	h := make([]openai.ChatCompletionMessage, 0, len(c.history)+1)
	h = append(append(h, c.history...), openai.ChatCompletionMessage{Role: role, Content: content})
	if n := len(h); n > r.cfg.HistoryLimit {
		h = h[n-r.cfg.HistoryLimit:]
	}
	c.history = h
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

// surface is where an approval prompt is shown: "cli" for herald chat,
// "gateway" for chat platforms (Hermes' values).
func surface(p herald.Platform) string {
	if p == herald.PlatformCLI {
		return "cli"
	}
	return "gateway"
}
