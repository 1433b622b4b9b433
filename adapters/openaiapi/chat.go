package openaiapi

// chat.go: GET /v1/models and POST /v1/chat/completions.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// SessionHeader names the session a request continues and an answer ran
// in; HermesSessionHeader is Hermes' name for it, read too.
const (
	SessionHeader       = "X-Herald-Session-Id"
	HermesSessionHeader = "X-Hermes-Session-Id"
)

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// modelNames are the names a request may use: "herald" and the
// configured model.
func (a *Adapter) modelNames() []string {
	names := []string{DefaultModel}
	if a.cfg.Model != "" && a.cfg.Model != DefaultModel {
		names = append(names, a.cfg.Model)
	}
	return names
}

func (a *Adapter) modelObject(name string) modelObject {
	return modelObject{ID: name, Object: "model", Created: 0, OwnedBy: "herald"}
}

func (a *Adapter) models(w http.ResponseWriter, r *http.Request) {
	var data []modelObject
	for _, n := range a.modelNames() {
		data = append(data, a.modelObject(n))
	}
	adapters.WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (a *Adapter) model(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !slices.Contains(a.modelNames(), id) {
		writeError(w, http.StatusNotFound, a.unknownModel(id, "").err)
		return
	}
	adapters.WriteJSON(w, http.StatusOK, a.modelObject(id))
}

func (a *Adapter) unknownModel(name, param string) *errStatus {
	e := failure(http.StatusNotFound, "invalid_request_error", "model_not_found", param,
		fmt.Sprintf("the model %q does not exist here; use one of: %s", name, strings.Join(a.modelNames(), ", ")))
	return e
}

// decode reads a request body into v and checks the model it names
// (*model, filled by the decoding); on failure it has answered the
// request with the error.
func (a *Adapter) decode(w http.ResponseWriter, r *http.Request, v any, model *string) bool {
	err := readBody(w, r, v)
	if err == nil {
		err = a.checkModel(*model)
	}
	if err != nil {
		writeFailure(w, err)
		return false
	}
	return true
}

// checkModel requires a known model name.
func (a *Adapter) checkModel(name string) error {
	if name == "" {
		return badRequest("model", `"model" is required (use "herald")`)
	}
	if !slices.Contains(a.modelNames(), name) {
		return a.unknownModel(name, "model")
	}
	return nil
}

// MaxUserLength bounds "user", in bytes (as the local platform bounds
// its ids).
const MaxUserLength = 256

type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User string `json:"user"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type chatChoice struct {
	Index        int             `json:"index"`
	Message      *outMessage     `json:"message,omitempty"`
	Delta        *outMessage     `json:"delta,omitempty"`
	FinishReason *string         `json:"finish_reason"`
	Logprobs     json.RawMessage `json:"logprobs"`
}

type outMessage struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *usage       `json:"usage,omitempty"`
}

// conversationOf reads a chat request's messages: the last is the
// user's prompt, the ones before it the history of a new chat.
func conversationOf(req chatRequest, session string) (conversation, error) {
	cv := conversation{session: session, user: req.User}
	if len(req.User) > MaxUserLength {
		return cv, badRequest("user", fmt.Sprintf(`"user" is %d bytes long; at most %d are allowed`, len(req.User), MaxUserLength))
	}
	if len(req.Messages) == 0 {
		return cv, badRequest("messages", `"messages" must hold at least one message`)
	}
	for i, m := range req.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		text, err := contentText(m.Content, param+".content")
		if err != nil {
			return cv, err
		}
		role := m.Role
		switch role {
		case "system", "user", "assistant":
		case "developer":
			role = "system"
		case "tool", "function":
			continue // a tool result without its call means nothing here
		case "":
			return cv, badRequest(param+".role", param+` has no "role"`)
		default:
			return cv, badRequest(param+".role", fmt.Sprintf("%s.role %q is not one of system, developer, user, assistant, tool", param, m.Role))
		}
		if i == len(req.Messages)-1 {
			if role != "user" {
				return cv, badRequest(param+".role", fmt.Sprintf("the last message must be the user's (%s is %q)", param, m.Role))
			}
			if strings.TrimSpace(text) == "" {
				return cv, badRequest(param+".content", param+" has no text")
			}
			cv.prompt = text
			continue
		}
		if strings.TrimSpace(text) != "" {
			cv.history = append(cv.history, turnMessage{role: role, text: text})
		}
	}
	return cv, nil
}

// hintedSession finds the session an approval hint named.
var hintedSession = regexp.MustCompile(`with the header ` + SessionHeader + `: ([A-Za-z0-9_.:-]+)\.\)`)

// promptedSession lets a chat front end that resends the whole
// conversation and cannot set headers answer an approval: when the last
// message is /approve… or /deny and the answer before it ended with an
// approval hint, the request continues the session the hint names.
func promptedSession(cv conversation) string {
	name, _ := herald.ParseCommand(cv.prompt)
	if name != "approve" && name != "deny" || len(cv.history) == 0 {
		return ""
	}
	last := cv.history[len(cv.history)-1]
	if last.role != "assistant" {
		return ""
	}
	if m := hintedSession.FindStringSubmatch(last.text); m != nil {
		return m[1]
	}
	return ""
}

// requestSession is the session named by the request's headers.
func requestSession(r *http.Request) string {
	if s := strings.TrimSpace(r.Header.Get(SessionHeader)); s != "" {
		return s
	}
	return strings.TrimSpace(r.Header.Get(HermesSessionHeader))
}

func (a *Adapter) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if !a.decode(w, r, &req, &req.Model) {
		return
	}
	cv, err := conversationOf(req, requestSession(r))
	if err != nil {
		writeFailure(w, err)
		return
	}
	if cv.session == "" {
		cv.session = promptedSession(cv)
	}
	c := chatCompletion{ID: newID("chatcmpl-"), Created: a.cfg.Now().Unix(), Model: req.Model}
	hint := "with the header " + SessionHeader + ": {session}"
	if req.Stream {
		t := a.begin(w, r, cv)
		if t == nil {
			return
		}
		defer t.release()
		a.streamChat(r.Context(), w, t, c, hint, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	content, u, ok := a.answer(w, r, cv, hint)
	if !ok {
		return
	}
	stop := "stop"
	c.Object = "chat.completion"
	c.Choices = []chatChoice{{Message: &outMessage{Role: "assistant", Content: &content}, FinishReason: &stop}}
	c.Usage = &u
	adapters.WriteJSON(w, http.StatusOK, c)
}

// streamChat answers with chat.completion.chunks as the gateway sends
// and edits the answer, then a chunk with the finish reason and [DONE].
// A failure after the stream began is an error event before [DONE].
func (a *Adapter) streamChat(ctx context.Context, w http.ResponseWriter, t *turn, c chatCompletion, hint string, withUsage bool) {
	if id := t.sessionID(ctx); id != "" {
		w.Header().Set(SessionHeader, id)
	}
	if ctx.Err() != nil {
		return
	}
	c.Object = "chat.completion.chunk"
	out := startSSE(w)
	chunk := func(delta outMessage, finish *string) error {
		c.Choices = []chatChoice{{Delta: &delta, FinishReason: finish}}
		return out.event("", c)
	}
	if chunk(outMessage{Role: "assistant", Content: new(string)}, nil) != nil {
		return
	}
	fail, ok := t.stream(ctx, hint, func(text string) error { return chunk(outMessage{Content: &text}, nil) })
	if !ok {
		return
	}
	if fail != nil {
		out.event("", map[string]apiError{"error": fail.err})
		out.done()
		return
	}
	stop := "stop"
	if chunk(outMessage{}, &stop) != nil {
		return
	}
	if withUsage {
		u := t.finalUsage(ctx)
		c.Choices = []chatChoice{}
		c.Usage = &u
		out.event("", c)
	}
	out.done()
}
