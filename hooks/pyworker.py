# herald's worker for a Hermes gateway hook (handler.py).
#
# One worker per hook directory, alive for as long as the hook is loaded,
# so the handler's module-level state survives between events.
#
# Protocol: requests arrive on fd 3, answers leave on fd 4, one JSON object
# per line. fd 0 is /dev/null; fd 1 and fd 2 go to herald's log, so the
# handler's own print() and logging output can never corrupt the protocol.
#
#   herald → worker  {"id": n, "event_type": "...", "context": {...}}
#   worker → herald  {"type": "ready"}                       after import
#                    {"type": "fatal", "phase": "...", "error": "..."}   then exit
#                    {"id": n, "ok": true, "result": <any>}
#                    {"id": n, "ok": false, "error": "...", "traceback": "..."}
#
# argv: handler.py path, hook name.

import asyncio
import importlib.util
import inspect
import json
import logging
import os
import sys
import traceback


def _send(out, obj):
    out.write(json.dumps(obj, ensure_ascii=False, default=str).encode("utf-8") + b"\n")
    out.flush()


def main():
    path, name = sys.argv[1], sys.argv[2]
    inp = os.fdopen(3, "rb")
    out = os.fdopen(4, "wb")
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")

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
