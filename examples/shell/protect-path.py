#!/usr/bin/env python3
"""A pre_tool_use policy in OpenHarness' style: refuse Bash commands that
write under a protected path. Configured with `dialect: claude`, so it sees
Claude Code's payload (tool_name "Bash", tool_input.command) and answers
with Claude's permissionDecision. The protected path comes from
HERALD_PROTECTED_PATH (passed through with the hook's env: list)."""
import json, os, re, sys

payload = json.load(sys.stdin)
protected = os.environ.get("HERALD_PROTECTED_PATH", "/etc")
if payload.get("tool_name") == "Bash":
    command = (payload.get("tool_input") or {}).get("command", "")
    writes = re.search(r"(>>?|\btee\b|\bcp\b|\bmv\b|\brm\b|\btouch\b|\bmkdir\b|\bsed\s+-i)\s*[^|;&]*" + re.escape(protected), command)
    if writes:
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"writes under {protected} are not allowed",
        }}))
        sys.exit(0)
print("{}")
