package gateway

// stream.go: streamed replies on platforms whose adapter can edit a sent
// message. The first text is sent as a message and then edited as it
// grows, at most once per StreamInterval and never to the same text, and
// only when the chat's pace allows: after a 429 no edit goes to the chat
// until its retry-after has passed. The final answer replaces the preview
// through the normal split (extra parts are sent as new messages); a
// final edit is retried after the wait, and a preview that cannot take
// the answer is deleted before the answer is sent anew, so no stale
// preview stays above a duplicate.

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

type stream struct {
	r     *Runner
	a     adapters.Adapter
	ed    adapters.Editor
	to    herald.Target
	quote quoting
	// c and j are the chat and the job the turn runs for
	c *chat
	j *job
	// cause is the message the preview answers: the job the chat's turn
	// answers when the preview is first sent (after a typed /approve,
	// that message's; the local platform returns the reply to its
	// request). Owned by loop until done, then by finish.
	cause string

	mu   sync.Mutex
	text string

	kick chan struct{}
	quit chan struct{}
	done chan struct{}

	// owned by loop until done, then by finish
	msgID string
	shown string
	edits int
	// lost: the first send timed out and may have gone through, with no
	// id to edit; the stream stops (a second preview could double it)
	lost bool
}

// newStream returns nil when j's platform cannot edit messages.
func (r *Runner) newStream(c *chat, j *job) *stream {
	a, ok := r.adapters[j.msg.Source.Platform]
	if !ok {
		return nil
	}
	ed, ok := a.(adapters.Editor)
	if !ok {
		return nil
	}
	s := &stream{r: r, a: a, ed: ed, to: j.msg.Source.Target(), c: c, j: j, cause: j.msg.ID, quote: r.quoteFor(j.msg),
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

// update is agent.Options.Stream: it never blocks.
func (s *stream) update(partial string) {
	s.mu.Lock()
	s.text = partial
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *stream) loop() {
	defer close(s.done)
	for {
		select {
		case <-s.quit:
			return
		case <-s.kick:
		}
		s.flush()
		t := time.NewTimer(s.r.cfg.StreamInterval)
		select {
		case <-s.quit:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// preview is what fits in one message of the text so far.
func (s *stream) preview(text string) string {
	lim := s.a.Limits()
	if lim.MaxLength <= 0 || lim.Len(text) <= lim.MaxLength {
		return text
	}
	cut, _ := cutPoint(text, lim.MaxLength-2, lim)
	return text[:cut] + " …"
}

func (s *stream) flush() {
	s.mu.Lock()
	text := s.text
	s.mu.Unlock()
	p := s.preview(s.r.cfg.Redactor.Redact(text))
	if strings.TrimSpace(p) == "" || p == s.shown {
		return
	}
	ctx := s.r.baseCtx
	if q, _ := s.r.pace.queuedUntil(s.to); q || s.r.pace.blockedFor(s.to) > 0 {
		return // a 429 closed the chat: a later flush or the final edit shows it
	}
	if s.lost {
		return
	}
	if s.msgID == "" {
		s.cause = s.r.answering(s.c, s.j).msg.ID
		id, err := s.r.sendOne(ctx, s.a, s.to, adapters.Outgoing{Text: p, Cause: s.cause, Part: 1, Parts: 1, ReplyTo: s.quote.of(1)})
		if err != nil {
			return
		}
		if id == "" {
			s.lost = true
			return
		}
		s.msgID, s.shown = id, p
		return
	}
	if !s.r.pace.tryTake(s.a, s.to) {
		return
	}
	if err := s.r.editAttempt(ctx, s.a, s.ed, s.to, s.msgID, p); err != nil {
		var ra *adapters.RetryAfterError
		if errors.As(err, &ra) {
			s.r.pace.block(s.to, max(ra.After, time.Second))
		}
		s.r.log.Warn("streamed edit failed", "platform", s.a.Platform(), "chat", s.to.ChatID, "err", s.r.cfg.Redactor.Redact(err.Error()))
		return
	}
	s.shown = p
	s.edits++
}

// stop ends the edit loop and waits for it.
func (s *stream) stop() {
	close(s.quit)
	<-s.done
}

// finish delivers the final answer over the streamed message; it returns
// false when nothing was streamed, or the preview answers another message
// than the turn now does (the caller then replies normally).
// Call after stop.
func (s *stream) finish(final string) bool {
	if s.msgID == "" {
		return false
	}
	if s.r.answering(s.c, s.j).msg.ID != s.cause {
		// the turn went on answering another message (a typed /approve)
		// after the preview was sent: the answer goes to that message,
		// below the prompt, and the preview keeps what it showed
		return false
	}
	parts := splitFor(s.r.cfg.Redactor.Redact(final), s.a)
	outs := numbered(parts, s.cause, s.quote)
	ctx := s.r.baseCtx
	if parts[0] != s.shown {
		err := s.r.replacePreview(ctx, s.a, s.to, s.msgID, outs[0])
		var de *deferredError
		switch {
		case errors.As(err, &de):
			// the whole answer waits in the store, its first part as
			// the preview's edit
			if qerr := s.r.queue(ctx, s.to, outs, s.msgID, de.until); qerr != nil {
				s.r.log.Error("delivery failed", "platform", s.a.Platform(), "chat", s.to.ChatID, "err", s.r.cfg.Redactor.Redact(qerr.Error()))
				s.r.failureNotice(ctx, s.a, s.to, s.cause, qerr)
			}
			return true
		case err != nil:
			s.r.log.Error("delivery failed", "platform", s.a.Platform(), "chat", s.to.ChatID, "part", 1, "err", s.r.cfg.Redactor.Redact(err.Error()))
			s.r.failureNotice(ctx, s.a, s.to, s.cause, err)
			return true
		}
		s.edits++
	}
	s.r.sendParts(ctx, s.a, s.to, outs[1:])
	return true
}
