package gateway

// The one line each turn leaves in the log, for an operator to follow the
// gateway's traffic without reading anyone's messages: where the turn ran,
// its session, how long it took, the tools it called and how it ended.
// Message text never appears in it (the transcript and state.db hold
// that).

import (
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/agent"
)

// How a turn ended, as the turn line says it.
const (
	outcomeAnswered    = "answered"
	outcomeRefused     = "refused" // a pre_llm_call hook refused the prompt
	outcomeHalted      = "halted"  // a hook ended the turn
	outcomeInterrupted = "interrupted"
	outcomeFailed      = "failed"    // the agent failed: the chat got the apology
	outcomeNotSaved    = "not_saved" // the store failed: the answer was withheld
)

func answeredOutcome(res *agent.Result) string {
	switch {
	case res.Refused:
		return outcomeRefused
	case res.Halted:
		return outcomeHalted
	}
	return outcomeAnswered
}

// logTurn writes the turn's line: INFO, or ERROR with the reason when it
// failed or could not be stored.
func (r *Runner) logTurn(src herald.Source, sessionID string, took time.Duration, res *agent.Result, outcome string, failure error) {
	attrs := []any{"platform", src.Platform, "chat", src.ChatID, "session_id", sessionID,
		"duration", took.Round(time.Millisecond), "tools", toolsUsed(res), "outcome", outcome}
	level := slog.LevelInfo
	if outcome == outcomeFailed || outcome == outcomeNotSaved {
		level = slog.LevelError
		if failure != nil {
			attrs = append(attrs, "err", r.cfg.Redactor.Redact(failure.Error()))
		}
	}
	r.cfg.TurnLog.Log(r.baseCtx, level, "turn", attrs...)
}

// toolsUsed names the tools a turn called, in the order of their first
// call, with a count when one was called more than once:
// "terminal×3,read_file".
func toolsUsed(res *agent.Result) string {
	if res == nil {
		return ""
	}
	var names []string
	count := map[string]int{}
	for _, m := range res.Messages {
		for _, tc := range m.ToolCalls {
			if count[tc.Function.Name] == 0 {
				names = append(names, tc.Function.Name)
			}
			count[tc.Function.Name]++
		}
	}
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		if c := count[n]; c > 1 {
			b.WriteString("×" + strconv.Itoa(c))
		}
	}
	return b.String()
}
