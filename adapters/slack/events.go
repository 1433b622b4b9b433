package slack

// events.go is the Events API receiver: an HTTP endpoint that checks each
// request's signature, answers url_verification, and answers 200 before
// handing the event on (Slack retries requests not answered in 3 s). It
// is served at EventsPath on the shared inbound listener, or on any path
// of a listener of its own at EventsListen (the older form).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/heraldgw/herald/adapters"
)

// maxEventBody bounds an Events API request body.
const maxEventBody = 1 << 20

// EventsPath is the receiver's path on the shared inbound listener; slash
// commands and interactivity post to it too.
const EventsPath = "/slack/events"

// InboundRoutes implements adapters.InboundRouter: in events mode without
// a listener of its own, the receiver is served on the shared inbound
// listener.
func (a *Adapter) InboundRoutes() map[string]http.Handler {
	if a.cfg.Mode != ModeEvents || a.cfg.EventsListen != "" {
		return nil
	}
	return map[string]http.Handler{EventsPath: &a.inbound}
}

func (a *Adapter) runEvents(ctx context.Context, sink adapters.Sink) error {
	if a.cfg.EventsListen == "" {
		remove := a.inbound.Put(a.EventsHandler(ctx, sink))
		a.setHealth("connected")
		a.log.Info("slack events API served on the inbound listener", "path", EventsPath)
		<-ctx.Done()
		remove()
		a.setHealth("stopped")
		return nil
	}
	ln, err := net.Listen("tcp", a.cfg.EventsListen)
	if err != nil {
		return a.fail(&adapters.FatalError{Msg: fmt.Sprintf("slack: cannot listen for the Events API on %s (platforms.slack.events_listen)", a.cfg.EventsListen), Err: err})
	}
	a.setHealth("connected")
	a.log.Info("slack events API listening", "addr", ln.Addr().String())
	if a.cfg.OnListen != nil {
		a.cfg.OnListen(ln.Addr().String())
	}
	if err := adapters.ServeHTTP(ctx, ln, a.EventsHandler(ctx, sink), adapters.HTTPLimits{MaxBody: maxEventBody}, 5*time.Second); err != nil {
		return a.fail(&adapters.TemporaryError{Err: fmt.Errorf("slack: events API server: %w", err)})
	}
	a.setHealth("stopped")
	return nil
}

// EventsHandler is the Events API endpoint as an http.Handler, for
// mounting on a server of one's own. Events are handed to sink with ctx.
func (a *Adapter) EventsHandler(ctx context.Context, sink adapters.Sink) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventBody))
		if err != nil {
			http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		sv, err := slackapi.NewSecretsVerifier(r.Header, a.cfg.SigningSecret)
		if err == nil {
			sv.Write(body)
			err = sv.Ensure()
		}
		if err != nil {
			a.log.Warn("slack events API request refused", "remote", r.RemoteAddr, "err", err)
			http.Error(w, "invalid signature", http.StatusUnauthorized)
			return
		}
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/x-www-form-urlencoded" {
			a.serveForm(ctx, sink, w, body)
			return
		}
		ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
		if err != nil {
			// answer 200 so Slack does not retry an event that will never
			// parse
			a.log.Warn("slack sent an event herald could not read; dropped", "err", err)
			w.WriteHeader(http.StatusOK)
			return
		}
		switch ev.Type {
		case slackevents.URLVerification:
			uv, ok := ev.Data.(*slackevents.EventsAPIURLVerificationEvent)
			if !ok {
				http.Error(w, "bad url_verification", http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(slackevents.ChallengeResponse{Challenge: uv.Challenge})
			return
		case slackevents.CallbackEvent:
			// answered only once the gateway took (stored) the event, so
			// Slack retries what herald did not take; Receive returns after
			// one store commit, well inside Slack's 3 s. The recover keeps a
			// translation bug from killing the connection goroutine silently.
			taken := true
			a.recovered("slack event handling panicked", func() { taken = a.handle(ctx, sink, ev) })
			if !taken {
				http.Error(w, "not taken; retry later", http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusOK)
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
}

// serveForm answers a signed form post: a slash command is handed to the
// sink and answered 200 (with no body, so Slack shows nothing until the
// reply comes) once the gateway took it; an interactive payload (a
// button press) is answered 200 at once and then handled; other forms
// are answered 200 and dropped.
func (a *Adapter) serveForm(ctx context.Context, sink adapters.Sink, w http.ResponseWriter, body []byte) {
	v, err := url.ParseQuery(string(body))
	if err == nil && v.Get("payload") != "" {
		a.serveInteraction(ctx, sink, w, v.Get("payload"))
		return
	}
	if err != nil || v.Get("command") == "" {
		if err != nil {
			a.log.Warn("slack sent a form herald could not read; dropped", "err", err)
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	taken := true
	a.recovered("slack slash command handling panicked", func() { taken = a.handleSlash(ctx, sink, slashFromForm(v)) })
	if !taken {
		http.Error(w, "not taken; retry later", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// serveInteraction answers an interactive payload 200 before handling it,
// so Slack's 3 s window never waits for the sink or the reply.
func (a *Adapter) serveInteraction(ctx context.Context, sink adapters.Sink, w http.ResponseWriter, payload string) {
	var ic slackapi.InteractionCallback
	if err := json.Unmarshal([]byte(payload), &ic); err != nil {
		a.log.Warn("slack sent an interactive payload herald could not read; dropped", "err", err)
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusOK)
	if err := http.NewResponseController(w).Flush(); err != nil {
		a.log.Debug("slack: could not flush the answer to an interactive payload", "err", err)
	}
	a.recovered("slack button press handling panicked", func() { a.handleInteraction(ctx, sink, ic) })
}

// recovered runs f, logging a panic as msg: a translation bug must not
// kill the connection goroutine silently.
func (a *Adapter) recovered(msg string, f func()) {
	defer func() {
		if x := recover(); x != nil {
			a.log.Error(msg, "panic", fmt.Sprint(x), "stack", string(debug.Stack()))
		}
	}()
	f()
}

var _ adapters.InboundRouter = (*Adapter)(nil)
