package cmd

// platform_api.go wires the OpenAI-compatible API (platform "api") onto
// the local platform's listener.

import (
	"context"
	"errors"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/adapters/openaiapi"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// newAPI builds the API adapter and serves it on loc. transcript is read
// when a request needs it (the Runner is built after its adapters).
func newAPI(a *app, loc *local.Adapter, transcript func() herald.TranscriptAppender) *openaiapi.Adapter {
	api := openaiapi.New(openaiapi.Config{
		Model:      a.endpoint.Model,
		Transcript: lateTranscript(transcript),
		Store:      apiStore{a.store},
		Log:        a.log.With("platform", "api"),
		Observe: func(fn func(openaiapi.TurnEvent)) func() {
			return a.hooks.Subscribe(hooks.Subscription{Name: "api turns", Attach: hooks.AttachInternal, QueueSize: 4096,
				Events: []string{hooks.AgentStartEv, hooks.PostAPIRequestHook, hooks.AgentEndEv},
				Handler: func(ctx context.Context, ev hooks.Event) (any, error) {
					if te, ok := apiTurnEvent(ev.Payload); ok {
						fn(te)
					}
					return nil, nil
				}})
		},
	})
	api.Register(loc)
	return api
}

type lateTranscript func() herald.TranscriptAppender

func (f lateTranscript) AppendTranscript(ctx context.Context, from herald.Source, role, text string) error {
	return f().AppendTranscript(ctx, from, role, text)
}

// apiStore is the state the API keeps in the state store.
type apiStore struct{ *sessions.Store }

func (s apiStore) SessionSource(ctx context.Context, id string) (herald.Source, bool, error) {
	sess, err := s.Session(ctx, id)
	if errors.Is(err, sessions.ErrNoSession) {
		return herald.Source{}, false, nil
	}
	if err != nil {
		return herald.Source{}, false, err
	}
	return herald.Source{Platform: herald.Platform(sess.Platform), ChatID: sess.ChatID, ChatType: herald.ChatType(sess.ChatType),
		UserID: sess.UserID, UserName: sess.UserName, ThreadID: sess.ThreadID}, true, nil
}

// apiTurnEvent reads what the API follows of a turn on platform api from
// a hook payload.
func apiTurnEvent(payload any) (openaiapi.TurnEvent, bool) {
	api := string(herald.PlatformAPI)
	switch p := payload.(type) {
	case *hooks.AgentStart:
		return openaiapi.TurnEvent{Kind: openaiapi.TurnStarted, ChatID: p.ChatID, SessionID: p.SessionID}, p.Platform == api
	case *hooks.APIResponse:
		return openaiapi.TurnEvent{Kind: openaiapi.TurnUsage, SessionID: p.SessionID,
			PromptTokens: p.Usage["prompt_tokens"], CompletionTokens: p.Usage["completion_tokens"]}, p.Platform == api
	case *hooks.AgentEnd:
		return openaiapi.TurnEvent{Kind: openaiapi.TurnEnded, SessionID: p.SessionID}, p.Platform == api
	}
	return openaiapi.TurnEvent{}, false
}
