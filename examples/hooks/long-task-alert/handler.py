# Tell yourself on Telegram when a turn passes 10 steps.
#
# Hermes' version posts with httpx to api.telegram.org; this one uses only
# the standard library and reads the Bot API base from TELEGRAM_API_BASE
# (default https://api.telegram.org), so it also works with a self-hosted
# Bot API server, or a fake one in a test.
import os
import urllib.parse
import urllib.request

THRESHOLD = 10
BOT_TOKEN = os.getenv("TELEGRAM_BOT_TOKEN")
CHAT_ID = os.getenv("TELEGRAM_HOME_CHANNEL")
API_BASE = os.getenv("TELEGRAM_API_BASE") or "https://api.telegram.org"


def handle(event_type: str, context: dict):
    iteration = context.get("iteration", 0)
    if iteration == THRESHOLD and BOT_TOKEN and CHAT_ID:
        tools = ", ".join(context.get("tool_names", []))
        text = f"⚠️ Agent has been running for {iteration} steps. Last tools: {tools}"
        body = urllib.parse.urlencode({"chat_id": CHAT_ID, "text": text}).encode()
        req = urllib.request.Request(f"{API_BASE}/bot{BOT_TOKEN}/sendMessage", data=body)
        urllib.request.urlopen(req, timeout=5).read()
