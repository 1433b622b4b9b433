package runs

// http.go: the endpoints — start a run, read it, answer its approval,
// stop it — and the local API's JSON and error shapes.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// MaxBody bounds a request body.
const MaxBody = 1 << 20

// MaxIDLength bounds session_id, in bytes (as the local platform bounds
// its ids).
const MaxIDLength = 256

// runUser is the user of a run in a chat of its own.
const runUser = "api"

type createRequest struct {
	Input     *string `json:"input"`
	SessionID string  `json:"session_id"`
}

type approvalRequest struct {
	Choice string `json:"choice"`
}

// httpError is a failure with its status.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func fail(status int, format string, args ...any) *httpError {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

func (a *Adapter) create(w http.ResponseWriter, req *http.Request) {
	var in createRequest
	if err := readBody(w, req, &in); err != nil {
		writeFailure(w, err)
		return
	}
	switch {
	case in.Input == nil:
		writeErr(w, http.StatusBadRequest, `"input" is required`)
		return
	case strings.TrimSpace(*in.Input) == "":
		writeErr(w, http.StatusBadRequest, `"input" is empty`)
		return
	case len(in.SessionID) > MaxIDLength:
		writeErr(w, http.StatusBadRequest, fmt.Sprintf(`"session_id" is %d bytes long; at most %d are allowed`, len(in.SessionID), MaxIDLength))
		return
	}
	r, rec, err := a.start(req.Context(), *in.Input, in.SessionID)
	if err != nil {
		writeFailure(w, err)
		return
	}
	go r.watch(rec)
	out := map[string]string{"run_id": r.id}
	if in.SessionID != "" {
		out["session_id"] = in.SessionID
	}
	adapters.WriteJSON(w, http.StatusAccepted, out)
}

// start registers a run in its chat and hands its input to the gateway,
// with a context that outlives the request. The caller starts the
// watcher (counted in a.watchers here).
func (a *Adapter) start(ctx context.Context, input, session string) (*run, *adapters.Receipt, error) {
	// the listener may serve before the gateway handed over its Sink
	sink, err := a.sink.Wait(ctx)
	if err != nil {
		return nil, nil, err
	}
	src, err := a.source(ctx, session)
	if err != nil {
		return nil, nil, err
	}
	r := a.newRun(src, session)
	a.mu.Lock()
	select {
	case <-a.quit:
		a.mu.Unlock()
		return nil, nil, fail(http.StatusServiceUnavailable, "the gateway is stopping")
	default:
	}
	if busy := a.byChat[src.ChatID]; busy != nil && busy.over() {
		// it has finished and is on its way out of the indexes: a client
		// that saw it end may start the next at once
		a.endedLocked(busy)
	}
	if busy := a.byChat[src.ChatID]; busy != nil {
		a.mu.Unlock()
		return nil, nil, fail(http.StatusConflict, "session %q is busy with run %s; wait for it to end, or stop it", session, busy.id)
	}
	a.runs[r.id] = r
	a.byChat[src.ChatID] = r
	a.active.Add(1)
	if r.key != "" {
		a.byKey[r.key] = r
	}
	if session != "" {
		a.bySession[session] = r
	}
	a.pruneLocked()
	a.watchers.Add(1)
	a.mu.Unlock()

	r.mu.Lock()
	started := map[string]string{"run_id": r.id}
	if session != "" {
		started["session_id"] = session
	}
	r.emitLocked("run.started", started)
	r.mu.Unlock()
	msg := herald.Message{ID: "m" + rand.Text(), Text: input, Source: src, Mentioned: true, Received: a.cfg.Now()}
	rec := sink.Receive(context.WithoutCancel(ctx), msg)
	if adapters.Refused(rec) {
		a.watchers.Done()
		a.mu.Lock()
		delete(a.runs, r.id)
		a.mu.Unlock()
		a.ended(r)
		return nil, nil, fail(http.StatusServiceUnavailable, "the gateway did not take the input: %s", a.cfg.Redact(rec.Outcome().Err.Error()))
	}
	return r, rec, nil
}

// source is where a run's message comes from: a chat of its own, or the
// chat of the session it continues.
func (a *Adapter) source(ctx context.Context, session string) (herald.Source, error) {
	if session == "" {
		return herald.Source{Platform: Platform, ChatID: "run-" + strings.ToLower(rand.Text()), ChatType: herald.ChatDM,
			UserID: runUser, UserName: runUser}, nil
	}
	a.mu.Lock()
	busy := a.bySession[session]
	if busy != nil && busy.over() {
		a.endedLocked(busy)
		busy = nil
	}
	a.mu.Unlock()
	if busy != nil {
		return herald.Source{}, fail(http.StatusConflict, "session %q is busy with run %s; wait for it to end, or stop it", session, busy.id)
	}
	src, found, err := a.cfg.Store.SessionSource(ctx, session)
	switch {
	case err != nil:
		return src, fail(http.StatusInternalServerError, "reading session %q failed: %s", session, a.cfg.Redact(err.Error()))
	case !found:
		return src, fail(http.StatusNotFound, "no session %q", session)
	case src.Platform != Platform:
		return src, fail(http.StatusBadRequest, "session %q is a %s session; only sessions of runs (platform runs) can be continued here", session, src.Platform)
	}
	return src, nil
}

