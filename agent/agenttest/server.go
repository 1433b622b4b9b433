// Package agenttest is a fake OpenAI-compatible chat-completions server
// for tests: an httptest server on 127.0.0.1 that answers
// POST /v1/chat/completions, plain or as SSE when the request asks for a
// stream, from a script of replies, and records every request it got.
//
// It also answers POST /v1/audio/transcriptions (speech-to-text) with
// Server.Transcript and records each upload, and GET /v1/models with
// Server.Models. With Server.APIKey set, a request without that key is
// answered 401 as OpenAI answers a wrong key.
//
// Point go-openai (or agent.NewOpenAI) at Server.URL+"/v1". Replies are
// used in order; when the script is exhausted the server answers with the
// Default reply (plain text "ok"). A reply can be an HTTP error status, a
// raw malformed body, tool calls whose arguments arrive in fragments, or a
// stream that stalls until the client goes away.
package agenttest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ToolCall is one tool call in a scripted reply.
type ToolCall struct {
	ID   string
	Name string
	// Args is the JSON arguments string.
	Args string
}

// Reply is one scripted answer.
type Reply struct {
	// Content is the assistant's text.
	Content   string
	ToolCalls []ToolCall
	// Status, when not 0 or 200, answers with that HTTP status and an
	// OpenAI error body (Message, or a default text).
	Status  int
	Message string
	// Body, when set, is sent as is (with status 200 unless Status is
	// set): for malformed answers.
	Body string
	// ContentType is Body's Content-Type (default application/json): a
	// proxy's error page is text/html.
	ContentType string
	// Pieces splits the content and each tool call's arguments into that
	// many fragments when streaming (default 3).
	Pieces int
	// OmitIndex leaves "index" out of streamed tool-call deltas, as some
	// servers do.
	OmitIndex bool
	// Gates, when set, hold a stream before each piece of its content
	// after the first: piece i+1 is sent once Gates[i] is closed (or the
	// client went away), so a test sees the answer grow step by step.
	Gates []chan struct{}
	// StallAfter, when > 0, makes a stream stop after that many chunks
	// and hang until the client disconnects or the server closes.
	StallAfter int
	// Usage is reported in the response (and in the last stream chunk).
	Usage *openai.Usage
	// Func, when set, computes the reply from the request instead.
	Func func(req *Request) Reply
}

// Request is one request the server received.
type Request struct {
	Body          openai.ChatCompletionRequest
	Raw           []byte
	Authorization string
	Stream        bool
}

// Images returns the image_url parts of the request's user messages, in
// order (data URLs for images sent inline).
func (r *Request) Images() []string {
	var out []string
	for _, m := range r.Body.Messages {
		if m.Role != openai.ChatMessageRoleUser {
			continue
		}
		for _, p := range m.MultiContent {
			if p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil {
				out = append(out, p.ImageURL.URL)
			}
		}
	}
	return out
}

// UserText returns the text of the request's last user message (its text
// parts joined by newlines when it has parts).
func (r *Request) UserText() string {
	for i := len(r.Body.Messages) - 1; i >= 0; i-- {
		m := r.Body.Messages[i]
		if m.Role != openai.ChatMessageRoleUser {
			continue
		}
		if len(m.MultiContent) == 0 {
			return m.Content
		}
		var parts []string
		for _, p := range m.MultiContent {
			if p.Type == openai.ChatMessagePartTypeText {
				parts = append(parts, p.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// Transcription is one POST /v1/audio/transcriptions the server received.
type Transcription struct {
	Model         string
	FileName      string
	Data          []byte
	Authorization string
}

// LastMessage returns the request's last message.
func (r *Request) LastMessage() openai.ChatCompletionMessage {
	if len(r.Body.Messages) == 0 {
		return openai.ChatCompletionMessage{}
	}
	return r.Body.Messages[len(r.Body.Messages)-1]
}

// Server is the fake endpoint.
type Server struct {
	// URL is the server's base, e.g. http://127.0.0.1:1234; the API is
	// under URL+"/v1".
	URL string
	// Default answers once the script is used up.
	Default Reply
	// Transcript is the text POST /v1/audio/transcriptions answers
	// (default "hello from the voice note").
	Transcript string
	// Models is what GET /v1/models lists (default: gpt-4o-mini).
	Models []string
	// APIKey, when set, is the only key accepted ("Authorization: Bearer
	// <APIKey>"); other requests get 401 invalid_api_key.
	APIKey string

	t    testing.TB
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []*Request
	stt  []Transcription
	next []Reply
	gone chan struct{}
	once sync.Once
	// Stalled receives a value each time a stream starts stalling.
	Stalled chan struct{}
}

// New starts a server with a script, closed when the test ends.
func New(t testing.TB, script ...Reply) *Server {
	s := &Server{t: t, Default: Reply{Content: "ok"}, Transcript: "hello from the voice note", Models: []string{"gpt-4o-mini"}, next: script, gone: make(chan struct{}), Stalled: make(chan struct{}, 16)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// BaseURL is what a client's base URL should be.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Push appends replies to the script.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	s.next = append(s.next, r...)
	s.mu.Unlock()
}

// Requests returns the requests received so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

// Close releases stalled streams and stops the server. It waits at most
// 5 s for running handlers: a Reply.Func that blocks (say, on a channel a
// failed test never closed) is reported, not waited for, so the test's
// own failure shows instead of a hang.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.gone)
		done := make(chan struct{})
		go func() {
			s.srv.Close()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			s.t.Logf("agenttest: a handler is still running after Close (a Reply.Func that blocks?); not waiting for it")
		}
	})
}

// Transcriptions returns the transcription requests received so far.
func (s *Server) Transcriptions() []Transcription {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Transcription(nil), s.stt...)
}

// transcribe answers POST /audio/transcriptions (multipart: file, model)
// with {"text": Transcript}.
func (s *Server) transcribe(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		writeError(w, http.StatusBadRequest, "bad multipart body: "+err.Error())
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		writeError(w, http.StatusBadRequest, "no file part: "+err.Error())
		return
	}
	data, _ := io.ReadAll(f)
	f.Close()
	s.mu.Lock()
	s.stt = append(s.stt, Transcription{Model: r.FormValue("model"), FileName: hdr.Filename, Data: data, Authorization: r.Header.Get("Authorization")})
	text := s.Transcript
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"text": text})
}

