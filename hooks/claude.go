package hooks

// The claude dialect: Claude Code's event names, tool names and stdin
// shape, beside Hermes' (shellhooks_run.go).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// eventAliases maps OpenHarness' and Claude Code's event names onto the
// catalogue's.
var eventAliases = map[string]string{
	"pre_tool_use": PreToolCallHook, "post_tool_use": PostToolCallHook, "user_prompt_submit": PreLLMCallHook,
	"session_start": OnSessionStartHook, "session_end": OnSessionEndHook, "stop": PostLLMCallHook,
	"PreToolUse": PreToolCallHook, "PostToolUse": PostToolCallHook, "PostToolUseFailure": PostToolCallHook, "UserPromptSubmit": PreLLMCallHook,
	"Stop": PostLLMCallHook, "SubagentStop": SubagentStopHook, "SessionStart": OnSessionStartHook, "SessionEnd": OnSessionFinalizeHook,
	"PreCompact": PreCompactHook, "PostCompact": PostCompactHook,
}

// CanonicalEvent resolves an alias (PreToolUse, post_tool_use, …) to its
// catalogue name; any other name is returned as it is.
func CanonicalEvent(name string) string {
	if c, ok := eventAliases[name]; ok {
		return c
	}
	return name
}

// claudeNameSet holds the Claude Code event names of eventAliases.
var claudeNameSet = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, n := range claudeEvents() {
		m[n] = struct{}{}
	}
	return m
}()

