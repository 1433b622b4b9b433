package agent

// transcript.go: each session's conversation as JSON lines in Claude
// Code's transcript format, for hooks written for Claude Code (a Stop hook
// reads transcript_path). One file per session, sub-agents included,
// written as the messages happen; every string goes through the redactor.

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/hooks"
)

// transcriptLine is one line of a Claude Code transcript.
type transcriptLine struct {
	ParentUUID  *string `json:"parentUuid"`
	IsSidechain bool    `json:"isSidechain"`
	UserType    string  `json:"userType"`
	Cwd         string  `json:"cwd"`
	SessionID   string  `json:"sessionId"`
	// AgentID is the sub-agent's session, in a sub-agent's transcript.
	AgentID       string            `json:"agentId,omitempty"`
	Type          string            `json:"type"`
	Message       transcriptMessage `json:"message"`
	UUID          string            `json:"uuid"`
	Timestamp     string            `json:"timestamp"`
	ToolUseResult any               `json:"toolUseResult,omitempty"`
}

type transcriptMessage struct {
	Role  string `json:"role"`
	Model string `json:"model,omitempty"`
	// Content is the user's text as a string, or a list of blocks: text
	// and tool_use for the assistant, tool_result for tool results.
	Content any `json:"content"`
}

// transcripts appends lines to the files of one directory and remembers
// each session's last line, the parent of its next.
type transcripts struct {
	mu   sync.Mutex
	last map[string]string // file → uuid of its last line
}

// maxRemembered bounds the remembered last lines; past it they are
// forgotten and read back from the files' ends.
const maxRemembered = 4096

// TranscriptPath is the transcript file of a session ("" when the agent
// writes none, or the id cannot name a file).
func (a *Agent) TranscriptPath(sessionID string) string {
	if a.TranscriptDir == "" || !safeFileName(sessionID) {
		return ""
	}
	return filepath.Join(a.TranscriptDir, sessionID+".jsonl")
}

func safeFileName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 200 {
		return false
	}
	return !strings.ContainsAny(s, `/\`+"\x00")
}

// transcribe appends one message of the run's session to its transcript.
// A failure is logged, never the turn's.
func (r *runState) transcribe(m openai.ChatCompletionMessage) {
	a := r.agent
	path := a.TranscriptPath(r.turn.SessionID)
	if path == "" {
		return
	}
	line := transcriptLine{UserType: "external", Cwd: r.cwd(), SessionID: r.turn.SessionID, Type: "user",
		Message: transcriptMessage{Role: "user"}, Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")}
	if r.turn.ParentSessionID != "" {
		line.IsSidechain, line.SessionID, line.AgentID = true, r.turn.ParentSessionID, r.turn.SessionID
	}
	switch m.Role {
	case openai.ChatMessageRoleUser:
		line.Message.Content = m.Content
	case openai.ChatMessageRoleAssistant:
		line.Type, line.Message.Role, line.Message.Model = "assistant", "assistant", a.ModelName
		line.Message.Content = assistantBlocks(m)
	case openai.ChatMessageRoleTool:
		failure := toolFailure(m.Name, m.Content)
		line.Message.Content = []map[string]any{{"type": "tool_result", "tool_use_id": m.ToolCallID, "content": m.Content, "is_error": failure != ""}}
		if failure != "" {
			line.ToolUseResult = "Error: " + failure
		} else {
			line.ToolUseResult = hooks.ClaudeToolResponse(m.Name, r.toolArgs[m.ToolCallID], m.Content, r.cwd())
		}
	default:
		return
	}
	if err := a.transcripts.append(path, &line, a.Redactor); err != nil {
		a.logger().Warn("could not write the session transcript", "session_id", r.turn.SessionID, "err", err)
	}
}

func assistantBlocks(m openai.ChatCompletionMessage) []map[string]any {
	var blocks []map[string]any
	if m.Content != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": m.Content})
	}
	for _, tc := range m.ToolCalls {
		input := map[string]any{}
		json.Unmarshal([]byte(tc.Function.Arguments), &input)
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": tc.ID, "name": hooks.ClaudeToolName(tc.Function.Name), "input": input})
	}
	return blocks
}

// append writes line (redacted) at the end of the file at path, chained
// to the file's last line; the file is 0600 in a 0700 directory.
func (t *transcripts) append(path string, line *transcriptLine, red *herald.Redactor) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	parent, ok := t.last[path]
	if !ok {
		parent = lastUUID(f)
	}
	if parent != "" {
		line.ParentUUID = &parent
	}
	line.UUID = newUUID()
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	b = hooks.RedactJSON(red, b)
	if _, err := f.Write(append(b, '\n')); err != nil {
		return err
	}
	if t.last == nil || len(t.last) >= maxRemembered {
		t.last = map[string]string{}
	}
	t.last[path] = line.UUID
	return nil
}

// lastUUID reads the uuid of a transcript's last line ("" for none).
func lastUUID(f *os.File) string {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return ""
	}
	const tail = 256 << 10
	off := max(st.Size()-tail, 0)
	buf, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return ""
	}
	buf = bytes.TrimRight(buf, "\n")
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[i+1:]
	}
	var l struct {
		UUID string `json:"uuid"`
	}
	json.Unmarshal(buf, &l)
	return l.UUID
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// PruneTranscripts deletes the transcripts in TranscriptDir not written
// since before, and returns how many it deleted (Claude Code keeps its
// own 30 days).
func (a *Agent) PruneTranscripts(before time.Time) (int, error) {
	if a.TranscriptDir == "" {
		return 0, nil
	}
	entries, err := os.ReadDir(a.TranscriptDir)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	a.transcripts.mu.Lock()
	defer a.transcripts.mu.Unlock()
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(before) {
			continue
		}
		p := filepath.Join(a.TranscriptDir, e.Name())
		if err := os.Remove(p); err == nil {
			delete(a.transcripts.last, p)
			n++
		}
	}
	return n, nil
}
