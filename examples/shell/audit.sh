#!/usr/bin/env bash
# Audit both halves of a tool call: pre_tool_call records what the model
# asked for, post_tool_call what came back. One JSON line per event in
# $HERALD_AUDIT_LOG (the same script serves both events).
jq -c '{event: .hook_event_name, tool: .tool_name, input: .tool_input, session: .session_id, result: (.extra.result // null), duration_ms: (.extra.duration_ms // null)}' >> "${HERALD_AUDIT_LOG:-/tmp/herald-audit.jsonl}"
printf '{}\n'
