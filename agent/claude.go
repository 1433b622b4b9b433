package agent

// claude.go: what Claude Code's hook input has beyond Hermes' keys
// (hooks.Claude), filled in for every payload the claude dialect reads.

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/heraldgw/herald/hooks"
)

// claude is the run's hooks.Claude: its transcript, the approval mode in
// Claude's words, the working directory, and inside a sub-agent the
// session that delegated.
func (r *runState) claude() hooks.Claude {
	a := r.agent
	c := hooks.Claude{TranscriptPath: a.TranscriptPath(r.turn.SessionID), PermissionMode: hooks.ClaudePermissionMode(a.ApprovalMode, r.opts.Approver != nil),
		Cwd: r.cwd()}
	if p := r.turn.ParentSessionID; p != "" {
		c.TranscriptPath = a.TranscriptPath(p)
		c.SessionID, c.AgentID, c.AgentType = p, r.turn.SessionID, hooks.ClaudeAgentType(r.turn.AgentType)
	}
	return c
}

// ClaudeSession is the hooks.Claude of a gateway session, whose chat can
// answer approval prompts (for events the gateway emits).
func (a *Agent) ClaudeSession(sessionID string) hooks.Claude {
	return hooks.Claude{TranscriptPath: a.TranscriptPath(sessionID), PermissionMode: hooks.ClaudePermissionMode(a.ApprovalMode, true), Cwd: a.cwd()}
}

func (r *runState) cwd() string { return r.agent.cwd() }

func (a *Agent) cwd() string {
	if a.Workdir != "" {
		return a.Workdir
	}
	wd, _ := os.Getwd()
	return wd
}

func (r *runState) noteArgs(id string, args map[string]any) {
	if r.toolArgs == nil {
		r.toolArgs = map[string]map[string]any{}
	}
	r.toolArgs[id] = args
}

// toolFailure says why a tool call failed, from what the model was given
// ("" when it did not fail): the {"error": …} of every failed call (the
// tool's error or crash, an unknown or unavailable tool, bad arguments,
// a refused approval), or the terminal's non-zero exit ("Exit code N" and
// its output: Claude Code's Bash fails on one too).
func toolFailure(tool, result string) string {
	var obj map[string]any
	if json.Unmarshal([]byte(result), &obj) != nil {
		return ""
	}
	if msg, ok := obj["error"].(string); ok && len(obj) == 1 {
		return msg
	}
	if tool != "terminal" {
		return ""
	}
	code, _ := obj["exit_code"].(float64)
	if code == 0 {
		return ""
	}
	msg := fmt.Sprintf("Exit code %d", int(code))
	if e, ok := obj["error"].(string); ok && e != "" {
		msg += " (" + e + ")"
	}
	if out, _ := obj["output"].(string); strings.TrimSpace(out) != "" {
		msg += "\n" + strings.TrimRight(out, "\n")
	}
	return msg
}

// denied reports whether a call's result is a refused approval.
func denied(result string) bool {
	var obj map[string]any
	if json.Unmarshal([]byte(result), &obj) != nil {
		return false
	}
	msg, _ := obj["error"].(string)
	return len(obj) == 1 && strings.HasPrefix(msg, ErrDenied.Error())
}
