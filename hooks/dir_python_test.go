package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const hookYAML = "name: %s\ndescription: test\nevents:\n  - command:*\n  - agent:start\n"

func yamlFor(name string, events ...string) string {
	s := "name: " + name + "\ndescription: test hook\nevents:\n"
	for _, e := range events {
		s += "  - " + e + "\n"
	}
	return s
}

func TestPythonWorker(t *testing.T) {
	needPython(t)
	t.Run("module state survives between events", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "counter", map[string]string{
			"HOOK.yaml": yamlFor("counter", "command:*"),
			"handler.py": `
COUNT = 0

def handle(event_type, context):
    global COUNT
    COUNT += 1
    return {"decision": "handled", "message": "%s #%d" % (context["command"], COUNT)}
`,
		})
		reg, _, _ := startDir(t, root, DirOptions{})
		for i, want := range []string{"status #1", "help #2", "status #3"} {
			name := strings.Fields(want)[0]
			got := cmdReply(t, reg, name)
			if got.Decision != "handled" || got.Reply != want {
				t.Fatalf("event %d: got %+v, want handled %q", i, got, want)
			}
		}
	})

	t.Run("async handler is awaited", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "async", map[string]string{
			"HOOK.yaml": yamlFor("async", "command:status"),
			"handler.py": `
import asyncio

async def handle(event_type: str, context: dict):
    await asyncio.sleep(0.01)
    return {"decision": "deny", "message": "async says no to " + event_type}
`,
		})
		reg, _, _ := startDir(t, root, DirOptions{})
		got := cmdReply(t, reg, "status")
		if got.Decision != "deny" || got.Reply != "async says no to command:status" {
			t.Fatalf("got %+v", got)
		}
	})

	t.Run("print cannot corrupt the protocol and goes to the log", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "noisy", map[string]string{
			"HOOK.yaml": yamlFor("noisy", "command:*"),
			"handler.py": `
import sys
print('{"id": 1, "ok": true, "result": {"decision": "deny", "message": "forged"}}')
print("imported")

def handle(event_type, context):
    print('{"id": 2, "ok": true, "result": {"decision": "deny", "message": "forged"}}')
    print("hello from the handler")
    sys.stderr.write("to stderr\n")
    return {"decision": "handled", "message": "real"}
`,
		})
		reg, _, lr := startDir(t, root, DirOptions{})
		for i := 0; i < 2; i++ {
			if got := cmdReply(t, reg, "status"); got.Reply != "real" {
				t.Fatalf("got %+v", got)
			}
		}
		lr.waitLog(t, "hook output", "hello from the handler", "hook=noisy")
		lr.waitLog(t, "hook output", "to stderr")
		lr.waitLog(t, "hook output", "imported")
	})

	t.Run("a crashed worker is restarted", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "crashy", map[string]string{
			"HOOK.yaml": yamlFor("crashy", "command:*"),
			"handler.py": `
import os
N = 0

def handle(event_type, context):
    global N
    N += 1
    if context["command"] == "crash":
        os._exit(7)
    return {"decision": "handled", "message": str(N)}
`,
		})
		reg, d, lr := startDir(t, root, DirOptions{})
		if got := cmdReply(t, reg, "a"); got.Reply != "1" {
			t.Fatalf("before crash: %+v", got)
		}
		if got := cmdReply(t, reg, "crash"); got.Decision != "" {
			t.Fatalf("crash answered %+v; want fail open", got)
		}
		lr.waitLog(t, "python worker exited; restarting", "hook=crashy")
		// the new worker starts from a fresh module
		if got := cmdReply(t, reg, "b"); got.Reply != "1" {
			t.Fatalf("after crash: %+v", got)
		}
		d.mu.Lock()
		w := d.loaded[filepath.Join(root, "crashy")].worker
		d.mu.Unlock()
		if n := w.starts.Load(); n != 2 {
			t.Fatalf("worker started %d times, want 2", n)
		}
	})

	t.Run("an import error is logged once with the hook's name", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "needs-httpx", map[string]string{
			"HOOK.yaml":  yamlFor("needs-httpx", "command:*"),
			"handler.py": "import herald_module_that_is_not_installed\n\ndef handle(e, c):\n    return None\n",
		})
		reg, d, lr := startDir(t, root, DirOptions{})
		lr.waitLog(t, "Error loading hook needs-httpx", "herald_module_that_is_not_installed")
		d.mu.Lock()
		w := d.loaded[filepath.Join(root, "needs-httpx")].worker
		d.mu.Unlock()
		// it keeps trying quietly (a later pip install is picked up)
		waitFor(t, func() bool { return w.starts.Load() >= 3 }, "three attempts")
		for i := 0; i < 3; i++ {
			if got := cmdReply(t, reg, "status"); got.Decision != "" {
				t.Fatalf("got %+v", got)
			}
		}
		if n := lr.count("Error loading hook needs-httpx"); n != 1 {
			t.Fatalf("import error logged %d times, want once:\n%s", n, lr)
		}
		if n := lr.count("hook failed"); n != 0 {
			t.Fatalf("events to a hook that never loaded were logged as failures:\n%s", lr)
		}
	})

	t.Run("no handle function", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "nohandle", map[string]string{
			"HOOK.yaml":  yamlFor("nohandle", "agent:start"),
			"handler.py": "def handler(e, c):\n    pass\n",
		})
		_, _, lr := startDir(t, root, DirOptions{})
		lr.waitLog(t, "nohandle", "no 'handle' function found")
	})

	t.Run("handler exception is logged with the hook's name; others go on", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "a-raises", map[string]string{
			"HOOK.yaml":  yamlFor("a-raises", "command:*"),
			"handler.py": "def handle(e, c):\n    raise ValueError('boom')\n",
		})
		writeHook(t, root, "b-answers", map[string]string{
			"HOOK.yaml":  yamlFor("b-answers", "command:*"),
			"handler.py": "def handle(e, c):\n    return {'decision': 'handled', 'message': 'b'}\n",
		})
		reg, _, lr := startDir(t, root, DirOptions{})
		if got := cmdReply(t, reg, "x"); got.Reply != "b" {
			t.Fatalf("got %+v", got)
		}
		lr.waitLog(t, "hook failed", "hook=a-raises", "ValueError: boom")
	})

	t.Run("observers in order; context defaults to {}", func(t *testing.T) {
		root := t.TempDir()
		out := filepath.Join(t.TempDir(), "seen.txt")
		writeHook(t, root, "order", map[string]string{
			"HOOK.yaml": yamlFor("order", "agent:start", "gateway:startup", "command:*"),
			"handler.py": `
import json
OUT = ` + pyStr(out) + `

def handle(event_type, context):
    if event_type.startswith("command:"):
        return {"decision": "handled", "message": open(OUT).read()}
    with open(OUT, "a") as f:
        f.write("%s %s\n" % (event_type, json.dumps(context, sort_keys=True)))
`,
		})
		reg, _, _ := startDir(t, root, DirOptions{})
		reg.Emit(GatewayStartup, nil)
		for i := 0; i < 20; i++ {
			reg.Emit(AgentStartEv, &AgentStart{Platform: "local", Message: strings.Repeat("x", i)})
		}
		// the interceptor is called after this subscriber's queued events
		got := cmdReply(t, reg, "status").Reply
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if len(lines) != 21 || lines[0] != "gateway:startup {}" {
			t.Fatalf("got %d lines:\n%s", len(lines), got)
		}
		for i, l := range lines[1:] {
			if !strings.Contains(l, `"message": "`+strings.Repeat("x", i)+`"`) {
				t.Fatalf("line %d out of order: %s", i+1, l)
			}
		}
	})

	t.Run("no interpreter: skipped with a clear warning", func(t *testing.T) {
		root := t.TempDir()
		writeHook(t, root, "py", map[string]string{
			"HOOK.yaml":  yamlFor("py", "agent:start"),
			"handler.py": "def handle(e, c):\n    pass\n",
		})
		reg, d, lr := startDir(t, root, DirOptions{Python: filepath.Join(t.TempDir(), "no-python")})
		if len(d.Hooks()) != 0 || reg.Has(AgentStartEv) {
			t.Fatal("hook loaded with no interpreter")
		}
		if lr.count("Skipping py", "hooks.python") != 1 {
			t.Fatalf("log:\n%s", lr)
		}
		emptyPath := t.TempDir()
		t.Setenv("PATH", emptyPath)
		_, _, lr = startDir(t, root, DirOptions{})
		if lr.count("Skipping py", "no python3 is on PATH") != 1 {
			t.Fatalf("log:\n%s", lr)
		}
	})
}

