package discordtest

import (
	"context"
	"net/http"
)

// Reaction is one reaction the bot added (PUT …/reactions/{emoji}/@me)
// or removed (DELETE).
type Reaction struct {
	Op        string // "add" or "remove"
	ChannelID string
	MessageID string
	Emoji     string
}

// FailReactions makes the next n reaction requests fail with 403
// Missing Permissions (a bot without Add Reactions).
func (s *Server) FailReactions(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reactFail = n
}

// Reactions returns the reactions the bot added and removed, in order.
func (s *Server) Reactions() []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Reaction(nil), s.reactions...)
}

// WaitReactions waits until the bot made at least n reaction requests
// (failed ones included) and returns the recorded ones.
func (s *Server) WaitReactions(ctx context.Context, n int) ([]Reaction, error) {
	err := s.wait(ctx, func() bool { return len(s.reactions) >= n })
	return s.Reactions(), err
}

func (s *Server) reaction(op string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.reactFail > 0 {
			s.reactFail--
			s.reactions = append(s.reactions, Reaction{Op: "failed " + op, ChannelID: r.PathValue("id"), MessageID: r.PathValue("mid"), Emoji: r.PathValue("emoji")})
			s.notify()
			apiError(w, http.StatusForbidden, 50013, "Missing Permissions")
			return
		}
		if r.PathValue("emoji") == "" {
			apiError(w, http.StatusBadRequest, 10014, "Unknown Emoji")
			return
		}
		s.reactions = append(s.reactions, Reaction{Op: op, ChannelID: r.PathValue("id"), MessageID: r.PathValue("mid"), Emoji: r.PathValue("emoji")})
		s.notify()
		w.WriteHeader(http.StatusNoContent)
	}
}
