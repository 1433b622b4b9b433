package webhook

// serve.go answers POST /webhooks/<name>: size, signature, rate limit,
// payload, event filter, idempotency, then a run handed to the gateway
// (202 at once) or, for deliver_only, the rendered text delivered before
// the answer.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// deliveryHeaders name a delivery, first found wins.
var deliveryHeaders = []string{"X-GitHub-Delivery", "X-Gitlab-Event-UUID", "X-Request-Id"}

// handler serves every route; requests are handed to sink with ctx.
func (a *Adapter) handler(ctx context.Context, sink adapters.Sink) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, ok := a.routes[strings.TrimPrefix(r.URL.Path, PathPrefix)]
		if !ok || rt.disabled || !strings.HasPrefix(r.URL.Path, PathPrefix) {
			answer(w, http.StatusNotFound, map[string]string{"error": errNoRoute.Error()})
			return
		}
		a.serve(ctx, sink, rt, w, r)
	})
}

func (a *Adapter) serve(ctx context.Context, sink adapters.Sink, rt *route, w http.ResponseWriter, r *http.Request) {
	in, ok := a.admit(rt, w, r)
	if !ok {
		return
	}
	id := deliveryID(r.Header)
	text := a.render(rt, in.event, in.payload)
	to, dest := a.destination(rt, in.payload)
	fresh, err := a.seen.claim(r.Context(), rt.Name, id, record{At: in.at.UnixMilli(), To: dest})
	if err != nil {
		a.log.Error("webhook: could not record the delivery id", "route", rt.Name, "err", err)
		answer(w, http.StatusServiceUnavailable, map[string]string{"error": "could not record the delivery; retry later"})
		return
	}
	if !fresh {
		a.log.Info("webhook: duplicate delivery skipped", "route", rt.Name, "delivery", id)
		answer(w, http.StatusOK, map[string]string{"status": "duplicate", "delivery_id": id})
		return
	}
	if rt.DeliverOnly {
		a.deliverOnly(rt, w, r, id, to, text)
		return
	}
	who := sender(rt.Name, in.payload)
	m := herald.Message{ID: id, Text: text, Received: in.at, Source: herald.Source{
		Platform: Platform, ChatID: rt.Name, ChatType: herald.ChatDM, ChatName: "webhook/" + rt.Name,
		UserID: who, UserName: who, ThreadID: id,
	}}
	if adapters.Refused(sink.Receive(ctx, m)) {
		a.forget(r.Context(), rt, id)
		answer(w, http.StatusServiceUnavailable, map[string]string{"error": "not taken; retry later"})
		return
	}
	a.log.Info("webhook run accepted", "route", rt.Name, "event", in.event, "delivery", id, "prompt_len", len(text))
	answer(w, http.StatusAccepted, map[string]string{"status": "accepted", "route": rt.Name, "event": in.event, "delivery_id": id})
}

// admitted is a request that passed admit.
type admitted struct {
	payload any
	event   string
	at      time.Time
}

// admit checks a request in order — method, body size, signature, rate
// limit, payload, events filter — and answers the first it fails; ok is
// false then.
func (a *Adapter) admit(rt *route, w http.ResponseWriter, r *http.Request) (in admitted, ok bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		answer(w, http.StatusMethodNotAllowed, map[string]string{"error": "use POST"})
		return in, false
	}
	body, status := readBody(w, r, rt.MaxBodyBytes)
	if status != 0 {
		answer(w, status, map[string]string{"error": http.StatusText(status)})
		return in, false
	}
	if !rt.InsecureNoAuth && !Verify(r.Header, body, rt.Secret) {
		a.log.Warn("webhook request refused: invalid or missing signature", "route", rt.Name, "remote", r.RemoteAddr)
		answer(w, http.StatusUnauthorized, map[string]string{"error": "invalid signature"})
		return in, false
	}
	in.at = time.Now()
	if !rt.limit.allow(in.at) {
		w.Header().Set("Retry-After", strconv.Itoa(int(rt.limit.retryAfter(in.at).Round(time.Second)/time.Second)))
		answer(w, http.StatusTooManyRequests, map[string]string{"error": "rate limit exceeded"})
		return in, false
	}
	var err error
	if in.payload, err = decodePayload(r.Header.Get("Content-Type"), body); err != nil {
		answer(w, http.StatusBadRequest, map[string]string{"error": "the body is not JSON: " + err.Error()})
		return in, false
	}
	in.event = eventType(r.Header, in.payload)
	if len(rt.Events) > 0 && !slices.Contains(rt.Events, in.event) && !slices.Contains(rt.Events, field(in.payload, "object_kind")) {
		answer(w, http.StatusOK, map[string]string{"status": "ignored", "event": in.event})
		return in, false
	}
	return in, true
}

