package openaiapi

// wire.go: OpenAI's shapes on the wire — errors, request bodies and
// message contents, Server-Sent Events.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/heraldgw/herald/adapters"
)

// MaxBody bounds a request body (a conversation resent whole).
const MaxBody = 4 << 20

type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

func writeError(w http.ResponseWriter, status int, e apiError) {
	adapters.WriteJSON(w, status, map[string]apiError{"error": e})
}

func writeFailure(w http.ResponseWriter, err error) {
	var es *errStatus
	if errors.As(err, &es) {
		writeError(w, es.status, es.err)
		return
	}
	writeError(w, http.StatusInternalServerError, apiError{Message: err.Error(), Type: "server_error", Code: "internal_error"})
}

func badRequest(param, msg string) *errStatus {
	return failure(http.StatusBadRequest, "invalid_request_error", "invalid_request", param, msg)
}

// readBody reads one JSON object into v, strictly enough to name what is
// wrong, and lifts the listener's read deadline: an answer may take
// longer than a body may take to arrive.
func readBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return failure(http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large", "", fmt.Sprintf("request body is over %d bytes", MaxBody))
		}
		return badRequest("", "reading the request body: "+err.Error())
	}
	http.NewResponseController(w).SetReadDeadline(time.Time{})
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return badRequest(te.Field, fmt.Sprintf("%q must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value))
		}
		return badRequest("", "the body is not a valid JSON object: "+err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("", "the body has data after its JSON object")
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "int", "int64", "float64":
		return "a number"
	}
	return goKind
}

// contentText reads a message content: a string, null, or an array of
// text parts ({"type":"text"|"input_text"|"output_text","text"}). Other
// parts (images, audio, files) are refused by name.
func contentText(raw json.RawMessage, param string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", badRequest(param, fmt.Sprintf("%s is not a valid string: %v", param, err))
		}
		return s, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest(param, param+" must be a string or an array of content parts")
	}
	var b bytes.Buffer
	for i, p := range parts {
		switch p.Type {
		case "text", "input_text", "output_text":
			if p.Text == nil {
				return "", badRequest(fmt.Sprintf("%s[%d].text", param, i), fmt.Sprintf("%s[%d] has no \"text\"", param, i))
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(*p.Text)
		default:
			return "", badRequest(fmt.Sprintf("%s[%d].type", param, i), fmt.Sprintf("%s[%d] is a %q part; only text parts are supported", param, i, p.Type))
		}
	}
	return b.String(), nil
}

// sse writes Server-Sent Events.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, rc: http.NewResponseController(w)}
	s.rc.Flush()
	return s
}

// event writes one event (event "" is a bare data line) and flushes.
func (s *sse) event(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *sse) done() {
	io.WriteString(s.w, "data: [DONE]\n\n")
	s.rc.Flush()
}

// deltas turns the messages sent so far into the text not yet streamed:
// a message's new text after what was streamed of it, a new message after
// a blank line. A message whose text no longer starts with what was
// streamed (a hook rewrote the answer) is streamed again whole, after a
// blank line: a stream cannot take text back.
type deltas struct {
	streamed map[string]string
	any      bool
}

func (d *deltas) next(msgs []sentText) string {
	if d.streamed == nil {
		d.streamed = map[string]string{}
	}
	var b bytes.Buffer
	for _, m := range msgs {
		old, seen := d.streamed[m.id]
		switch {
		case seen && m.text == old:
			continue
		case seen && len(m.text) > len(old) && m.text[:len(old)] == old:
			b.WriteString(m.text[len(old):])
		default:
			if m.text == "" {
				continue
			}
			if d.any || b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(m.text)
		}
		d.streamed[m.id] = m.text
		d.any = true
	}
	return b.String()
}