// models answers GET /models with Models, in OpenAI's list shape.
func (s *Server) models(w http.ResponseWriter) {
	s.mu.Lock()
	data := make([]map[string]any, 0, len(s.Models))
	for _, m := range s.Models {
		data = append(data, map[string]any{"id": m, "object": "model", "owned_by": "agenttest"})
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	key := s.APIKey
	s.mu.Unlock()
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "Incorrect API key provided.", "type": "invalid_request_error", "code": "invalid_api_key"}})
		return
	}
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		s.models(w)
		return
	}
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/audio/transcriptions") {
		s.transcribe(w, r)
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	req := &Request{Raw: raw, Authorization: r.Header.Get("Authorization")}
	if err := json.Unmarshal(raw, &req.Body); err != nil {
		writeError(w, http.StatusBadRequest, "bad request body: "+err.Error())
		return
	}
	req.Stream = req.Body.Stream
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	rep := s.Default
	if len(s.next) > 0 {
		rep, s.next = s.next[0], s.next[1:]
	}
	s.mu.Unlock()
	if rep.Func != nil {
		rep = rep.Func(req)
	}
	switch {
	case rep.Body != "":
		st := rep.Status
		if st == 0 {
			st = http.StatusOK
		}
		w.Header().Set("Content-Type", cmp.Or(rep.ContentType, "application/json"))
		w.WriteHeader(st)
		io.WriteString(w, rep.Body)
	case rep.Status != 0 && rep.Status != http.StatusOK:
		msg := rep.Message
		if msg == "" {
			msg = http.StatusText(rep.Status)
		}
		writeError(w, rep.Status, msg)
	case req.Stream:
		s.stream(w, r, req, rep)
	default:
		s.plain(w, req, rep)
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	typ := "server_error"
	if status == http.StatusTooManyRequests {
		typ = "rate_limit_exceeded"
	}
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
}

func (s *Server) plain(w http.ResponseWriter, req *Request, rep Reply) {
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		var calls []map[string]any
		for _, tc := range rep.ToolCalls {
			calls = append(calls, map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": tc.Args}})
		}
		msg["tool_calls"] = calls
		if rep.Content == "" {
			msg["content"] = nil
		}
		finish = "tool_calls"
	}
	body := map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", len(s.Requests())), "object": "chat.completion", "created": 1, "model": modelOf(req),
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
	}
	if rep.Usage != nil {
		body["usage"] = rep.Usage
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

func modelOf(req *Request) string {
	if req.Body.Model != "" {
		return req.Body.Model
	}
	return "fake"
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *Request, rep Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	n := 0
	send := func(choices []any, usage *openai.Usage) bool {
		if rep.StallAfter > 0 && n == rep.StallAfter {
			if fl != nil {
				fl.Flush()
			}
			select {
			case s.Stalled <- struct{}{}:
			default:
			}
			select {
			case <-r.Context().Done():
			case <-s.gone:
			}
			return false
		}
		n++
		chunk := map[string]any{"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 1, "model": modelOf(req), "choices": choices}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}
	}
	pieces := rep.Pieces
	if pieces <= 0 {
		pieces = 3
	}
	if !send(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil) {
		return
	}
	for i, p := range Split(rep.Content, pieces) {
		if i > 0 && i <= len(rep.Gates) {
			if fl != nil {
				fl.Flush()
			}
			select {
			case <-rep.Gates[i-1]:
			case <-r.Context().Done():
				return
			case <-s.gone:
				return
			}
		}
		if !send(delta(map[string]any{"content": p}, nil), nil) {
			return
		}
	}
	for i, tc := range rep.ToolCalls {
		first := map[string]any{"id": tc.ID, "type": "function", "function": map[string]any{"name": tc.Name, "arguments": ""}}
		if !rep.OmitIndex {
			first["index"] = i
		}
		if !send(delta(map[string]any{"tool_calls": []any{first}}, nil), nil) {
			return
		}
		for _, frag := range Split(tc.Args, pieces) {
			d := map[string]any{"function": map[string]any{"arguments": frag}}
			if !rep.OmitIndex {
				d["index"] = i
			}
			if !send(delta(map[string]any{"tool_calls": []any{d}}, nil), nil) {
				return
			}
		}
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if !send(delta(map[string]any{}, finish), nil) {
		return
	}
	if req.Body.StreamOptions != nil && req.Body.StreamOptions.IncludeUsage {
		u := rep.Usage
		if u == nil {
			u = &openai.Usage{}
		}
		if !send([]any{}, u) {
			return
		}
	}
	io.WriteString(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

// Split cuts s into at most n pieces of about equal size (on rune
// boundaries); an empty s gives no pieces.
func Split(s string, n int) []string {
	if s == "" {
		return nil
	}
	rs := []rune(s)
	if n > len(rs) {
		n = len(rs)
	}
	var out []string
	size := (len(rs) + n - 1) / n
	for i := 0; i < len(rs); i += size {
		out = append(out, string(rs[i:min(i+size, len(rs))]))
	}
	return out
}
