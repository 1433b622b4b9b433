# POST each new or reset session to an external service.
#
# Hermes' version posts with httpx; this one uses the standard library and
# signs the body as herald's examples do: HMAC-SHA256 over the exact bytes,
# hex, in X-Herald-Signature-256 as "sha256=<hex>", with the secret from
# HERALD_SESSION_WEBHOOK_SECRET. The receiver recomputes it and compares in
# constant time.
import hashlib
import hmac
import json
import os
import urllib.request

WEBHOOK_URL = os.getenv("HERALD_SESSION_WEBHOOK_URL", "https://your-service.example.com/herald-events")
SECRET = os.getenv("HERALD_SESSION_WEBHOOK_SECRET", "")


def handle(event_type: str, context: dict):
    body = json.dumps({"event": event_type, **context}).encode()
    headers = {"Content-Type": "application/json"}
    if SECRET:
        sig = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        headers["X-Herald-Signature-256"] = "sha256=" + sig
    req = urllib.request.Request(WEBHOOK_URL, data=body, headers=headers)
    urllib.request.urlopen(req, timeout=5).read()
