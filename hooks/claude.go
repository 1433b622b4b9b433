package hooks

// The claude dialect: Claude Code's event names, tool names and stdin
// shape, beside Hermes' (shellhooks_run.go).

import (
	"encoding/json"
	"os"
)

// eventAliases maps OpenHarness' and Claude Code's event names onto the
// catalogue's.
var eventAliases = map[string]string{
	"pre_tool_use": PreToolCallHook, "post_tool_use": PostToolCallHook, "user_prompt_submit": PreLLMCallHook,
	"session_start": OnSessionStartHook, "session_end": OnSessionEndHook, "stop": PostLLMCallHook,
	"PreToolUse": PreToolCallHook, "PostToolUse": PostToolCallHook, "UserPromptSubmit": PreLLMCallHook,
	"Stop": PostLLMCallHook, "SubagentStop": SubagentStopHook, "SessionStart": OnSessionStartHook, "SessionEnd": OnSessionEndHook,
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