// claudeEvents are the Claude Code event names herald runs hooks for, sorted.
func claudeEvents() []string {
	var out []string
	for k := range eventAliases {
		if k != "" && k[0] >= 'A' && k[0] <= 'Z' {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// claudeNames is the Claude Code name of each catalogue point that has one.
// Claude's SessionEnd is the end of a session (on_session_finalize), not
// of a run (on_session_end, which has none).
var claudeNames = map[string]string{
	PreToolCallHook: "PreToolUse", PostToolCallHook: "PostToolUse", PreLLMCallHook: "UserPromptSubmit",
	PostLLMCallHook: "Stop", SubagentStopHook: "SubagentStop", OnSessionStartHook: "SessionStart", OnSessionFinalizeHook: "SessionEnd",
	PreCompactHook: "PreCompact", PostCompactHook: "PostCompact",
}

// claudeTools maps herald's tool names to Claude Code's, for the claude
// dialect: payloads carry the Claude name and matchers compare with it. A
// tool with no Claude equivalent keeps its herald name.
var claudeTools = map[string]string{
	"terminal": "Bash", "write_file": "Write", "patch": "Edit", "read_file": "Read", "delegate_task": "Task",
}

// HeraldToolName returns the herald tool a Claude Code tool name stands
// for (Bash → terminal); any other name is returned as it is.
func HeraldToolName(tool string) string {
	for h, c := range claudeTools {
		if c == tool {
			return h
		}
	}
	return tool
}

// ClaudeToolName returns the Claude Code name of a herald tool (its own
// name when Claude has no equivalent).
func ClaudeToolName(tool string) string {
	if c, ok := claudeTools[tool]; ok {
		return c
	}
	return tool
}

// ClaudePermissionMode is Claude Code's permission_mode for herald's
// approvals.mode: ask is Claude's default (a person is asked), unless
// nobody can answer (cron, BOOT.md), where a flagged command is denied
// as in Claude's dontAsk; off denies them (dontAsk); yolo runs them
// (bypassPermissions).
func ClaudePermissionMode(approvalMode string, canAsk bool) string {
	switch strings.ToLower(approvalMode) {
	case "yolo":
		return "bypassPermissions"
	case "off":
		return "dontAsk"
	}
	if !canAsk {
		return "dontAsk"
	}
	return "default"
}

func claudeOf(payload any) Claude {
	if c, ok := payload.(claudeCarrier); ok {
		return *c.claude()
	}
	return Claude{}
}

// claudeEvent is the hook_event_name of a payload: a failed tool call is
// PostToolUseFailure.
func claudeEvent(event string, payload any) string {
	if tr, ok := payload.(*ToolResult); ok && event == PostToolCallHook && tr.Failure != "" {
		return "PostToolUseFailure"
	}
	if name := claudeNames[event]; name != "" {
		return name
	}
	return event
}

// ClaudeAccept is the payload filter of a claude-dialect subscriber
// declared under claudeEvent (the Claude name its entry was declared
// under; "" takes the catalogue point's Claude name). Claude Code fires
// PostToolUse for calls that succeeded and PostToolUseFailure for those
// that failed (neither for a call refused an approval); Stop, SessionStart, SessionEnd and UserPromptSubmit belong
// to the main session, never to a sub-agent's (SubagentStop reports
// those); SessionEnd needs a session.
//
// match, if set, is the hook's matcher, which Claude Code applies to
// SessionStart's source, SessionEnd's reason and SubagentStop's agent
// type.
func ClaudeAccept(event, claudeEventName string, match func(string) bool) func(payload any) bool {
	if claudeEventName == "" {
		claudeEventName = claudeNames[event]
	}
	return func(payload any) bool {
		if match != nil {
			if v, ok := claudeMatchValue(payload); ok && !match(v) {
				return false
			}
		}
		switch p := payload.(type) {
		case *ToolResult:
			if event != PostToolCallHook {
				return true
			}
			if p.Denied {
				return false
			}
			if claudeEventName == "PostToolUseFailure" {
				return p.Failure != ""
			}
			return p.Failure == ""
		case *PreLLMCall:
			return p.Claude.AgentID == ""
		case *PostLLMCall:
			return p.Claude.AgentID == ""
		case *SessionStarted:
			return p.Claude.AgentID == ""
		case *SessionFinalized:
			return p.SessionID != nil
		}
		return true
	}
}

// claudeValueMatched reports whether Claude Code applies matchers on the
// event to a payload value rather than a tool name.
func claudeValueMatched(event string) bool {
	return event == OnSessionStartHook || event == OnSessionFinalizeHook || event == SubagentStopHook ||
		event == PreCompactHook || event == PostCompactHook
}

// claudeMatchValue is what a matcher compares on a non-tool event, as in
// the payload the hook reads: SessionStart's source, SessionEnd's reason,
// SubagentStop's agent type, PreCompact's and PostCompact's trigger.
func claudeMatchValue(payload any) (string, bool) {
	switch p := payload.(type) {
	case *PreCompact:
		return p.Trigger, true
	case *PostCompact:
		return p.Trigger, true
	case *SessionStarted:
		return firstStr(p.Source, "startup"), true
	case *SessionFinalized:
		return firstStr(p.Reason, "other"), true
	case *SubagentStop:
		role := ""
		if p.ChildRole != nil {
			role = *p.ChildRole
		}
		return ClaudeAgentType(role), true
	}
	return "", false
}

// ClaudePayload builds Claude Code's stdin for an event. A typed payload
// gives every field Claude documents; a plain map (herald hooks test
// --payload-file) gives what its keys allow.
func ClaudePayload(event string, payload any) ([]byte, error) {
	kw, err := payloadMap(payload)
	if err != nil {
		return nil, err
	}
	cx := claudeOf(payload)
	cwd := cx.Cwd
	if cwd == "" {
		cwd = workingDir()
	}
	mode := cx.PermissionMode
	if mode == "" {
		mode = "default"
	}
	out := map[string]any{"hook_event_name": claudeEvent(event, payload), "session_id": kw["session_id"], "cwd": cwd,
		"transcript_path": cx.TranscriptPath, "permission_mode": mode}
	if out["session_id"] == nil || out["session_id"] == "" {
		out["session_id"] = kw["parent_session_id"]
	}
	if cx.AgentID != "" {
		out["session_id"], out["agent_id"], out["agent_type"] = cx.SessionID, cx.AgentID, cx.AgentType
	}
	if tn, ok := kw["tool_name"].(string); ok {
		out["tool_name"] = ClaudeToolName(tn)
		args, _ := kw["args"].(map[string]any)
		out["tool_input"] = toClaudeArgs(tn, args, cwd)
		out["tool_use_id"] = kw["tool_call_id"]
		if r, ok := kw["result"].(string); ok {
			tr, _ := payload.(*ToolResult)
			if tr != nil && tr.Failure != "" {
				out["error"], out["is_interrupt"] = tr.Failure, tr.Interrupted
			} else {
				out["tool_response"] = ClaudeToolResponse(tn, args, r, cwd)
			}
		}
	}
	switch event {
	case PreLLMCallHook:
		out["prompt"] = kw["user_message"]
	case PostLLMCallHook:
		out["last_assistant_message"] = kw["assistant_response"]
		p, _ := payload.(*PostLLMCall)
		out["stop_hook_active"] = p != nil && p.StopHookActive
	case SubagentStopHook:
		sub, _ := payload.(*SubagentStop)
		role, _ := kw["child_role"].(string)
		out["agent_type"] = ClaudeAgentType(role)
		if sub != nil {
			out["agent_id"], out["agent_transcript_path"] = sub.AgentID, sub.AgentTranscriptPath
		}
		out["last_assistant_message"] = kw["child_summary"]
		p, _ := payload.(*SubagentStop)
		out["stop_hook_active"] = p != nil && p.StopHookActive
	case OnSessionStartHook:
		out["source"] = "startup"
		if s, ok := payload.(*SessionStarted); ok && s.Source != "" {
			out["source"] = s.Source
		}
		out["model"] = kw["model"]
	case PreCompactHook:
		out["trigger"], out["custom_instructions"] = kw["trigger"], ""
	case PostCompactHook:
		out["trigger"] = kw["trigger"]
	case OnSessionFinalizeHook:
		out["reason"] = "other"
		if s, ok := payload.(*SessionFinalized); ok && s.Reason != "" {
			out["reason"] = s.Reason
		}
	}
	return json.Marshal(out)
}

// ClaudeAgentType is a delegate_task child's agent_type: its role, or
// Claude's default sub-agent type when it has none.
func ClaudeAgentType(role string) string {
	if role == "" {
		return "general-purpose"
	}
	return role
}

// herald's file tools call the path "path" and take it relative to the
// working directory; Claude's call it "file_path" and give it absolute.
func toClaudeArgs(tool string, args map[string]any, cwd string) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if k == "path" && isFileTool(tool) {
			k = "file_path"
			if p, ok := v.(string); ok {
				v = absPath(p, cwd)
			}
		}
		out[k] = v
	}
	return out
}

func isFileTool(tool string) bool {
	return tool == "write_file" || tool == "patch" || tool == "read_file"
}

func absPath(p, cwd string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, p[1:])
		}
	}
	return filepath.Join(cwd, p)
}

