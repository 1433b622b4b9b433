# herald's worker for a Hermes gateway hook (handler.py).
#
# One worker per hook directory, alive for as long as the hook is loaded,
# so the handler's module-level state survives between events.
#
# The handler sees what it would see inside Hermes' gateway: the
# gateway's working directory and environment (HERMES_HOME is the herald
# home), and a root logger whose records reach the gateway's log with
# their levels. Its own directory is importable (a helper module beside
# handler.py); the working directory is not.
#
# Protocol: requests arrive on fd 3, answers leave on fd 4, one JSON object
# per line. fd 0 is /dev/null; fd 1 and fd 2 go to herald's log, so the
# handler's own print() output can never corrupt the protocol.
#
#   herald → worker  {"id": n, "event_type": "...", "context": {...}}
#   worker → herald  {"type": "ready"}                       after import
#                    {"type": "fatal", "phase": "...", "error": "..."}   then exit
#                    {"id": n, "ok": true, "result": <any>}
#                    {"id": n, "ok": false, "error": "...", "traceback": "..."}
#                    {"type": "log", "level": 40, "logger": "...", "message": "..."}
#                                        a logging record, at any time
#
# argv: handler.py path, hook name, the lowest logging level herald keeps.

import sys

# First, before any other import: "-c" puts the working directory at the
# head of sys.path, where a json.py of the gateway's would shadow the
# standard library. The hook's own directory takes its place.
if sys.path and sys.path[0] == "":
    sys.path[0] = sys.argv[1].rpartition("/")[0] or "/"

import asyncio
import importlib.util
import inspect
import json
import logging
import os
import threading
import traceback

# A handler may log from its own threads while an answer is written.
_send_lock = threading.Lock()


def _send(out, obj):
    line = json.dumps(obj, ensure_ascii=False, default=str).encode("utf-8") + b"\n"
    with _send_lock:
        out.write(line)
        out.flush()


class _ToHerald(logging.Handler):
    """Forwards each logging record to herald, level and all."""

    def __init__(self, out):
        super().__init__()
        self._out = out

    def emit(self, record):
        try:
            _send(self._out, {"type": "log", "level": record.levelno, "logger": record.name,
                              "message": self.format(record)})
        except Exception:
            self.handleError(record)


def main():
    path, name = sys.argv[1], sys.argv[2]
    level = int(sys.argv[3]) if len(sys.argv) > 3 else logging.INFO
    inp = os.fdopen(3, "rb")
    out = os.fdopen(4, "wb")
    # The root logger is configured, as Hermes' is, before the handler is
    # imported: its logging.basicConfig() then changes nothing.
    root = logging.getLogger()
    root.addHandler(_ToHerald(out))
    root.setLevel(level)

    mod_name = "hermes_hook_" + name
    try:
        spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(mod_name, None)
            raise
    except BaseException as e:
        _send(out, {"type": "fatal", "phase": "import", "error": "%s: %s" % (type(e).__name__, e),
                    "traceback": traceback.format_exc()})
        return 3
    handle = getattr(module, "handle", None)
    if not callable(handle):
        _send(out, {"type": "fatal", "phase": "handle", "error": "no 'handle' function found"})
        return 3
    _send(out, {"type": "ready"})

    # One loop for the worker's life: an async handler's clients and tasks
    # stay bound to it between events.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    reader = inp
    while True:
        line = reader.readline()
        if not line:
            return 0
        line = line.strip()
        if not line:
            continue
        rid = None
        try:
            req = json.loads(line)
            rid = req.get("id")
            ctx = req.get("context")
            if ctx is None:
                ctx = {}
            ret = handle(req.get("event_type", ""), ctx)
            if inspect.isawaitable(ret):
                ret = loop.run_until_complete(ret)
            try:
                _send(out, {"id": rid, "ok": True, "result": ret})
            except (TypeError, ValueError) as e:
                _send(out, {"id": rid, "ok": False, "error": "return value is not JSON: %s" % e})
        except BaseException as e:
            if isinstance(e, (KeyboardInterrupt, SystemExit)) and rid is None:
                raise
            try:
                _send(out, {"id": rid, "ok": False, "error": "%s: %s" % (type(e).__name__, e),
                            "traceback": traceback.format_exc()})
            except BrokenPipeError:
                return 0
        finally:
            sys.stdout.flush()
            sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
