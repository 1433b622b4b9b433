package teams

// inbound.go: the activity endpoint. A request is authenticated before
// anything in it is used; then a message is handed to the Sink (and
// answered 200 once the gateway took it, 503 when it refused it, so the
// Bot Framework sends it again), a button press to the PressSink, and
// anything else answered 200 and dropped.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"

	"github.com/heraldgw/herald/adapters"
)

// maxBody bounds an activity request body.
const maxBody = 1 << 20

// Handler is the activity endpoint as an http.Handler; activities are
// handed to sink with ctx.
func (a *Adapter) Handler(ctx context.Context, sink adapters.Sink) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		act, err := a.authenticate(r, body)
		if err != nil {
			a.log.Warn("teams activity refused", "remote", r.RemoteAddr, "err", err)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		a.recovered(w, func() { a.serve(ctx, sink, w, act) })
	})
}

// authenticate checks the request's token, then reads the activity and
// checks it against the token: the key must endorse its channel, and a
// serviceurl claim must be its serviceUrl. An activity that is not JSON
// is an error too (401: nothing of an unreadable body is trusted).
func (a *Adapter) authenticate(r *http.Request, body []byte) (*activity, error) {
	var peek struct {
		ChannelID string `json:"channelId"`
	}
	json.Unmarshal(body, &peek)
	claimed, err := a.verify.verify(r.Context(), r.Header.Get("Authorization"), peek.ChannelID)
	if err != nil {
		return nil, err
	}
	act, err := decodeActivity(body)
	if err != nil {
		return nil, err
	}
	if act.ServiceURL != "" {
		if claimed != "" && !sameServiceURL(claimed, act.ServiceURL) {
			return nil, fmt.Errorf("%w: serviceUrl %q is not the token's %q", errUnauthorized, act.ServiceURL, claimed)
		}
		if !trustedServiceURL(act.ServiceURL) {
			return nil, fmt.Errorf("%w: serviceUrl %q is not https", errUnauthorized, act.ServiceURL)
		}
	}
	return act, nil
}

// serve handles one authenticated activity.
func (a *Adapter) serve(ctx context.Context, sink adapters.Sink, w http.ResponseWriter, act *activity) {
	if act.Type != typeMessage && act.Type != typeInvoke {
		// conversationUpdate (the bot added to a chat), typing, reactions…
		w.WriteHeader(http.StatusOK)
		return
	}
	chat, _ := splitConversation(act.Conversation.ID)
	a.convs.remember(ctx, chat, act.ServiceURL)
	if p, ok := act.press(); ok {
		a.press(ctx, sink, w, act, p)
		return
	}
	if act.Type == typeInvoke {
		w.WriteHeader(http.StatusOK)
		return
	}
	m, ok := act.message(a.cfg.AppID)
	if !ok {
		w.WriteHeader(http.StatusOK)
		return
	}
	m.Received = a.cfg.Now()
	if adapters.Refused(sink.Receive(ctx, m)) {
		http.Error(w, "not taken; retry later", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// press hands a button press to the gateway. The reply text is shown as
// the invoke's answer, or (for Action.Submit, which has none) posted in
// the conversation as a reply to the card.
func (a *Adapter) press(ctx context.Context, sink adapters.Sink, w http.ResponseWriter, act *activity, p adapters.Press) {
	reply := "This button no longer works."
	if ps, ok := sink.(adapters.PressSink); ok {
		reply = ps.Press(ctx, p)
	}
	if act.Type == typeInvoke {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		res := map[string]any{"statusCode": 200, "type": "application/vnd.microsoft.activity.message", "value": reply}
		json.NewEncoder(w).Encode(res)
		return
	}
	w.WriteHeader(http.StatusOK)
	if reply == "" {
		return
	}
	a.pending.Go(func() {
		if _, err := a.Send(ctx, p.Chat, adapters.Outgoing{Text: reply, Plain: true, ReplyTo: act.ID}); err != nil {
			a.log.Warn("teams: could not answer a button press", "err", err)
		}
	})
}

// recovered runs f, turning a panic into a logged 500 so a translation
// bug never takes the listener down.
func (a *Adapter) recovered(w http.ResponseWriter, f func()) {
	defer func() {
		if x := recover(); x != nil {
			a.log.Error("teams activity handling panicked", "panic", fmt.Sprint(x), "stack", string(debug.Stack()))
			http.Error(w, "internal error", http.StatusInternalServerError)
		}
	}()
	f()
}
