#!/usr/bin/env python3
"""listen-only as a shell hook on pre_gateway_dispatch.

In groups, messages that do not mention the bot are buffered and skipped;
a message that mentions it is rewritten into one prompt: the buffer, then
the mention. DMs pass through. The buffer lives in files under
$HERALD_LISTEN_DIR (default ~/.herald/listen-only), one per chat, since a
shell hook is a new process for every message.

config.yaml:
  hooks:
    pre_gateway_dispatch:
      - command: /path/to/listen-only.py
        env: [HERALD_BOT_NAME, HERALD_LISTEN_DIR]
"""
import hashlib, json, os, sys

payload = json.load(sys.stdin)
event = (payload.get("extra") or {}).get("event") or {}
src = event.get("source") or {}
text = event.get("text") or ""
bot = os.environ.get("HERALD_BOT_NAME", "herald")

if src.get("chat_type") == "dm" or event.get("internal"):
    print("{}")
    sys.exit(0)

state = os.path.expanduser(os.environ.get("HERALD_LISTEN_DIR", "~/.herald/listen-only"))
os.makedirs(state, exist_ok=True)
key = hashlib.sha256(f"{src.get('platform')}:{src.get('chat_id')}".encode()).hexdigest()[:16]
path = os.path.join(state, key + ".jsonl")

if "@" + bot.lower() in text.lower():
    lines = []
    if os.path.exists(path):
        with open(path) as f:
            lines = [json.loads(l)["line"] for l in f if l.strip()]
        os.remove(path)
    print(json.dumps({"action": "rewrite", "text": "\n".join(lines[-50:] + [text])}))
else:
    with open(path, "a") as f:
        f.write(json.dumps({"line": f"{src.get('user_name') or src.get('user_id')}: {text}"}) + "\n")
    print(json.dumps({"action": "skip", "reason": "ambient-buffered"}))
