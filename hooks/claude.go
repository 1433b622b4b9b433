package hooks

// The claude dialect: Claude Code's event names, tool names and stdin
// shape, beside Hermes' (shellhooks_run.go).

import (
	"encoding/json"
	"fmt"
	"os"
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
	"PreToolUse": PreToolCallHook, "PostToolUse": PostToolCallHook, "UserPromptSubmit": PreLLMCallHook,
	"Stop": PostLLMCallHook, "SubagentStop": SubagentStopHook, "SessionStart": OnSessionStartHook, "SessionEnd": OnSessionEndHook,
	"PostToolUseFailure": PostToolCallHook,
}

// CanonicalEvent resolves an alias (PreToolUse, post_tool_use, …) to its
// catalogue name; any other name is returned as it is.
func CanonicalEvent(name string) string {
	if c, ok := eventAliases[name]; ok {
		return c
	}
	return name
}

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
var claudeNames = map[string]string{
	PreToolCallHook: "PreToolUse", PostToolCallHook: "PostToolUse", PreLLMCallHook: "UserPromptSubmit",
	PostLLMCallHook: "Stop", SubagentStopHook: "SubagentStop", OnSessionStartHook: "SessionStart", OnSessionEndHook: "SessionEnd",
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

// ClaudePayload builds Claude Code's stdin for an event.
func ClaudePayload(event string, payload any) ([]byte, error) {
	kw, err := payloadMap(payload)
	if err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd()
	name := claudeNames[event]
	if name == "" {
		name = event
	}
	out := map[string]any{"hook_event_name": name, "session_id": kw["session_id"], "cwd": cwd, "transcript_path": "", "permission_mode": "default"}
	if out["session_id"] == nil || out["session_id"] == "" {
		out["session_id"] = kw["parent_session_id"]
	}
	if tn, ok := kw["tool_name"].(string); ok {
		out["tool_name"] = ClaudeToolName(tn)
		args, _ := kw["args"].(map[string]any)
		out["tool_input"] = toClaudeArgs(tn, args)
		out["tool_use_id"] = kw["tool_call_id"]
		if r, ok := kw["result"]; ok {
			out["tool_response"] = r
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
		out["agent_type"] = kw["child_role"]
		out["last_assistant_message"] = kw["child_summary"]
		p, _ := payload.(*SubagentStop)
		out["stop_hook_active"] = p != nil && p.StopHookActive
	case OnSessionStartHook:
		out["source"] = "startup"
		out["model"] = kw["model"]
	case OnSessionEndHook:
		out["reason"] = "other"
	}
	return json.Marshal(out)
}

// herald's file tools call the path "path"; Claude's call it "file_path".
func toClaudeArgs(tool string, args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if k == "path" && (tool == "write_file" || tool == "patch" || tool == "read_file") {
			k = "file_path"
		}
		out[k] = v
	}
	return out
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
		dir, _ = os.Getwd()
	}
	env = setEnv(env, "CLAUDE_PROJECT_DIR", dir)
	if s.PluginRoot != "" {
		env = setEnv(env, "CLAUDE_PLUGIN_ROOT", s.PluginRoot)
	}
	return env
}
