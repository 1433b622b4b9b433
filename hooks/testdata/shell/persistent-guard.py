#!/usr/bin/env python3
# guard.py — a persistent pre_tool_call hook (persistent: true)
import json, sys
for line in sys.stdin:
    req = json.loads(line)
    cmd = (req.get("tool_input") or {}).get("command", "")
    ans = {"id": req["id"]}
    if "rm -rf /" in cmd:
        ans.update(action="block", message="no rm -rf /")
    print(json.dumps(ans), flush=True)
