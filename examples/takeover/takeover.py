#!/usr/bin/env python3
"""takeover as a shell hook on pre_gateway_dispatch.

`/takeover` from an owner makes the bot silent in that chat; customers'
messages are still recorded in the session's transcript
({"action":"skip","ingest":true}); `/handback` ends it. Owners are
"platform:user_id" entries in $HERALD_OWNERS (comma separated); the state
is a flag file per chat under $HERALD_TAKEOVER_DIR (default
~/.herald/takeover).

config.yaml:
  hooks:
    pre_gateway_dispatch:
      - command: /path/to/takeover.py
        env: [HERALD_OWNERS, HERALD_TAKEOVER_DIR]
"""
import hashlib, json, os, sys

payload = json.load(sys.stdin)
event = (payload.get("extra") or {}).get("event") or {}
src = event.get("source") or {}
text = (event.get("text") or "").strip()
owners = {o.strip() for o in os.environ.get("HERALD_OWNERS", "").split(",") if o.strip()}
is_owner = f"{src.get('platform')}:{src.get('user_id')}" in owners

state = os.path.expanduser(os.environ.get("HERALD_TAKEOVER_DIR", "~/.herald/takeover"))
os.makedirs(state, exist_ok=True)
flag = os.path.join(state, hashlib.sha256(f"{src.get('platform')}:{src.get('chat_id')}".encode()).hexdigest()[:16])

if is_owner and text == "/takeover":
    open(flag, "w").close()
    print(json.dumps({"action": "skip", "reason": "takeover started"}))
elif is_owner and text == "/handback":
    if os.path.exists(flag):
        os.remove(flag)
    print(json.dumps({"action": "skip", "reason": "handed back"}))
elif os.path.exists(flag):
    # the owner is talking to the customer; the bot stays silent
    print(json.dumps({"action": "skip", "ingest": True, "reason": "human takeover"}))
else:
    print("{}")