func fromClaudeArgs(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if k == "file_path" {
			k = "path"
		}
		out[k] = v
	}
	return out
}

// claudeListMatcher is Claude Code's rule for a matcher that is a tool
// name or a list of them ("Edit|Write", "Edit, Write"): only letters,
// digits, _, space, comma and |. Anything else is a regular expression.
var claudeListMatcher = regexp.MustCompile(`^[A-Za-z0-9_ ,|]*$`)

// setClaudeMatcher reads a matcher as Claude Code does: "*" or empty
// matches every tool, a plain name or list is compared exactly, anything
// else must match the whole (Claude) tool name as a regular expression.
// The warning is for an expression that does not compile (it is then
// compared literally).
func (s *ShellSpec) setClaudeMatcher(m string) (warning string) {
	s.Matcher, s.matchRe, s.matchNames = m, nil, nil
	switch {
	case m == "" || m == "*":
	case claudeListMatcher.MatchString(m):
		for _, n := range strings.FieldsFunc(m, func(r rune) bool { return r == '|' || r == ',' || r == ' ' }) {
			s.matchNames = append(s.matchNames, n)
		}
	default:
		re, err := regexp.Compile(`^(?:` + m + `)$`)
		if err != nil {
			return fmt.Sprintf("matcher %q is not a valid regular expression (%v); it is compared literally", m, err)
		}
		s.matchRe = re
	}
	return ""
}

// claudeMatches applies a claude-dialect matcher to a Claude tool name,
// and those of identical hooks merged into this one.
func (s *ShellSpec) claudeMatches(name string) bool {
	switch {
	case s.Matcher == "" || s.Matcher == "*":
		return true
	case s.matchNames != nil:
		if slices.Contains(s.matchNames, name) {
			return true
		}
	case s.matchRe != nil:
		if s.matchRe.MatchString(name) {
			return true
		}
	case name == s.Matcher:
		return true
	}
	for _, o := range s.mergedMatchers {
		if o.claudeMatches(name) {
			return true
		}
	}
	return false
}

