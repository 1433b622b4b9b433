package telegramtest

// flood.go: what flood control is tested with: slow answers and
// deleteMessage.

import (
	"net/http"
	"net/http/httptest"
	"time"
)

// Slow makes the next n requests of method take effect at once (a
// message is sent and recorded) but hold their answer for d, or until the
// client gives up: a slow network, where a client's timeout does not mean
// the message was not sent.
func (s *Server) Slow(method string, n int, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slow == nil {
		s.slow = map[string][]time.Duration{}
	}
	for range n {
		s.slow[method] = append(s.slow[method], d)
	}
}

func (s *Server) takeSlow(method string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.slow[method]
	if len(q) == 0 {
		return 0
	}
	s.slow[method] = q[1:]
	return q[0]
}

// holdAnswer writes the recorded answer to w after d (nothing when the
// client went away first).
func holdAnswer(w http.ResponseWriter, r *http.Request, rec *httptest.ResponseRecorder, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return
	case <-t.C:
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// deleteMessage removes a message the bot sent.
func (s *Server) deleteMessage(w http.ResponseWriter, r *http.Request) {
	chat, id := r.Form.Get("chat_id"), r.Form.Get("message_id")
	s.mu.Lock()
	_, ok := s.texts[chat+"\x00"+id]
	delete(s.texts, chat+"\x00"+id)
	s.mu.Unlock()
	if !ok {
		writeErr(w, Failure{Code: 400, Description: "Bad Request: message to delete not found"})
		return
	}
	s.record(Call{Method: "deleteMessage", ChatID: chat, MessageID: id, Form: r.Form})
	writeOK(w, true)
}