func pyStr(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

func TestPythonWorkerEnvironment(t *testing.T) {
	needPython(t)
	root := t.TempDir()
	writeHook(t, root, "env", map[string]string{
		"HOOK.yaml": "events: [command:*]\nenv:\n  - TELEGRAM_BOT_TOKEN\n",
		"handler.py": `
import os
def handle(e, c):
    return {"decision": "handled", "message": "%s|%s|%s" % (os.getenv("TELEGRAM_BOT_TOKEN"), os.getenv("OPENAI_API_KEY"), os.getenv("PLAIN"))}
`,
	})
	reg, d, _ := startDir(t, root, DirOptions{
		Environ: []string{"PATH=" + os.Getenv("PATH"), "PLAIN=yes"},
		Lookup: func(k string) (string, bool) {
			return map[string]string{"TELEGRAM_BOT_TOKEN": "123:abc", "OPENAI_API_KEY": "sk-x"}[k], k == "TELEGRAM_BOT_TOKEN" || k == "OPENAI_API_KEY"
		},
	})
	if h := d.Hooks(); len(h) != 1 || h[0].Name != "env" {
		t.Fatalf("name should default to the directory: %+v", h)
	}
	if got := cmdReply(t, reg, "status").Reply; got != "123:abc|None|yes" {
		t.Fatalf("got %q", got)
	}
}

// A handler sees what it would see inside Hermes' gateway: the gateway's
// working directory, HERMES_HOME (and HERALD_HOME) set to the home, the
// whole environment it is given; a module beside it is importable, one in
// the working directory is not.
func TestPythonWorkerSeesTheGateway(t *testing.T) {
	needPython(t)
	root, home := t.TempDir(), t.TempDir()
	writeHook(t, root, "where", map[string]string{
		"HOOK.yaml": yamlFor("where", "command:*"),
		"helper.py": "WHO = 'helper beside handler.py'\n",
		"handler.py": `
import json, os
import helper

def handle(event_type, context):
    return {"decision": "handled", "message": json.dumps({
        "cwd": os.getcwd(), "hermes_home": os.getenv("HERMES_HOME"), "herald_home": os.getenv("HERALD_HOME"),
        "token": os.getenv("MY_SERVICE_TOKEN"), "helper": helper.WHO})}
`,
	})
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	reg, _, lr := startDir(t, root, DirOptions{
		Home:    home,
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HERMES_HOME=/somewhere/else", "MY_SERVICE_TOKEN=tok-0123456789"},
	})
	var got map[string]string
	reply := cmdReply(t, reg, "status").Reply
	if err := json.Unmarshal([]byte(reply), &got); err != nil {
		t.Fatalf("reply %q: %v\nlog:\n%s", reply, err, lr)
	}
	want := map[string]string{"cwd": wd, "hermes_home": home, "herald_home": home, "token": "tok-0123456789", "helper": "helper beside handler.py"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

// A handler's logging calls keep their levels in herald's log, with the
// hook's name; what it prints stays an INFO line of hook output.
func TestPythonWorkerLoggingLevels(t *testing.T) {
	needPython(t)
	root := t.TempDir()
	writeHook(t, root, "chatty", map[string]string{
		"HOOK.yaml": yamlFor("chatty", "command:*"),
		"handler.py": `
import logging, sys
log = logging.getLogger(__name__)
logging.basicConfig(level=logging.WARNING, format="%(message)s")  # changes nothing, as in Hermes
logging.info("imported at info")

def handle(event_type, context):
    logging.error("root error %d", 1)
    log.warning("module warning")
    log.info("module info")
    log.debug("module debug")
    try:
        1 / 0
    except ZeroDivisionError:
        log.exception("it failed")
    sys.stderr.write("plain stderr line\n")
    return {"decision": "handled", "message": "ok"}
`,
	})
	reg, _, lr := startDir(t, root, DirOptions{}) // its recorder keeps every level
	if got := cmdReply(t, reg, "status"); got.Reply != "ok" {
		t.Fatalf("got %+v\nlog:\n%s", got, lr)
	}
	for _, want := range [][]string{
		{"INFO imported at info", "hook=chatty", "logger=root"},
		{"ERROR root error 1", "hook=chatty", "logger=root"},
		{"WARN module warning", "hook=chatty", "logger=hermes_hook_chatty"},
		{"INFO module info", "hook=chatty"},
		{"DEBUG module debug", "hook=chatty"},
		{"ERROR it failed", "ZeroDivisionError", "hook=chatty"},
		{"INFO [hooks] hook output", "line=plain stderr line", "hook=chatty"},
	} {
		lr.waitLog(t, want...)
	}
	if n := lr.count("hook output", "module"); n != 0 {
		t.Fatalf("logging records also logged as output:\n%s", lr)
	}
}