// MatchesAnyTool reports whether a claude-dialect matcher can take any of
// the herald tools named (it always can in the Hermes dialect, whose
// matchers are not checked).
func (s *ShellSpec) MatchesAnyTool(tools []string) bool {
	if s.Dialect != "claude" {
		return true
	}
	for _, t := range tools {
		if s.Matches(t) {
			return true
		}
	}
	return false
}

// claudeVar finds ${CLAUDE_PLUGIN_ROOT} and $CLAUDE_PROJECT_DIR in either
// spelling.
var claudeVar = regexp.MustCompile(`\$\{(CLAUDE_PLUGIN_ROOT|CLAUDE_PROJECT_DIR)\}|\$(CLAUDE_PLUGIN_ROOT|CLAUDE_PROJECT_DIR)\b`)

// SetProjectDir fills in a claude-dialect spec's directories: the
// gateway's working directory becomes CLAUDE_PROJECT_DIR (and the hook's
// working directory). The command keeps its text as written in Shell,
// which sh -c runs with both variables exported; Command becomes that
// text with the variables filled in, so consent, listings and the script
// hash name the script that really runs, and two plugins' identical
// ${CLAUDE_PLUGIN_ROOT}/… commands are two hooks. Other specs are left
// as they are.
func (s *ShellSpec) SetProjectDir(dir string) {
	if s.Dialect != "claude" {
		return
	}
	s.ProjectDir = dir
	if s.Shell == "" {
		s.Shell = s.Command
	}
	s.Command = claudeVar.ReplaceAllStringFunc(s.Shell, func(v string) string {
		if strings.Contains(v, "PLUGIN_ROOT") {
			if s.PluginRoot == "" {
				return v
			}
			return s.PluginRoot
		}
		if dir == "" {
			return v
		}
		return dir
	})
}

// claudeEnv is what a claude-dialect hook finds in its environment beside
// the gateway's.
func (s *ShellSpec) claudeEnv(env []string) []string {
	dir := s.ProjectDir
	if dir == "" {
		dir = workingDir()
	}
	env = setEnv(env, "CLAUDE_PROJECT_DIR", dir)
	if s.PluginRoot != "" {
		env = setEnv(env, "CLAUDE_PLUGIN_ROOT", s.PluginRoot)
	}
	return env
}

// ClaudeToolResponse is a tool's result as Claude Code's tool_response
// (and its transcripts' toolUseResult): an object, per tool. Bash gives
// {stdout, stderr, interrupted, isImage, exit_code} (herald's terminal
// merges stderr into stdout); Write and Edit {filePath, success}; Read
// {type: "text", file: {filePath, content, numLines, startLine,
// totalLines}}; any other tool its result when that is a JSON object,
// else {output: <text>}.
func ClaudeToolResponse(tool string, args map[string]any, result, cwd string) any {
	var obj map[string]any
	if json.Unmarshal([]byte(result), &obj) != nil {
		obj = nil
	}
	str := func(k string) string { s, _ := obj[k].(string); return s }
	num := func(k string) int { f, _ := obj[k].(float64); return int(f) }
	filePath := func() string {
		if p := str("path"); p != "" {
			return p
		}
		p, _ := args["path"].(string)
		return absPath(p, cwd)
	}
	switch {
	case obj == nil:
		return map[string]any{"output": result}
	case tool == "terminal":
		code := num("exit_code")
		_, hasErr := obj["error"].(string)
		return map[string]any{"stdout": str("output"), "stderr": "", "interrupted": hasErr && code == TimeoutExitCode,
			"isImage": false, "exit_code": code}
	case tool == "write_file" || tool == "patch":
		return map[string]any{"filePath": filePath(), "success": true}
	case tool == "read_file":
		from, to := num("from_line"), num("to_line")
		return map[string]any{"type": "text", "file": map[string]any{"filePath": filePath(), "content": str("content"),
			"numLines": max(to-from+1, 0), "startLine": from, "totalLines": num("total_lines")}}
	}
	return obj
}

// TimeoutExitCode is the terminal tool's exit code for a command it
// killed at its timeout (as timeout(1)); Claude calls that interrupted.
const TimeoutExitCode = 124
