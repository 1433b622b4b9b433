package agent

import (
	"context"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/heraldgw/herald/hooks"
)

// Token estimates are characters / 4, as Hermes' approx_input_tokens:
// good enough to stay clear of the limit, with no tokenizer.

func messageChars(m *openai.ChatCompletionMessage) int {
	n := len(m.Content) + len(m.Name) + len(m.ToolCallID) + len(m.Role)
	for _, p := range m.MultiContent {
		n += len(p.Text)
	}
	for _, tc := range m.ToolCalls {
		n += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments)
	}
	return n
}

func estimateTokens(msgs []openai.ChatCompletionMessage, extraChars int) int {
	n := extraChars
	for i := range msgs {
		n += messageChars(&msgs[i]) + 16 // per-message overhead
	}
	return n / 4
}

// droppedToolOutput replaces an old tool result cut to fit the window.
const droppedToolOutput = `{"note":"this tool output was removed to fit the context window"}`

// trimReport says what fitWindow dropped.
type trimReport struct {
	ToolOutputs  int
	Turns        int
	Messages     int
	TokensBefore int
	TokensAfter  int
	StillOver    bool
	// DropFrom and DropTo are the messages dropped whole: msgs[DropFrom:DropTo].
	DropFrom, DropTo int
}

// fitWindow returns msgs cut to about budget tokens, without touching the
// caller's slice: first old tool outputs are replaced by a note (oldest
// first, never those of the latest model answer), then the oldest turns
// are dropped whole (a user message and everything up to the next one),
// never the system prompt (index 0 when hasSystem) nor anything from the
// current user message (index cur) on.
func fitWindow(msgs []openai.ChatCompletionMessage, hasSystem bool, cur, budget, extraChars int) ([]openai.ChatCompletionMessage, trimReport) {
	rep := trimReport{TokensBefore: estimateTokens(msgs, extraChars)}
	rep.TokensAfter = rep.TokensBefore
	if budget <= 0 || rep.TokensBefore <= budget {
		return msgs, rep
	}
	out := append([]openai.ChatCompletionMessage(nil), msgs...)
	total := rep.TokensBefore * 4
	// the results of the latest model answer stay: the model is about to
	// read them
	lastAssistant := -1
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == openai.ChatMessageRoleAssistant {
			lastAssistant = i
			break
		}
	}
	for i := range out {
		if total/4 <= budget {
			break
		}
		if i >= lastAssistant && lastAssistant >= 0 {
			break
		}
		if out[i].Role != openai.ChatMessageRoleTool || out[i].Content == droppedToolOutput {
			continue
		}
		total -= len(out[i].Content) - len(droppedToolOutput)
		out[i].Content = droppedToolOutput
		rep.ToolOutputs++
	}
	start := 0
	if hasSystem {
		start = 1
	}
	end := start // messages [start, end) are dropped
	for total/4 > budget && end < cur {
		// one turn: from end up to (not including) the next user message
		j := end + 1
		for j < cur && out[j].Role != openai.ChatMessageRoleUser {
			j++
		}
		for k := end; k < j; k++ {
			total -= messageChars(&out[k]) + 16
		}
		rep.Turns++
		end = j
	}
	if end > start {
		rep.Messages, rep.DropFrom, rep.DropTo = end-start, start, end
		out = append(out[:start:start], out[end:]...)
	}
	rep.TokensAfter = total / 4
	rep.StillOver = rep.TokensAfter > budget
	return out, rep
}

// CompactionNotesHeader opens the message that carries the compaction
// notes (what post_compact hooks asked to keep) in a cut request.
const CompactionNotesHeader = "[Compaction notes: kept by hooks across the trimming of the earlier conversation]"

// window is one run's context window: its budget, the deepest cut
// announced to hooks so far, and the compaction notes kept since.
type window struct {
	budget    int // tokens a request may hold (0: no limit)
	hasSystem bool
	toolChars int // the tool schemas, sent with every request
	announced trimReport
	notes     []string
}

// cut reports whether a trim changed anything.
func (r trimReport) cut() bool { return r.ToolOutputs > 0 || r.Turns > 0 }

// deeper reports whether r drops more than before did. Requests of a
// run only grow at the end and lose their oldest part first, so a cut
// that drops no more turns nor tool outputs than an announced one drops
// nothing new.
func (r trimReport) deeper(before trimReport) bool {
	return r.Turns > before.Turns || r.ToolOutputs > before.ToolOutputs
}

// notesMessage is the compaction notes as one system message (zero when
// there are none).
func (w *window) notesMessage() (openai.ChatCompletionMessage, int) {
	if len(w.notes) == 0 {
		return openai.ChatCompletionMessage{}, 0
	}
	m := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: CompactionNotesHeader + "\n\n" + strings.Join(w.notes, "\n\n")}
	return m, messageChars(&m) + 16
}