// learnSession records the session a run's turn runs in.
func (a *Adapter) learnSession(r *run, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byChat[r.src.ChatID] == r {
		a.bySession[id] = r
	}
	r.setSession(id)
}

func (a *Adapter) get(w http.ResponseWriter, req *http.Request) {
	if r := a.lookup(w, req); r != nil {
		adapters.WriteJSON(w, http.StatusOK, r.state())
	}
}

// lookup finds the run named in the path; it answers 404 when there is
// none.
func (a *Adapter) lookup(w http.ResponseWriter, req *http.Request) *run {
	id := req.PathValue("id")
	a.mu.Lock()
	a.pruneLocked()
	r := a.runs[id]
	a.mu.Unlock()
	if r == nil {
		writeErr(w, http.StatusNotFound, fmt.Sprintf("no run %q (finished runs are kept %s, at most %d of them)", id, a.cfg.Keep, a.cfg.MaxRuns))
	}
	return r
}

// approvalCommands are the messages that answer an approval, by choice
// (Hermes' choices).
var approvalCommands = map[string]string{
	"once":    "/approve",
	"session": "/approve session",
	"always":  "/approve always",
	"deny":    "/deny",
}

func (a *Adapter) approval(w http.ResponseWriter, req *http.Request) {
	r := a.lookup(w, req)
	if r == nil {
		return
	}
	var in approvalRequest
	if err := readBody(w, req, &in); err != nil {
		writeFailure(w, err)
		return
	}
	text, ok := approvalCommands[in.Choice]
	if !ok {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf(`"choice" must be one of once, session, always, deny (not %q)`, in.Choice))
		return
	}
	r.mu.Lock()
	if r.status != StatusAwaitingApproval {
		status := r.status
		r.mu.Unlock()
		writeErr(w, http.StatusConflict, fmt.Sprintf("run %s is not waiting for an approval (it is %s)", r.id, status))
		return
	}
	r.status, r.approval = StatusRunning, nil
	id := "m" + rand.Text()
	r.control[id] = controlApproval
	r.mu.Unlock()
	rec := a.command(req.Context(), r, id, text)
	r.next <- rec // the watcher waits for it; one answer per prompt
	adapters.WriteJSON(w, http.StatusOK, r.state())
}

func (a *Adapter) stop(w http.ResponseWriter, req *http.Request) {
	r := a.lookup(w, req)
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.terminal() {
		status := r.status
		r.mu.Unlock()
		writeErr(w, http.StatusConflict, fmt.Sprintf("run %s has already ended (%s)", r.id, status))
		return
	}
	r.stopAsked = true
	id := "m" + rand.Text()
	r.control[id] = controlStop
	r.mu.Unlock()
	a.command(req.Context(), r, id, "/stop")
	adapters.WriteJSON(w, http.StatusAccepted, r.state())
}

// command hands the gateway a command as the run's user in the run's
// chat, as a person there would type it.
func (a *Adapter) command(ctx context.Context, r *run, id, text string) *adapters.Receipt {
	sink := a.sink.Sink()
	msg := herald.Message{ID: id, Text: text, Source: r.src, Mentioned: true, Received: a.cfg.Now()}
	return sink.Receive(context.WithoutCancel(ctx), msg)
}

// readBody reads one JSON object, with no unknown fields, into v.
func readBody(w http.ResponseWriter, req *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fail(http.StatusRequestEntityTooLarge, "request body is over %d bytes", MaxBody)
		}
		return fail(http.StatusBadRequest, "reading the request body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fail(http.StatusBadRequest, "%q must be a %s, not %s", te.Field, te.Type.Kind(), te.Value)
		}
		return fail(http.StatusBadRequest, "the body is not a valid JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail(http.StatusBadRequest, "the body has data after its JSON object")
	}
	return nil
}

func writeFailure(w http.ResponseWriter, err error) {
	var he *httpError
	if errors.As(err, &he) {
		writeErr(w, he.status, he.msg)
		return
	}
	writeErr(w, http.StatusInternalServerError, err.Error())
}

func writeErr(w http.ResponseWriter, status int, msg string) {
	adapters.WriteJSON(w, status, map[string]string{"error": msg})
}
