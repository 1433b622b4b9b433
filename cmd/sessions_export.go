package cmd

// sessions_export.go: a stored session as a readable Markdown transcript
// (herald sessions show and export --format md) or as JSON, the session
// and its stored messages (export --format json). Both go through the
// redactor: a secret a user pasted into a chat stays out of the export.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/sessions"
)

// sessionTimeLayout is how sessions commands print times (local time).
const sessionTimeLayout = "2006-01-02 15:04:05 -07:00"

type transcriptOptions struct {
	// maxToolLines cuts a tool's output after this many lines (0: never)
	maxToolLines int
	// files are listed under the header (show)
	files []string
}

// storedToolCall is one entry of a message's tool_calls, as the model
// sent them.
type storedToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func writeMarkdown(w io.Writer, s *sessions.Session, msgs []sessions.Message, red *herald.Redactor, o transcriptOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Session %s\n\n", s.ID)
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(&b, "- %s: %s\n", name, value)
		}
	}
	if s.Title != "" {
		field("Title", s.Title)
	}
	field("Platform", s.Platform)
	chat := s.ChatID
	if s.ChatType != "" {
		chat += " (" + s.ChatType + ")"
	}
	if s.ThreadID != "" {
		chat += ", thread " + s.ThreadID
	}
	field("Chat", chat)
	user := s.UserID
	if s.UserName != "" {
		user = s.UserName + " (" + s.UserID + ")"
	}
	field("User", user)
	field("Model", s.Model)
	field("Started", s.CreatedAt.Format(sessionTimeLayout))
	field("Last message", s.UpdatedAt.Format(sessionTimeLayout))
	state := "open"
	if s.EndedAt != nil {
		state = "ended " + s.EndedAt.Format(sessionTimeLayout)
		if s.EndReason != "" {
			state += " (" + s.EndReason + ")"
		}
	}
	field("State", state)
	field("Messages", fmt.Sprint(len(msgs)))
	for _, f := range o.files {
		field("File", f)
	}
	for _, m := range msgs {
		writeMessage(&b, m, o)
	}
	_, err := io.WriteString(w, red.Redact(b.String()))
	return err
}

func writeMessage(b *strings.Builder, m sessions.Message, o transcriptOptions) {
	at := m.CreatedAt.Format(sessionTimeLayout)
	switch m.Role {
	case "tool":
		name := m.ToolName
		if name == "" {
			name = "tool"
		}
		fmt.Fprintf(b, "\n## Tool result: %s", name)
		if m.ToolCallID != "" {
			fmt.Fprintf(b, " (%s)", m.ToolCallID)
		}
		fmt.Fprintf(b, " · %s\n\n", at)
		out, cut := m.Content, 0
		if o.maxToolLines > 0 {
			out, cut = firstLines(out, o.maxToolLines)
		}
		writeFenced(b, "", out)
		if cut > 0 {
			fmt.Fprintf(b, "(%d more lines: herald sessions export %s)\n", cut, m.SessionID)
		}
		return
	case "user", "assistant", "system":
		fmt.Fprintf(b, "\n## %s · %s\n", strings.ToUpper(m.Role[:1])+m.Role[1:], at)
	default:
		fmt.Fprintf(b, "\n## %s · %s\n", m.Role, at)
	}
	if m.Content != "" {
		fmt.Fprintf(b, "\n%s\n", strings.TrimRight(m.Content, "\n"))
	}
	if m.ToolCalls == "" {
		return
	}
	var calls []storedToolCall
	if err := json.Unmarshal([]byte(m.ToolCalls), &calls); err != nil {
		fmt.Fprintf(b, "\nTool calls (as stored):\n\n")
		writeFenced(b, "json", m.ToolCalls)
		return
	}
	for _, c := range calls {
		fmt.Fprintf(b, "\nTool call: %s", c.Function.Name)
		if c.ID != "" {
			fmt.Fprintf(b, " (%s)", c.ID)
		}
		b.WriteString("\n\n")
		writeFenced(b, "json", indentJSON(c.Function.Arguments))
	}
}

// writeFenced writes text in a code fence longer than any run of
// backticks inside it, so that the text cannot close it.
func writeFenced(b *strings.Builder, lang, text string) {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	fmt.Fprintf(b, "%s%s\n%s\n%s\n", fence, lang, strings.TrimRight(text, "\n"), fence)
}

// firstLines is text's first n lines and how many lines were left out.
func firstLines(text string, n int) (string, int) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) <= n {
		return text, 0
	}
	return strings.Join(lines[:n], "\n"), len(lines) - n
}

// indentJSON indents a JSON text, or returns it as it is when it is not.
func indentJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return s
	}
	return string(out)
}

// exportedMessage is a stored message in the JSON export: tool_calls as
// the JSON the model sent rather than a string holding it.
type exportedMessage struct {
	sessions.Message
	ToolCalls json.RawMessage `json:"tool_calls,omitempty"`
}

func writeJSONExport(w io.Writer, s *sessions.Session, msgs []sessions.Message, red *herald.Redactor) error {
	// each text is redacted before encoding, so that the JSON stays valid
	sess := *s
	sess.Title = red.Redact(sess.Title)
	out := struct {
		Session  *sessions.Session `json:"session"`
		Messages []exportedMessage `json:"messages"`
	}{Session: &sess, Messages: []exportedMessage{}}
	for _, m := range msgs {
		m.Content = red.Redact(m.Content)
		em := exportedMessage{Message: m}
		if calls := red.Redact(m.ToolCalls); calls != "" {
			if json.Valid([]byte(calls)) {
				em.ToolCalls = json.RawMessage(calls)
			} else {
				// not JSON (or no longer, once redacted): kept as a string
				em.ToolCalls, _ = json.Marshal(calls)
			}
		}
		out.Messages = append(out.Messages, em)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
