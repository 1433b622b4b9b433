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
		Started: func(fn func(herald.Source, string)) func() {
			return a.hooks.Subscribe(hooks.Subscription{Name: "api sessions", Attach: hooks.AttachInternal, Events: []string{hooks.AgentStartEv}, QueueSize: 1024,
				Handler: func(ctx context.Context, ev hooks.Event) (any, error) {
					if st, ok := ev.Payload.(*hooks.AgentStart); ok && st.Platform == string(herald.PlatformAPI) {
						fn(herald.Source{Platform: herald.PlatformAPI, ChatID: st.ChatID, UserID: st.UserID}, st.SessionID)
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

// apiStore is the state the API keeps in state.db.
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
