#!/bin/sh
# guard.sh — a persistent pre_tool_call hook (persistent: true)
while IFS= read -r line; do
  id=$(printf '%s' "$line" | jq -r .id)
  cmd=$(printf '%s' "$line" | jq -r '.tool_input.command // empty')
  case "$cmd" in
    *"rm -rf /"*) printf '{"id":"%s","action":"block","message":"no rm -rf /"}\n' "$id" ;;
    *) printf '{"id":"%s"}\n' "$id" ;;
  esac
done