// deliverOnly sends text to its target now and answers with the outcome:
// 200 when delivered, 502 (and the id forgotten, so a retry may succeed)
// when not.
func (a *Adapter) deliverOnly(rt *route, w http.ResponseWriter, r *http.Request, id string, to herald.Target, text string) {
	if err := a.cfg.Deliverer.Deliver(r.Context(), to, text); err != nil {
		a.forget(r.Context(), rt, id)
		a.log.Error("webhook: direct delivery failed", "route", rt.Name, "target", to.String(), "delivery", id, "err", err)
		answer(w, http.StatusBadGateway, map[string]string{"status": "error", "error": "delivery failed", "delivery_id": id})
		return
	}
	a.log.Info("webhook delivered", "route", rt.Name, "target", to.String(), "delivery", id)
	answer(w, http.StatusOK, map[string]string{"status": "delivered", "route": rt.Name, "target": to.String(), "delivery_id": id})
}

// forget releases a claim whose delivery was not taken.
func (a *Adapter) forget(ctx context.Context, rt *route, id string) {
	if err := a.seen.release(ctx, rt.Name, id); err != nil {
		a.log.Error("webhook: could not forget a delivery id that was not taken; its retry will be skipped", "route", rt.Name, "delivery", id, "err", err)
	}
}

// readBody reads at most limit bytes of the body: a declared length over
// it is refused before anything is read. status is non-zero on failure.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, status int) {
	if r.ContentLength > limit {
		return nil, http.StatusRequestEntityTooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge
	case err != nil:
		return nil, http.StatusBadRequest
	}
	return body, 0
}

// render is the route's text for a payload: its prompt filled, or the
// default prompt. A template that fails on this payload's shape falls
// back to the default prompt (with a warning naming the route). Text that
// would read as a slash command is prefixed, so a payload never runs a
// command.
func (a *Adapter) render(rt *route, event string, payload any) string {
	text := ""
	if rt.prompt != nil {
		var err error
		if text, err = rt.prompt.Render(payload); err != nil {
			a.log.Warn("webhook prompt template failed on this payload; sending the default prompt", "route", rt.Name, "err", err)
			text = ""
		}
	}
	if strings.TrimSpace(text) == "" {
		text = defaultPrompt(rt.Name, event, payload)
	}
	if name, _, _ := herald.SplitCommand(text); name != "" {
		text = "Webhook " + rt.Name + ":\n" + text
	}
	return text
}

// destination is where a delivery's answer goes: the route's target with
// deliver_extra's chat and thread rendered from the payload, and its
// record form ("log", or the target).
func (a *Adapter) destination(rt *route, payload any) (herald.Target, string) {
	if rt.logOnly {
		return herald.Target{}, deliverLog
	}
	to := rt.target
	set := func(key string, dst *string) {
		if t := rt.extra[key]; t != nil {
			if v, err := t.Render(payload); err == nil && strings.TrimSpace(v) != "" && !strings.Contains(v, ":") {
				*dst = strings.TrimSpace(v)
			}
		}
	}
	set("chat_id", &to.ChatID)
	set("message_thread_id", &to.ThreadID)
	set("thread_id", &to.ThreadID)
	return to, to.String()
}

// decodePayload reads a JSON body, or a form whose payload field is JSON
// (GitHub's form content type) or whose fields become a flat object.
// Null object members are dropped, so that a template reads them as
// missing.
func decodePayload(contentType string, body []byte) (any, error) {
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/x-www-form-urlencoded" {
		v, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, err
		}
		if p := v.Get("payload"); p != "" {
			body = []byte(p)
		} else {
			out := map[string]any{}
			for k := range v {
				out[k] = v.Get(k)
			}
			return out, nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return dropNulls(v), nil
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}

// eventType is the sender's event name: GitHub's or GitLab's header, or
// the payload's event_type (Hermes), or "unknown". A route's events
// filter also lets through GitLab's object_kind ("merge_request" for a
// "Merge Request Hook").
func eventType(h http.Header, payload any) string {
	for _, k := range []string{"X-GitHub-Event", "X-Gitlab-Event"} {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			return v
		}
	}
	if m, ok := payload.(map[string]any); ok {
		if s, ok := m["event_type"].(string); ok && s != "" {
			return s
		}
	}
	return "unknown"
}

// deliveryID is the request's delivery id, or a fresh random one when it
// names none (such a request has nothing to be a duplicate of).
func deliveryID(h http.Header) string {
	for _, k := range deliveryHeaders {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			return cleanID(v)
		}
	}
	b := make([]byte, 12)
	rand.Read(b)
	return "r-" + hex.EncodeToString(b)
}

// sender names who sent the event: GitHub's sender.login, GitLab's
// user.username or user_username, else the route.
func sender(route string, payload any) string {
	for _, path := range []string{"sender.login", "user.username", "user_username"} {
		if s := field(payload, path); s != "" && !strings.ContainsAny(s, "{[\n") {
			return head(s, 64)
		}
	}
	return "webhook:" + route
}

// answer writes a JSON answer.
func answer(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}
