#!/usr/bin/env bash
# Format Go files the agent wrote or patched (post_tool_call on
# write_file|patch). The Hermes original runs black on .py files; this is
# the same script for gofmt, so it needs nothing but Go.
payload="$(cat -)"
path=$(echo "$payload" | jq -r '.tool_input.path // empty')
[[ "$path" == *.go ]] && command -v gofmt >/dev/null && gofmt -w "$path" 2>/dev/null
printf '{}\n'