// fit cuts msgs to the window (fitWindow), leaving room for the notes.
func (w *window) fit(msgs []openai.ChatCompletionMessage, cur int) ([]openai.ChatCompletionMessage, trimReport) {
	_, notesChars := w.notesMessage()
	return fitWindow(msgs, w.hasSystem, cur, w.budget, w.toolChars+notesChars)
}

// withNotes puts the notes message after the system prompt of a cut
// request (a copy: msgs is not changed).
func (w *window) withNotes(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	m, n := w.notesMessage()
	if n == 0 {
		return msgs
	}
	at := boolIndex(w.hasSystem)
	out := make([]openai.ChatCompletionMessage, 0, len(msgs)+1)
	out = append(append(append(out, msgs[:at]...), m), msgs[at:]...)
	return out
}

// fitRequest cuts one request to the context window. A cut deeper than
// any announced in this run fires pre_compact and then post_compact; the
// context post_compact's hooks answer is kept as compaction notes, which
// every cut request of the run carries after the system prompt (never
// stored: the conversation itself is not changed). A request that fits
// is sent whole, without notes.
func (r *runState) fitRequest(ctx context.Context, msgs []openai.ChatCompletionMessage, cur int) ([]openai.ChatCompletionMessage, trimReport) {
	w := &r.window
	if w.budget <= 0 {
		return msgs, trimReport{}
	}
	if _, rep := fitWindow(msgs, w.hasSystem, cur, w.budget, w.toolChars); !rep.cut() {
		return msgs, rep
	}
	out, rep := w.fit(msgs, cur)
	if rep.deeper(w.announced) {
		if notes := r.compactionHooks(ctx, rep, msgs[rep.DropFrom:rep.DropTo]); notes != "" && !slices.Contains(w.notes, notes) {
			w.notes = append(w.notes, notes)
			// the notes need room too: older turns make way for them
			out, rep = w.fit(msgs, cur)
		}
		w.announced = rep
	}
	a := r.agent
	a.logger().Info("request cut to fit the context window", "session_id", r.turn.SessionID,
		"dropped_tool_outputs", rep.ToolOutputs, "dropped_turns", rep.Turns, "dropped_messages", rep.Messages,
		"tokens_before", rep.TokensBefore, "tokens_after", rep.TokensAfter, "context_window", a.ContextWindow, "compaction_notes", len(w.notes))
	if rep.StillOver {
		a.logger().Warn("request still exceeds the context window after cutting", "session_id", r.turn.SessionID, "tokens", rep.TokensAfter, "context_window", a.ContextWindow)
	}
	return w.withNotes(out), rep
}

// compactionHooks fires pre_compact for a cut about to be made and
// post_compact once it is made, with the turns it drops (dropped), and
// returns the context post_compact's
// hooks answered, joined. The cut was computed by fitWindow before, so
// the request is already cut when post_compact fires; post_compact is
// called from a defer all the same, so that no change to what happens
// in between can leave a pre_compact unpaired.
func (r *runState) compactionHooks(ctx context.Context, rep trimReport, dropped []openai.ChatCompletionMessage) (notes string) {
	reg := r.agent.hooks()
	base := hooks.Compaction{SessionID: r.turn.SessionID, Trigger: "auto", Model: r.agent.ModelName, Platform: r.turn.Platform,
		ContextWindow: r.agent.ContextWindow, TokensBefore: rep.TokensBefore, DroppedHistory: historyOf(dropped), Claude: r.claude()}
	post := &hooks.PostCompact{Compaction: base, TokensAfter: rep.TokensAfter,
		TurnsDropped: rep.Turns, MessagesDropped: rep.Messages, ToolOutputsDropped: rep.ToolOutputs}
	reg.Emit(hooks.PreCompactHook, &hooks.PreCompact{Compaction: base,
		TurnsToDrop: rep.Turns, MessagesToDrop: rep.Messages, ToolOutputsToDrop: rep.ToolOutputs})
	defer func() {
		var parts []string
		reg.Call(ctx, hooks.PostCompactHook, post, func(a *hooks.Answer) {
			if c := answerContext(a); strings.TrimSpace(c) != "" {
				parts = append(parts, hooks.ClipContext(c))
			}
		})
		notes = strings.Join(parts, "\n\n")
	}()
	return ""
}

// answerContext is the text a hook's answer meant for the model: a
// Feedback's or LLMContext's context, a plain string, or a map's
// "context".
func answerContext(a *hooks.Answer) string {
	if a.Failed() {
		return ""
	}
	switch v := a.Value.(type) {
	case *hooks.Feedback:
		if v != nil {
			return v.Context
		}
	case hooks.Feedback:
		return v.Context
	case *hooks.LLMContext:
		if v != nil {
			return v.Context
		}
	case hooks.LLMContext:
		return v.Context
	case string:
		return v
	case map[string]any:
		if c, ok := v["context"].(string); ok {
			return c
		}
	}
	return ""
}
