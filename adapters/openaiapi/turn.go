package openaiapi

// turn.go: one request's turn — the chat taken for it, its session
// seeded or looked up, the message handed to the gateway, what the
// gateway sends back collected, streamed and turned into an answer.

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// conversation is what one request asks for.
type conversation struct {
	// session continues a stored session ("" for a new chat)
	session string
	// history seeds a new chat's session
	history []turnMessage
	prompt  string
	user    string
}

type turnMessage struct {
	role, text string
}

// turn is one request's message in the gateway.
type turn struct {
	a       *Adapter
	src     herald.Source
	id      string
	session string // known at the start when continuing a session
	w       *adapters.Waiter[sentText]
	rec     *adapters.Receipt
	started chan string
	// ended is closed when the turn's agent:end was seen; usage (guarded
	// by Adapter.mu) is then complete
	ended   chan struct{}
	usage   usage
	release func()
}

// endWait bounds the wait for a finished turn's agent:end (emitted just
// after the message's receipt resolved), for its usage.
const endWait = 2 * time.Second

// finalUsage is the turn's token usage: once its message's handling
// ended, it waits (bounded) for the turn's last hook points. A turn
// that never started a model run, or waits for an approval, has none.
func (t *turn) finalUsage(ctx context.Context) usage {
	if t.rec.Outcome().Status != adapters.StatusAwaitingInput && t.startSeen() {
		timer := time.NewTimer(endWait)
		select {
		case <-t.ended:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
	}
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	return t.usage
}

// startSeen reports whether the turn's start was seen.
func (t *turn) startSeen() bool {
	t.a.mu.Lock()
	defer t.a.mu.Unlock()
	return t.a.starting[t.src.ChatID] != t
}

// errStatus is a failure with its HTTP answer.
type errStatus struct {
	status int
	err    apiError
}

func (e *errStatus) Error() string { return e.err.Message }

func failure(status int, typ, code, param, msg string) *errStatus {
	e := &errStatus{status: status, err: apiError{Message: msg, Type: typ, Code: code}}
	if param != "" {
		e.err.Param = &param
	}
	return e
}

// start takes the request's chat (waiting for a request in flight on it),
// seeds a new chat's session and hands the prompt to the gateway.
func (a *Adapter) start(ctx context.Context, cv conversation) (*turn, error) {
	sink, err := a.sink.Wait(ctx)
	if err != nil {
		return nil, err
	}
	src, err := a.source(ctx, cv)
	if err != nil {
		return nil, err
	}
	t := &turn{a: a, src: src, id: "m" + rand.Text(), session: cv.session, started: make(chan string, 1), ended: make(chan struct{})}
	unlock, err := a.lockChat(ctx, t)
	if err != nil {
		return nil, err
	}
	for _, m := range cv.history {
		if err := a.cfg.Transcript.AppendTranscript(ctx, src, m.role, m.text); err != nil {
			unlock()
			return nil, failure(http.StatusServiceUnavailable, "server_error", "store_error", "", "storing the conversation failed: "+err.Error())
		}
	}
	w, _ := a.replies.Await(t.id, src.ChatID) // the id is new: never in flight
	t.w = w
	t.release = func() {
		a.replies.Release(t.id, w)
		a.mu.Lock()
		for _, s := range w.Got() {
			delete(a.sent, s.id)
		}
		a.mu.Unlock()
		unlock()
	}
	msg := herald.Message{ID: t.id, Text: cv.prompt, Source: src, Mentioned: true, Received: a.cfg.Now()}
	t.rec = sink.Receive(ctx, msg)
	if adapters.Refused(t.rec) {
		t.release()
		return nil, failure(http.StatusServiceUnavailable, "server_error", "not_taken", "", "the gateway did not take the message: "+t.rec.Outcome().Err.Error())
	}
	return t, nil
}

// source is where cv's message comes from: the chat of the session it
// continues, or a new chat.
func (a *Adapter) source(ctx context.Context, cv conversation) (herald.Source, error) {
	src := herald.Source{Platform: herald.PlatformAPI, ChatType: herald.ChatDM, UserID: cv.user, UserName: cv.user}
	if cv.session == "" {
		src.ChatID = "api-" + rand.Text()
		if src.UserID == "" {
			src.UserID, src.UserName = "api", "api"
		}
		return src, nil
	}
	stored, found, err := a.cfg.Store.SessionSource(ctx, cv.session)
	a.mu.Lock()
	if pending, ok := a.awaiting[cv.session]; ok && err == nil {
		if !found {
			stored, found = pending, true
		} else {
			delete(a.awaiting, cv.session)
		}
	}
	a.mu.Unlock()
	switch {
	case err != nil:
		return src, failure(http.StatusInternalServerError, "server_error", "store_error", "", "reading the session failed: "+err.Error())
	case !found:
		return src, failure(http.StatusNotFound, "invalid_request_error", "session_not_found", SessionHeader, fmt.Sprintf("no session %q", cv.session))
	case stored.Platform != herald.PlatformAPI:
		return src, failure(http.StatusBadRequest, "invalid_request_error", "session_not_api", SessionHeader, fmt.Sprintf("session %q is a %s session; only sessions of the API (platform api) can be continued here", cv.session, stored.Platform))
	}
	return stored, nil
}

// begin starts cv's turn; on failure it answers the request with the
// error and returns nil. A request continuing a session sends only its
// prompt: the stored session is the history.
func (a *Adapter) begin(w http.ResponseWriter, r *http.Request, cv conversation) *turn {
	if cv.session != "" {
		cv.history = nil
	}
	t, err := a.start(r.Context(), cv)
	if err != nil {
		if r.Context().Err() == nil {
			writeFailure(w, err)
		}
		return nil
	}
	return t
}

// answer runs cv's turn and returns its answer and usage, with the
// session it ran in set as the SessionHeader; on failure it has answered
// the request with the error (ok false).
func (a *Adapter) answer(w http.ResponseWriter, r *http.Request, cv conversation, hint string) (content string, u usage, ok bool) {
	t := a.begin(w, r, cv)
	if t == nil {
		return "", u, false
	}
	defer t.release()
	select {
	case <-t.rec.Done():
	case <-r.Context().Done():
		return "", u, false
	}
	content, note, fail := t.outcome(hint)
	if t.session != "" {
		w.Header().Set(SessionHeader, t.session)
	}
	if fail != nil {
		writeFailure(w, fail)
		return "", u, false
	}
	return withNote(content, note), t.finalUsage(r.Context()), true
}

// lockChat waits until no other request runs on t's chat, then holds it
// until the returned function is called; meanwhile the turn that starts
// in that chat is t's.
func (a *Adapter) lockChat(ctx context.Context, t *turn) (func(), error) {
	chat := t.src.ChatID
	for {
		a.mu.Lock()
		held := a.busy[chat]
		if held == nil {
			mine := make(chan struct{})
			a.busy[chat] = mine
			a.starting[chat] = t
			a.mu.Unlock()
			return func() {
				a.mu.Lock()
				delete(a.busy, chat)
				if a.starting[chat] == t {
					delete(a.starting, chat)
				}
				for id, rt := range a.running {
					if rt == t {
						delete(a.running, id)
					}
				}
				a.mu.Unlock()
				close(mine)
			}, nil
		}
		a.mu.Unlock()
		select {
		case <-held:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// sessionID waits until the turn's session is known: at once when it
// continues one, else when the turn starts or the message's handling
// ended.
func (t *turn) sessionID(ctx context.Context) string {
	if t.session != "" {
		return t.session
	}
	select {
	case id := <-t.started:
		t.session = id
	case <-t.rec.Done():
		t.session = t.rec.Outcome().SessionID
	case <-ctx.Done():
	}
	return t.session
}

// texts are the messages sent so far, each with its latest text, in the
// order they were first sent.
func texts(got []sentText) []sentText {
	var out []sentText
	at := map[string]int{}
	for _, s := range got {
		if i, ok := at[s.id]; ok {
			out[i].text = s.text
			continue
		}
		at[s.id] = len(out)
		out = append(out, s)
	}
	return out
}

// withNote is content followed by note, a blank line apart.
func withNote(content, note string) string {
	if note == "" {
		return content
	}
	if content == "" {
		return note
	}
	return content + "\n\n" + note
}

// joinTexts is the answer's content: its messages, a blank line apart.
func joinTexts(msgs []sentText) string {
	parts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		if strings.TrimSpace(m.text) != "" {
			parts = append(parts, m.text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// stream hands send the answer's text as it grows, until the message's
// handling ends; the note (how to answer an approval) ends it. It
// returns the turn's failure, if any, and ok false when the client went
// away or send failed.
func (t *turn) stream(ctx context.Context, hint string, send func(delta string) error) (fail *errStatus, ok bool) {
	var d deltas
	for {
		select {
		case <-t.w.Arrived():
			if text := d.next(texts(t.w.Got())); text != "" {
				if send(text) != nil {
					return nil, false
				}
			}
			continue
		case <-t.rec.Done():
		case <-ctx.Done():
			return nil, false
		}
		break
	}
	_, note, fail := t.outcome(hint)
	if fail != nil {
		return fail, true
	}
	// what arrived since the last delta, and the note, end the answer
	text := d.next(texts(t.w.Got()))
	switch {
	case note != "" && d.any:
		text += "\n\n" + note
	case note != "":
		text = note
	}
	if text != "" && send(text) != nil {
		return nil, false
	}
	return nil, true
}

// outcome is how a finished turn answers: its content and a note for
// the API client after it (how to answer an approval), or a failure.
func (t *turn) outcome(hint string) (content, note string, fail *errStatus) {
	o := t.rec.Outcome()
	if o.SessionID != "" {
		t.session = o.SessionID
	}
	content = joinTexts(texts(t.w.Got()))
	switch o.Status {
	case adapters.StatusDone:
		if o.Err != nil {
			msg := content
			if msg == "" {
				msg = "the turn failed"
			}
			return "", "", failure(http.StatusInternalServerError, "server_error", "turn_failed", "", msg)
		}
		return content, "", nil
	case adapters.StatusAwaitingInput:
		t.a.mu.Lock()
		if len(t.a.awaiting) >= maxAwaiting {
			clear(t.a.awaiting)
		}
		t.a.awaiting[t.session] = t.src
		t.a.mu.Unlock()
		return content, approvalHint(hint, t.session), nil
	case adapters.StatusInterrupted:
		return "", "", failure(http.StatusConflict, "server_error", "interrupted", "", "the turn was interrupted (by /stop, /new, or the gateway stopping) before it answered")
	case adapters.StatusQueued:
		return "", "", failure(http.StatusConflict, "server_error", "queued", "", "the session is busy; the message was queued")
	}
	msg := "the gateway did not answer the message"
	if o.Err != nil {
		msg += ": " + o.Err.Error()
	} else if content != "" {
		return content, "", nil
	}
	return "", "", failure(http.StatusInternalServerError, "server_error", "skipped", "", msg)
}

// approvalHint tells an API client how to answer an approval prompt.
func approvalHint(how, session string) string {
	return fmt.Sprintf("(The turn is waiting for this approval. To answer over the API, send /approve, /approve session, /approve always or /deny as the last user message %s.)", strings.ReplaceAll(how, "{session}", session))
}

func newID(prefix string) string {
	return prefix + strings.ToLower(rand.Text())
}
