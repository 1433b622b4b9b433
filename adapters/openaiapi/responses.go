package openaiapi

// responses.go: the Responses API — POST /v1/responses (with
// previous_response_id continuing that response's session), GET and
// DELETE /v1/responses/{id}. Each stored response is kept in the kv
// table under "openai.response:<id>" with its session.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/heraldgw/herald/adapters"
)

const responseKey = "openai.response:"

type responseRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       string          `json:"instructions"`
	PreviousResponseID string          `json:"previous_response_id"`
	Store              *bool           `json:"store"`
	Stream             bool            `json:"stream"`
	User               string          `json:"user"`
}

type responseObject struct {
	ID                 string          `json:"id"`
	Object             string          `json:"object"`
	CreatedAt          int64           `json:"created_at"`
	Status             string          `json:"status"`
	Model              string          `json:"model"`
	Output             []outputItem    `json:"output"`
	OutputText         string          `json:"output_text"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Instructions       *string         `json:"instructions"`
	Error              json.RawMessage `json:"error"`
	IncompleteDetails  json.RawMessage `json:"incomplete_details"`
	Metadata           map[string]any  `json:"metadata"`
	Tools              []any           `json:"tools"`
	ParallelToolCalls  bool            `json:"parallel_tool_calls"`
	ToolChoice         string          `json:"tool_choice"`
	Usage              responseUsage   `json:"usage"`
}

type outputItem struct {
	Type    string       `json:"type"`
	ID      string       `json:"id"`
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []outputText `json:"content"`
}

type outputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

type responseUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// storedResponse is a kv value.
type storedResponse struct {
	SessionID string         `json:"session_id"`
	Response  responseObject `json:"response"`
}

// inputConversation reads "input": a string (the prompt), or an array of
// messages ({"role","content"}, "type":"message" or none) whose last is
// the user's prompt.
func inputConversation(req responseRequest) (conversation, error) {
	cv := conversation{user: req.User}
	raw := bytes.TrimSpace(req.Input)
	if len(raw) == 0 || string(raw) == "null" {
		return cv, badRequest("input", `"input" is required`)
	}
	var chat chatRequest
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return cv, badRequest("input", "input is not a valid string")
		}
		b, _ := json.Marshal(s)
		chat.Messages = []chatMessage{{Role: "user", Content: b}}
	} else {
		var items []struct {
			Type    string          `json:"type"`
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &items); err != nil {
			return cv, badRequest("input", "input must be a string or an array of messages")
		}
		for i, it := range items {
			if it.Type != "" && it.Type != "message" {
				return cv, badRequest(fmt.Sprintf("input[%d].type", i), fmt.Sprintf("input[%d] is a %q item; only messages are supported", i, it.Type))
			}
			chat.Messages = append(chat.Messages, chatMessage{Role: it.Role, Content: it.Content})
		}
	}
	if req.Instructions != "" {
		b, _ := json.Marshal(req.Instructions)
		chat.Messages = append([]chatMessage{{Role: "system", Content: b}}, chat.Messages...)
	}
	chat.User = req.User
	c, err := conversationOf(chat, "")
	if err != nil {
		// name the field as the Responses API has it
		if es, ok := err.(*errStatus); ok && es.err.Param != nil {
			p := strings.Replace(*es.err.Param, "messages", "input", 1)
			es.err.Param = &p
			es.err.Message = strings.ReplaceAll(es.err.Message, "messages", "input")
		}
		return cv, err
	}
	return c, nil
}

func (a *Adapter) createResponse(w http.ResponseWriter, r *http.Request) {
	var req responseRequest
	if !a.decode(w, r, &req, &req.Model) {
		return
	}
	cv, err := inputConversation(req)
	if err != nil {
		writeFailure(w, err)
		return
	}
	cv.session = requestSession(r)
	if req.PreviousResponseID != "" {
		prev, found, err := a.loadResponse(r, req.PreviousResponseID)
		if err != nil {
			writeFailure(w, err)
			return
		}
		if !found {
			writeFailure(w, failure(http.StatusNotFound, "invalid_request_error", "previous_response_not_found", "previous_response_id", fmt.Sprintf("no stored response %q", req.PreviousResponseID)))
			return
		}
		cv.session = prev.SessionID
	}
	const hint = "with previous_response_id set to this response's id"
	resp := a.newResponse(req)
	if req.Stream {
		t := a.begin(w, r, cv)
		if t == nil {
			return
		}
		defer t.release()
		a.streamResponse(r.Context(), w, t, resp, hint, req.Store == nil || *req.Store)
		return
	}
	content, u, ok := a.answer(w, r, cv, hint)
	if !ok {
		return
	}
	resp = completed(resp, content, u)
	if req.Store == nil || *req.Store {
		if err := a.saveResponse(r.Context(), w.Header().Get(SessionHeader), resp); err != nil {
			writeFailure(w, err)
			return
		}
	}
	adapters.WriteJSON(w, http.StatusOK, resp)
}

// newResponse is the response to req, before its output.
func (a *Adapter) newResponse(req responseRequest) responseObject {
	resp := responseObject{
		ID: newID("resp_"), Object: "response", CreatedAt: a.cfg.Now().Unix(), Status: "in_progress", Model: req.Model,
		Output: []outputItem{}, Error: json.RawMessage("null"), IncompleteDetails: json.RawMessage("null"),
		Metadata: map[string]any{}, Tools: []any{}, ToolChoice: "auto",
	}
	if req.PreviousResponseID != "" {
		resp.PreviousResponseID = &req.PreviousResponseID
	}
	if req.Instructions != "" {
		resp.Instructions = &req.Instructions
	}
	return resp
}

// completed is resp with its output, one assistant message, and usage.
func completed(resp responseObject, content string, u usage) responseObject {
	resp.Status = "completed"
	resp.Usage = responseUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	resp.Output = []outputItem{{Type: "message", ID: newID("msg_"), Status: "completed", Role: "assistant",
		Content: []outputText{{Type: "output_text", Text: content, Annotations: []any{}}}}}
	resp.OutputText = content
	return resp
}

func (a *Adapter) saveResponse(ctx context.Context, session string, resp responseObject) error {
	b, _ := json.Marshal(storedResponse{SessionID: session, Response: resp})
	if err := a.cfg.Store.SetKV(ctx, responseKey+resp.ID, string(b)); err != nil {
		return failure(http.StatusServiceUnavailable, "server_error", "store_error", "", "storing the response failed: "+err.Error())
	}
	return nil
}

// streamResponse answers with the Responses API's events:
// response.created, response.output_item.added,
// response.content_part.added, response.output_text.delta as the answer
// grows, then the .done events and response.completed (or an error
// event and response.failed).
func (a *Adapter) streamResponse(ctx context.Context, w http.ResponseWriter, t *turn, resp responseObject, hint string, store bool) {
	if id := t.sessionID(ctx); id != "" {
		w.Header().Set(SessionHeader, id)
	}
	if ctx.Err() != nil {
		return
	}
	out := startSSE(w)
	seq := 0
	emit := func(typ string, fields map[string]any) error {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		return out.event(typ, fields)
	}
	itemID := newID("msg_")
	item := outputItem{Type: "message", ID: itemID, Status: "in_progress", Role: "assistant", Content: []outputText{}}
	part := outputText{Type: "output_text", Text: "", Annotations: []any{}}
	at := map[string]any{"item_id": itemID, "output_index": 0, "content_index": 0}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range at {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	if emit("response.created", map[string]any{"response": resp}) != nil ||
		emit("response.output_item.added", map[string]any{"output_index": 0, "item": item}) != nil ||
		emit("response.content_part.added", with(map[string]any{"part": part})) != nil {
		return
	}
	var text strings.Builder
	fail, ok := t.stream(ctx, hint, func(delta string) error {
		text.WriteString(delta)
		return emit("response.output_text.delta", with(map[string]any{"delta": delta}))
	})
	if !ok {
		return
	}
	if fail != nil {
		emit("error", map[string]any{"code": fail.err.Code, "message": fail.err.Message, "param": fail.err.Param})
		resp.Status = "failed"
		resp.Error, _ = json.Marshal(map[string]string{"code": fail.err.Code, "message": fail.err.Message})
		emit("response.failed", map[string]any{"response": resp})
		return
	}
	resp = completed(resp, text.String(), t.finalUsage(ctx))
	resp.Output[0].ID = itemID
	part.Text = text.String()
	if emit("response.output_text.done", with(map[string]any{"text": part.Text})) != nil ||
		emit("response.content_part.done", with(map[string]any{"part": part})) != nil ||
		emit("response.output_item.done", map[string]any{"output_index": 0, "item": resp.Output[0]}) != nil {
		return
	}
	if store {
		if err := a.saveResponse(ctx, t.session, resp); err != nil {
			a.log.Error("streamed response not stored", "response", resp.ID, "err", err)
		}
	}
	emit("response.completed", map[string]any{"response": resp})
}

func (a *Adapter) loadResponse(r *http.Request, id string) (storedResponse, bool, error) {
	var sr storedResponse
	v, found, err := a.cfg.Store.KV(r.Context(), responseKey+id)
	if err != nil {
		return sr, false, failure(http.StatusInternalServerError, "server_error", "store_error", "", "reading the response failed: "+err.Error())
	}
	if !found {
		return sr, false, nil
	}
	if err := json.Unmarshal([]byte(v), &sr); err != nil {
		return sr, false, failure(http.StatusInternalServerError, "server_error", "store_error", "", fmt.Sprintf("the stored response %q is damaged: %v", id, err))
	}
	return sr, true, nil
}

func responseNotFound(id string) *errStatus {
	return failure(http.StatusNotFound, "invalid_request_error", "response_not_found", "id", fmt.Sprintf("no stored response %q", id))
}

func (a *Adapter) getResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	sr, found, err := a.loadResponse(r, id)
	if err != nil {
		writeFailure(w, err)
		return
	}
	if !found {
		writeFailure(w, responseNotFound(id))
		return
	}
	if sr.SessionID != "" {
		w.Header().Set(SessionHeader, sr.SessionID)
	}
	adapters.WriteJSON(w, http.StatusOK, sr.Response)
}

func (a *Adapter) deleteResponse(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	_, gone, err := a.cfg.Store.KV(r.Context(), responseKey+id)
	if err == nil && gone {
		err = a.cfg.Store.DeleteKV(r.Context(), responseKey+id)
	}
	if err != nil {
		writeFailure(w, failure(http.StatusInternalServerError, "server_error", "store_error", "", "deleting the response failed: "+err.Error()))
		return
	}
	if !gone {
		writeFailure(w, responseNotFound(id))
		return
	}
	adapters.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "object": "response", "deleted": true})
}
