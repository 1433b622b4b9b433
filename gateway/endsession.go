package gateway

// endsession.go: ending a session from outside its chat (the local API's
// POST /v1/sessions/{id}/end), the same way /new ends it, without a
// notice in the chat.

import (
	"context"
	"errors"

	"github.com/heraldgw/herald"
)

// ErrSessionEnded is returned (wrapped) by EndSession for a session that
// has ended already.
var ErrSessionEnded = errors.New("the session has ended already")

// EndSession ends the open session id as /new would in its chat: a
// running turn is interrupted, the end hook points fire and the chat's
// next message starts a new session. An unknown id returns an error
// wrapping sessions.ErrNoSession.
func (r *Runner) EndSession(ctx context.Context, id string) error {
	sess, err := r.store.Session(ctx, id)
	if err != nil {
		return err
	}
	if sess.EndedAt != nil {
		return ErrSessionEnded
	}
	c := r.chat(sess.Key)
	if err := r.load(ctx, c); err != nil {
		return err
	}
	c.mu.Lock()
	current := c.sess != nil && c.sess.ID == id
	c.mu.Unlock()
	if !current {
		// an open row its chat no longer uses: only the store knows it
		return ErrSessionEnded
	}
	src := herald.Source{Platform: herald.Platform(sess.Platform), ChatID: sess.ChatID, ChatType: herald.ChatType(sess.ChatType),
		UserID: sess.UserID, UserName: sess.UserName, ThreadID: sess.ThreadID}
	r.resetSession(ctx, c, src)
	return nil
}
