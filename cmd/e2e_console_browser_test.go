package cmd_test

// The web console in a real browser: headless Chromium driven by chromedp
// against a whole gateway. One Chromium serves the whole test binary (a
// tab per test); closeBrowser stops it from TestMain. Every wait is a DOM
// condition polled in the page, under a generous deadline.
//
// The tests need Debian's chromium (scripts/test installs it); without
// one they skip, loudly. HERALD_CHROMIUM names another binary.
//
// The console's own endpoints (tickets, sessions, hooks, presses) are
// served by the gateway; TestConsoleWithoutOptionalEndpoints checks the
// page against a listener where they answer 404.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/heraldgw/herald/adapters/local"
	"github.com/heraldgw/herald/agent/agenttest"
	"github.com/heraldgw/herald/cmd/cmdtest"
	"github.com/heraldgw/herald/hooks"
)

// browser is the one Chromium of the test binary.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	// skip says why there is none
	skip string
}

func chromiumPath() string {
	if p := os.Getenv("HERALD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func startBrowser() {
	path := chromiumPath()
	if path == "" {
		browser.skip = "BROWSER TESTS SKIPPED: no Chromium found (install Debian's chromium, as scripts/test does, or set HERALD_CHROMIUM)"
		fmt.Fprintln(os.Stderr, browser.skip)
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.WindowSize(1280, 860))
	if os.Geteuid() == 0 {
		// Chromium refuses to run as root with its sandbox
		opts = append(opts, chromedp.NoSandbox)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil {
		cancelCtx()
		cancelAlloc()
		browser.skip = fmt.Sprintf("BROWSER TESTS SKIPPED: %s does not start: %v", path, err)
		fmt.Fprintln(os.Stderr, browser.skip)
		return
	}
	browser.ctx = ctx
	browser.cancel = func() { cancelCtx(); cancelAlloc() }
}

// closeBrowser stops the shared Chromium (TestMain calls it).
func closeBrowser() {
	if browser.cancel != nil {
		browser.cancel()
	}
}

// consoleTab is the console open in a tab of the shared browser.
type consoleTab struct {
	t       *testing.T
	g       *cmdtest.Gateway
	ctx     context.Context
	dialogs atomic.Int32

	mu   sync.Mutex
	urls []string // every URL the page requested
}

// newTab opens a tab of the shared browser, or skips the test when there
// is no browser.
func newTab(t *testing.T) *consoleTab {
	t.Helper()
	browser.once.Do(startBrowser)
	if browser.skip != "" {
		t.Skip(browser.skip)
	}
	tab, cancelTab := chromedp.NewContext(browser.ctx)
	t.Cleanup(cancelTab)
	ctx, cancel := context.WithTimeout(tab, 2*time.Minute)
	t.Cleanup(cancel)
	c := &consoleTab{t: t, ctx: ctx}
	// an alert would block the page: count it and close it
	if err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			c.dialogs.Add(1)
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{})
		case *network.EventRequestWillBeSent:
			c.mu.Lock()
			c.urls = append(c.urls, ev.Request.URL)
			c.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return c
}

// openConsole opens the console on g in a new tab, enters the token and
// waits until the page has loaded its history and its event stream is
// live.
func openConsole(t *testing.T, g *cmdtest.Gateway) *consoleTab {
	t.Helper()
	c := newTab(t)
	c.g = g
	c.do("open the console",
		chromedp.Navigate("http://"+g.Addr+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), g.Token),
		chromedp.Click(chromedp.ID("save")))
	c.waitReady()
	return c
}

func (c *consoleTab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	if err := chromedp.Do(c.ctx, steps...); err != nil {
		c.t.Fatalf("%s: %v%s", what, err, c.gatewayLog())
	}
}

// wait polls the JavaScript condition cond in the page until it holds.
func (c *consoleTab) wait(what, cond string) {
	c.t.Helper()
	if _, err := chromedp.Run(c.ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(90*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		c.t.Fatalf("waiting for %s (%s): %v%s", what, cond, err, c.gatewayLog())
	}
}

func (c *consoleTab) gatewayLog() string {
	if c.g == nil {
		return ""
	}
	return "\ngateway log:\n" + c.g.Log()
}

func (c *consoleTab) eval(expr string) bool {
	c.t.Helper()
	v, err := chromedp.Run(c.ctx, chromedp.Evaluate[bool](expr))
	if err != nil {
		c.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func (c *consoleTab) waitReady() {
	c.t.Helper()
	c.wait("the page to be ready", `document.body.dataset.ready === 'true' && document.body.dataset.live === 'true'`)
}

// say types text into the composer and sends it with Enter.
func (c *consoleTab) say(text string) {
	c.t.Helper()
	c.do("send "+text, chromedp.SendKeys(chromedp.ID("input"), text+kb.Enter))
}

// botSays is a condition: a message from herald whose text contains s.
func botSays(s string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('#messages .msg.bot .body')].some(b => b.textContent.includes(%q))`, s)
}

// The chat against the offline echo model: the token entered once, `hi`
// answered and rendered; markup and a javascript: link in a reply render
// as text and an inert link (no img element, no alert); the trace shows
// agent:start … agent:end of the turn; a reload shows the history.
func TestConsoleChat(t *testing.T) {
	g := cmdtest.Start(t, cmdtest.Options{})
	c := openConsole(t, g)

	c.say("hi")
	c.wait("the echo reply", botSays("[echo model — offline] hi"))

	c.say("<img src=x onerror=alert(1)> [click](javascript:alert(1)) **bold** `code` <script>alert(2)</script>")
	c.wait("the echoed markup", botSays("<img src=x onerror=alert(1)>"))
	if c.eval(`document.querySelectorAll('#messages img, #messages script').length > 0`) {
		t.Fatal("markup in a reply became elements")
	}
	if c.eval(`[...document.querySelectorAll('#messages a')].some(a => !/^(https?|mailto):/.test(a.href))`) {
		t.Fatal("a javascript: link became a live link")
	}
	if !c.eval(`[...document.querySelectorAll('#messages .msg.bot strong')].some(s => s.textContent === 'bold') && [...document.querySelectorAll('#messages .msg.bot code')].some(s => s.textContent === 'code')`) {
		t.Fatal("bold and inline code were not rendered")
	}
	if !c.eval(`[...document.querySelectorAll('#messages .msg.bot .body')].some(b => b.textContent.includes('[click](javascript:alert(1))'))`) {
		t.Fatal("the javascript: link is not shown as text")
	}

	// the trace: agent:start … agent:end of the turn that said hi
	c.do("open the trace", chromedp.Click(chromedp.CSS(`.tab[data-view="trace"]`)))
	c.wait("agent:start and agent:end of the turn", `(() => {
		const rows = [...document.querySelectorAll('#trace .trace-row')];
		const of = (ev) => rows.some(r => r.dataset.event === ev && r.dataset.chat.includes('web') && r.querySelector('.payload').textContent.includes('"message": "hi"'));
		return of('agent:start') && of('agent:end');
	})()`)
	// each event is one row: a "message" event too (EventSource's
	// onmessage and a "message" listener are the same event)
	c.wait("the reply's message event", `[...document.querySelectorAll('#trace .trace-row')].some(r => r.dataset.event === 'message')`)
	if c.eval(`(() => {
		const ids = [...document.querySelectorAll('#trace .trace-row')].filter(r => r.dataset.event === 'message').map(r => JSON.parse(r.querySelector('.payload').textContent).id);
		return new Set(ids).size !== ids.length;
	})()`) {
		t.Fatal("a message event is shown twice in the trace")
	}
	c.do("filter the trace by agent:end",
		chromedp.SetValue(chromedp.ID("trace-event"), "agent:end"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('trace-event').dispatchEvent(new Event('change'))`))
	if c.eval(`[...document.querySelectorAll('#trace .trace-row')].some(r => !r.hidden && r.dataset.event !== 'agent:end')`) {
		t.Fatal("the event filter left other events shown")
	}

	// a reload shows the history (and asks for no token)
	c.do("reload", chromedp.Reload())
	c.waitReady()
	c.wait("the history after a reload", botSays("[echo model — offline] hi"))
	c.wait("my own message in the history", `[...document.querySelectorAll('#messages .msg.me')].some(m => m.textContent.includes('hi'))`)
	// a reply the page did not ask for (another client wrote in the
	// chat) shows too, and every reply shows once
	g.Say(t, "web", "from elsewhere")
	c.wait("a reply the page did not ask for", botSays("offline] from elsewhere"))
	if !c.eval(`[...document.querySelectorAll('#messages .msg.bot .body')].filter(b => b.textContent === '[echo model — offline] hi').length === 1`) {
		t.Fatal("the reply to hi is shown more or less than once")
	}
	if n := c.dialogs.Load(); n != 0 {
		t.Fatalf("%d JavaScript dialogs opened", n)
	}
	c.noTokenInURLs()
}

// noTokenInURLs fails the test if the page put the token in a URL.
func (c *consoleTab) noTokenInURLs() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.urls) == 0 {
		c.t.Fatal("no request was seen")
	}
	for _, u := range c.urls {
		if strings.Contains(u, c.g.Token) {
			c.t.Fatalf("the page requested %s, with the token in the URL", u)
		}
	}
}

// An approval prompt's buttons: `run: rm -rf ./x` makes the echo model ask
// for that terminal command; the prompt says whose session it is for
// (in the chat and in the trace); Approve once runs it, and its tool
// card shows the result.
func TestConsoleApprovalButtons(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+work+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home})
	c := openConsole(t, g)
	c.say("run: rm -rf ./x")
	c.wait("the approval buttons", `[...document.querySelectorAll('#messages .buttons button')].some(b => b.textContent === 'Approve once')`)
	// the prompt and its row in the trace say whose session it is for
	c.wait("the prompt's session", `[...document.querySelectorAll('#messages .msg.bot.prompt .owner')].some(o => o.textContent === 'approval for local · web · web-user' && o.title.startsWith('agent:main:local:'))`)
	c.wait("the approval's session in the trace", `[...document.querySelectorAll('#trace .trace-row')].some(r => r.dataset.event === 'pre_approval_request' && r.querySelector('.chat').textContent === 'local · web · web-user')`)
	// the prompt, marked to be found again once it is edited
	c.do("mark the prompt", chromedp.Evaluate[chromedp.Void](`(() => {
		const m = [...document.querySelectorAll('#messages .buttons button')].find(b => b.textContent === 'Approve once').closest('.msg');
		m.dataset.prompt = m.querySelector('.body').textContent;
	})()`))
	c.do("approve once", chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll('#messages .buttons button')].find(b => b.textContent === 'Approve once')`)))
	c.wait("the terminal card with its result", `[...document.querySelectorAll('#messages details.tool.done')].some(d => d.querySelector('.tool-name').textContent.includes('terminal') && d.querySelector('.tool-args').textContent.includes('rm -rf ./x'))`)
	c.wait("the reply after the command", botSays("the command returned"))
	// the gateway closes the prompt (message_update): the same message,
	// its text replaced, its buttons gone
	c.wait("the prompt closed in place", `(() => {
		const m = document.querySelector('#messages .msg[data-prompt]');
		return m !== null && m.querySelectorAll('.buttons button').length === 0 && m.querySelector('.body').textContent !== m.dataset.prompt;
	})()`)
	if c.eval(`[...document.querySelectorAll('#messages .buttons button')].some(b => b.textContent === 'Approve once')`) {
		t.Fatal("an approval button is still shown")
	}
}

// The sessions view lists the chat and opens its transcript; the hooks
// view lists a shell hook from config.yaml.
func TestConsoleSessionsAndHooks(t *testing.T) {
	home := t.TempDir()
	cfg := "hooks:\n  pre_llm_call:\n    - command: \"/bin/true\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Args: []string{"--accept-hooks"}})
	c := openConsole(t, g)
	g.Say(t, "web", "hello from the api")
	c.wait("the reply", botSays("offline] hello from the api"))

	// the trace shows what the shell hook answered at pre_llm_call
	c.do("open the trace", chromedp.Click(chromedp.CSS(`.tab[data-view="trace"]`)))
	c.wait("the hook's outcome on pre_llm_call", `[...document.querySelectorAll('#trace .trace-row')].some(r => r.dataset.event === 'pre_llm_call' && r.querySelector('.attachments').textContent.includes('/bin/true'))`)

	c.wait("the sessions tab", `!document.querySelector('.tab[data-view="sessions"]').hidden`)
	c.do("open sessions", chromedp.Click(chromedp.CSS(`.tab[data-view="sessions"]`)))
	c.wait("the chat in the list", `[...document.querySelectorAll('#sessions tbody tr')].some(r => r.children[1].textContent === 'web')`)
	c.do("open the session", chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll('#sessions tbody tr')].find(r => r.children[1].textContent === 'web')`)))
	c.wait("the transcript", `document.getElementById('transcript').textContent.includes('hello from the api')`)
	c.do("end the session", chromedp.Click(chromedp.ID("session-end")))
	c.wait("the session ended", `document.getElementById('session-end').disabled && [...document.querySelectorAll('#sessions tbody tr')].some(r => r.children[1].textContent === 'web' && r.children[6].textContent === 'ended')`)

	c.wait("the hooks tab", `!document.querySelector('.tab[data-view="hooks"]').hidden`)
	c.do("open hooks", chromedp.Click(chromedp.CSS(`.tab[data-view="hooks"]`)))
	c.wait("the shell hook", `[...document.querySelectorAll('#hooks .hook-event[data-event="pre_llm_call"] .hook')].some(h => h.textContent.includes('/bin/true') && h.textContent.includes('shell'))`)
	c.do("test it", chromedp.Click(chromedp.CSS(`#hooks .hook-event[data-event="pre_llm_call"] .hook button`)))
	c.wait("its answer", `document.querySelector('#hooks .hook-event[data-event="pre_llm_call"] .hook-result') !== null`)
	c.noTokenInURLs()
}

// The Hooks view's "Test this hook" works on every row: a shell hook, a
// directory hook and a Go plugin each show their answer.
func TestConsoleHooksTestEveryRow(t *testing.T) {
	home := t.TempDir()
	cfg := "hooks:\n  pre_llm_call:\n    - command: \"/bin/true\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, filepath.Join(home, "hooks", "no-status"), map[string]string{
		"HOOK.yaml": "events: [command:status]\ncommand: [./deny.sh]\n",
		"deny.sh":   "#!/bin/sh\ncat >/dev/null\necho '{\"decision\": \"deny\", \"message\": \"status is off today\"}'\n",
	})
	allowDir(t, home, "no-status")
	guard := hooks.Plugin{Name: "tool-guard", Register: func(c *hooks.PluginContext) error {
		c.RegisterHook(hooks.PreToolCallHook, hooks.Func(func(ctx context.Context, p *hooks.PreToolCall) *hooks.ToolDecision {
			return hooks.Block("the plugin blocks " + p.ToolName)
		}))
		return nil
	}}
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Args: []string{"--accept-hooks"}, Plugins: []hooks.Plugin{guard}})
	c := openConsole(t, g)
	c.wait("the hooks tab", `!document.querySelector('.tab[data-view="hooks"]').hidden`)
	c.do("open hooks", chromedp.Click(chromedp.CSS(`.tab[data-view="hooks"]`)))
	row := func(event, name string) string {
		return fmt.Sprintf(`[...document.querySelectorAll('#hooks .hook-event[data-event=%q] .hook')].find(h => h.querySelector('strong').textContent === %q)`, event, name)
	}
	rows := []struct{ event, name, answer string }{
		{"pre_llm_call", "/bin/true", "none"},
		{"command:status", "no-status", "block status is off today"},
		{"pre_tool_call", "tool-guard", "block the plugin blocks terminal"},
	}
	for _, r := range rows {
		c.wait("the row of "+r.name, row(r.event, r.name)+` !== undefined`)
		c.do("test "+r.name, chromedp.Click(chromedp.JSPath(row(r.event, r.name)+`.querySelector('button')`)))
		c.wait("the answer of "+r.name, fmt.Sprintf(`(() => { const res = %s.querySelector('.hook-result'); return res !== null && res.textContent.replace(/\s+/g, ' ').trim().startsWith(%q); })()`, row(r.event, r.name), r.answer))
	}
}

// A command a plugin registered shows in the live trace (the page's
// EventSource listens to the names the ticket names beside the
// catalogue's), as a built-in command does.
func TestConsolePluginCommandInTheTrace(t *testing.T) {
	weather := hooks.Plugin{Name: "weather", Register: func(c *hooks.PluginContext) error {
		return c.RegisterCommand("weather", "the weather", "<city>", func(ctx context.Context, call *hooks.CommandCall) (string, error) {
			return "Sunny in " + call.RawArgs + ".", nil
		})
	}}
	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{weather}})
	c := openConsole(t, g)
	c.say("/weather Paris")
	c.wait("the command's answer", botSays("Sunny in Paris."))
	c.do("open the trace", chromedp.Click(chromedp.CSS(`.tab[data-view="trace"]`)))
	c.wait("command:weather in the trace", `[...document.querySelectorAll('#trace .trace-row')].some(r => r.dataset.event === 'command:weather' && r.querySelector('.payload').textContent.includes('"args": "Paris"'))`)
}

// A turn that waits on an approval, answered by typing (which works on
// every gateway): the chat shows the turn working, the prompt's command
// as a code block (no literal fences), the terminal call as a card with
// its arguments and result once approved; Esc stops a turn that waits.
func TestConsoleWorkingToolCardAndStop(t *testing.T) {
	home, work := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("agent:\n  workdir: "+work+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := cmdtest.Start(t, cmdtest.Options{Home: home})
	c := openConsole(t, g)

	c.say("run: rm -rf ./x")
	c.wait("the approval prompt", botSays("needs your approval"))
	c.wait("the working state", `(() => { const w = document.getElementById('working'); return !w.hidden && /working… \d+s/.test(w.textContent); })()`)
	if !c.eval(`[...document.querySelectorAll('#messages .msg.bot pre code')].some(c => c.textContent === 'rm -rf ./x') && ![...document.querySelectorAll('#messages .msg.bot')].some(m => m.textContent.includes('` + "```" + `'))`) {
		t.Fatal("the prompt's command is not a code block")
	}
	c.say("/approve")
	c.wait("the terminal card with its result", `[...document.querySelectorAll('#messages details.tool.done')].some(d =>
		d.querySelector('.tool-name').textContent.includes('terminal') && d.querySelector('.tool-args').textContent.includes('rm -rf ./x') &&
		d.querySelector('.tool-result').textContent !== '…' && /✓/.test(d.querySelector('.tool-state').textContent))`)
	c.wait("the reply after the command", botSays("the command returned"))
	c.wait("the turn over", `document.getElementById('working').hidden`)

	// Esc sends /stop while a turn runs
	c.say("run: rm -rf ./y")
	c.wait("the second prompt", `document.querySelectorAll('#messages .msg.bot .body').length > 0 && [...document.querySelectorAll('#messages .msg.bot pre code')].some(c => c.textContent === 'rm -rf ./y')`)
	c.wait("the working state", `!document.getElementById('working').hidden`)
	c.do("press Esc", chromedp.KeyEvent(kb.Escape))
	c.wait("/stop sent", `[...document.querySelectorAll('#messages .msg.me')].some(m => m.textContent.includes('/stop'))`)
	c.wait("the turn stopped", `document.getElementById('working').hidden`)
}

// A reply the model streams grows in place in the chat: the page shows
// its first words while the model still writes, then the whole text, in
// one message.
func TestConsoleStreamedReply(t *testing.T) {
	const answer = "Streaming: the first words, then some more, then the end."
	gates := []chan struct{}{make(chan struct{}), make(chan struct{})}
	srv := agenttest.New(t, agenttest.Reply{Content: answer, Pieces: 3, Gates: gates})
	g := cmdtest.Start(t, cmdtest.Options{Env: fakeModelEnv(srv)})
	c := openConsole(t, g)
	parts := agenttest.Split(answer, 3)
	onlyBot := func(text string) string {
		return fmt.Sprintf(`(() => { const b = [...document.querySelectorAll('#messages .msg.bot .body')]; return b.length === 1 && b[0].textContent === %q; })()`, text)
	}

	c.say("tell me")
	c.wait("the first words while the model writes", onlyBot(parts[0]))
	close(gates[0])
	c.wait("the reply grown", onlyBot(parts[0]+parts[1]))
	close(gates[1])
	c.wait("the whole reply, once", onlyBot(answer))
	c.wait("the turn over", `document.getElementById('working').hidden`)
	if !c.eval(onlyBot(answer)) {
		t.Fatal("the reply changed after the turn ended")
	}
}

// TestConsoleScreenshots walks every view (chat with a tool card, an
// approval prompt, trace, sessions, hooks) and takes a screenshot of
// each into the directory HERALD_SCREENSHOTS names (scripts/screenshots
// runs it for docs/console/), or into a temporary one.
func TestConsoleScreenshots(t *testing.T) {
	dir := os.Getenv("HERALD_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	home, work := t.TempDir(), t.TempDir()
	hook := filepath.Join(home, "add-context.sh")
	script := "#!/bin/sh\ncat >/dev/null\necho '{\"context\": \"The repository is clean.\"}'\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "agent:\n  workdir: " + work + "\nhooks:\n  pre_llm_call:\n    - command: \"" + hook + "\"\n  pre_tool_call:\n    - matcher: \"terminal\"\n      command: \"/bin/true\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, filepath.Join(home, "hooks", "no-status"), map[string]string{
		"HOOK.yaml": "events: [command:status]\ncommand: [./deny.sh]\n",
		"deny.sh":   "#!/bin/sh\ncat >/dev/null\necho '{\"decision\": \"deny\", \"message\": \"status is off today\"}'\n",
	})
	allowDir(t, home, "no-status")
	audit := hooks.Plugin{Name: "rm-guard", Register: func(c *hooks.PluginContext) error {
		c.RegisterHook(hooks.PreToolCallHook, hooks.Func(func(ctx context.Context, p *hooks.PreToolCall) *hooks.ToolDecision {
			if cmd, _ := p.Args["command"].(string); strings.Contains(cmd, "rm -rf /") {
				return hooks.Block("not the whole disk")
			}
			return nil
		}))
		return nil
	}}
	g := cmdtest.Start(t, cmdtest.Options{Home: home, Args: []string{"--accept-hooks"}, Plugins: []hooks.Plugin{audit}})
	c := openConsole(t, g)
	c.do("set the viewport", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 1200, Height: 820, DeviceScaleFactor: 1})
		return err
	}))
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(c.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	c.say("hi")
	c.wait("the echo reply", botSays("offline] hi"))
	rich := "Markdown is **rendered**, `inline code` too:\n- a list\n- [a link](https://example.com)\n```\nfenced code\n```\n<img src=x onerror=alert(1)> stays text."
	c.do("send Markdown", chromedp.SetValue(chromedp.ID("input"), rich), chromedp.Click(chromedp.ID("send")))
	c.wait("the Markdown reply", botSays("stays text"))
	c.say("run: ls")
	c.wait("the tool card", `document.querySelector('#messages details.tool.done') !== null`)
	c.wait("the reply after the command", botSays("the command returned"))
	c.do("open the tool card", chromedp.Click(chromedp.CSS(`#messages details.tool.done summary`)),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('messages').scrollTop = 1e9`))
	shot("chat")

	// an approval prompt with its buttons, answered by one
	c.say("run: rm -rf ./old")
	c.wait("the approval buttons", `[...document.querySelectorAll('#messages .buttons button')].some(b => b.textContent === 'Approve once')`)
	c.wait("whose session the prompt is for", `document.querySelector('#messages .msg.bot.prompt .owner') !== null`)
	c.do("scroll down", chromedp.Evaluate[chromedp.Void](`document.getElementById('messages').scrollTop = 1e9`))
	shot("approval")
	c.do("approve once", chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll('#messages .buttons button')].find(b => b.textContent === 'Approve once')`)))
	c.wait("the prompt closed", `![...document.querySelectorAll('#messages .buttons button')].some(b => b.textContent === 'Approve once')`)

	c.do("open the trace", chromedp.Click(chromedp.CSS(`.tab[data-view="trace"]`)))
	c.wait("pre_tool_call in the trace", `[...document.querySelectorAll('#trace .trace-row')].some(r => r.dataset.event === 'pre_tool_call')`)
	c.do("open a row", chromedp.Click(chromedp.JSPath(`[...document.querySelectorAll('#trace .trace-row')].find(r => r.dataset.event === 'pre_tool_call').querySelector('summary')`)))
	c.wait("what the hook answered at pre_tool_call", `[...document.querySelectorAll('#trace .trace-row')].find(r => r.dataset.event === 'pre_tool_call').querySelector('.attachments table') !== null`)
	c.do("show the answer", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('#trace .trace-row')].find(r => r.dataset.event === 'pre_tool_call').querySelector('.attachments').scrollIntoView({block: 'end'})`))
	shot("trace")

	c.wait("the sessions tab", `!document.querySelector('.tab[data-view="sessions"]').hidden`)
	c.do("open sessions", chromedp.Click(chromedp.CSS(`.tab[data-view="sessions"]`)))
	c.wait("the chat in the list", `document.querySelector('#sessions tbody tr') !== null`)
	c.do("open the session", chromedp.Click(chromedp.CSS(`#sessions tbody tr`)))
	c.wait("the transcript", `document.getElementById('transcript').childElementCount > 0`)
	shot("sessions")

	c.wait("the hooks tab", `!document.querySelector('.tab[data-view="hooks"]').hidden`)
	c.do("open hooks", chromedp.Click(chromedp.CSS(`.tab[data-view="hooks"]`)))
	c.wait("the hooks", `document.querySelectorAll('#hooks .hook button').length >= 4`)
	c.do("test each", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('#hooks .hook button').forEach(b => b.click())`))
	c.wait("their answers", `[...document.querySelectorAll('#hooks .hook')].every(h => h.querySelector('.hook-result') !== null)`)
	shot("hooks")
}

// The console's Markdown renderer (console/markdown.js) in the browser:
// each form renders to the elements it should; text that looks like
// markup stays text; links are kept only for http, https and mailto; and
// for thousands of random mixtures of Markdown and markup the output
// holds only the renderer's own elements and safe links.
func TestConsoleMarkdown(t *testing.T) {
	c := newTab(t)
	srv := httptest.NewServer(local.New(local.Config{Token: "t"}).Handler(nil))
	t.Cleanup(srv.Close)
	c.do("open the page", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("token")))
	render := func(md string) string {
		t.Helper()
		in, _ := json.Marshal(md)
		out, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](fmt.Sprintf(`import('/console/markdown.js').then(m => {
			const d = document.createElement('div'); d.append(m.render(%s)); return d.innerHTML; })`, in), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("render %q: %v", md, err)
		}
		return out
	}
	const rel = ` target="_blank" rel="noopener noreferrer nofollow"`
	for _, tc := range []struct{ md, html string }{
		{"plain", "<p>plain</p>"},
		{"**b** *i* __b2__ _i2_ `c`", "<p><strong>b</strong> <em>i</em> <strong>b2</strong> <em>i2</em> <code>c</code></p>"},
		{"a\nb", "<p>a<br>b</p>"},
		{"snake_case_name and 2*3*4", "<p>snake_case_name and 2<em>3</em>4</p>"},
		{"```go\nx := <b>\n\n  y\n```", `<pre><code data-lang="go">x := &lt;b&gt;` + "\n\n  y</code></pre>"},
		{"```\nnever closed", "<pre><code>never closed</code></pre>"},
		{"```js title=x\ny\n```\nafter", `<pre><code data-lang="js">y</code></pre><p>after</p>`},
		{"```a`b", "<p>``<code>a</code>b</p>"},
		{">>>>>>>>>> deep", strings.Repeat("<blockquote>", 8) + "<p>&gt;&gt; deep</p>" + strings.Repeat("</blockquote>", 8)},
		{"`<script>alert(1)</script>`", "<p><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></p>"},
		{"- a\n- **b**\n  more", "<ul><li>a</li><li><strong>b</strong> more</li></ul>"},
		{"2. a\n3. b", `<ol start="2"><li>a</li><li>b</li></ol>`},
		{"# T\n###### six", "<h3>T</h3><h6>six</h6>"},
		{"> q\n> r", "<blockquote><p>q<br>r</p></blockquote>"},
		{"[x](https://e.com/a?b=1&c=2)", `<p><a href="https://e.com/a?b=1&amp;c=2"` + rel + `>x</a></p>`},
		{"[**b**](mailto:a@b.c)", `<p><a href="mailto:a@b.c"` + rel + `><strong>b</strong></a></p>`},
		{"see https://e.com/x.", `<p>see <a href="https://e.com/x"` + rel + `>https://e.com/x</a>.</p>`},
		{"[x](javascript:alert(1))", "<p>[x](javascript:alert(1))</p>"},
		{"[x](JaVaScRiPt:alert(1))", "<p>[x](JaVaScRiPt:alert(1))</p>"},
		{"[x]( javascript:alert(1) )", "<p>[x]( javascript:alert(1) )</p>"},
		{"[x](data:text/html;base64,PHNjcmlwdD4=)", "<p>[x](data:text/html;base64,PHNjcmlwdD4=)</p>"},
		{"[x](/relative)", "<p>[x](/relative)</p>"},
		{"<img src=x onerror=alert(1)>", "<p>&lt;img src=x onerror=alert(1)&gt;</p>"},
		{`<a href="javascript:alert(1)">x</a>`, `<p>&lt;a href="javascript:alert(1)"&gt;x&lt;/a&gt;</p>`},
	} {
		if got := render(tc.md); got != tc.html {
			t.Errorf("render(%q)\n got %s\nwant %s", tc.md, got, tc.html)
		}
	}

	bad, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](`import('/console/markdown.js').then(m => {
		const parts = ['**', '*', '_', '__', '`+"`"+`', '`+"```"+`', '~~~', '`+"```js x"+`', '[', ']', '(', ')', '](', 'javascript:', 'JAVASCRIPT:', 'data:', 'http://x.y/', 'https://x.y/a_b', 'mailto:a@b',
			'<img src=x onerror=alert(1)>', '<script>alert(1)</script>', '\n', '\n\n', '- ', '1. ', '> ', '# ', 'a', 'b c', ' ', '&', '"', "'", '<', '>', '\\'];
		const tags = new Set(['P', 'BR', 'STRONG', 'EM', 'CODE', 'PRE', 'A', 'UL', 'OL', 'LI', 'BLOCKQUOTE', 'H3', 'H4', 'H5', 'H6']);
		const attrs = new Set(['href', 'target', 'rel', 'data-lang', 'start']);
		let seed = 1;
		const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
		for (let i = 0; i < 3000; i++) {
			let md = '';
			for (let j = rand(40); j >= 0; j--) md += parts[rand(parts.length)];
			const d = document.createElement('div');
			d.append(m.render(md));
			for (const e of d.querySelectorAll('*')) {
				if (!tags.has(e.tagName)) return md + ' → <' + e.tagName + '>';
				for (const a of e.attributes) if (!attrs.has(a.name)) return md + ' → attribute ' + a.name;
				if (e.tagName === 'A' && !/^(https?|mailto):/.test(e.href)) return md + ' → link ' + e.href;
			}
		}
		return '';
	})`, chromedp.EvalAwaitPromise))
	if err != nil || bad != "" {
		t.Fatalf("random Markdown: %q %v", bad, err)
	}
	if n := c.dialogs.Load(); n != 0 {
		t.Fatalf("%d JavaScript dialogs opened", n)
	}
}

// Against a listener without the event stream (its tickets and itself),
// sessions or hooks (each answers 404, as an older gateway or a proxy
// that passes only part of /v1/ would), the console still loads and
// signs in, hides what it cannot show, says the stream is missing, and
// shows no error.
func TestConsoleWithoutOptionalEndpoints(t *testing.T) {
	c := newTab(t)
	h := local.New(local.Config{Token: "t"}).Handler(nil)
	var refused atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == "/v1/events" || p == "/v1/events/ticket" || p == "/v1/sessions" || strings.HasPrefix(p, "/v1/sessions/") ||
			p == "/v1/hooks" || strings.HasPrefix(p, "/v1/hooks/") {
			refused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"not found"}`)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c.do("sign in",
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), "t"),
		chromedp.Click(chromedp.ID("save")))
	c.wait("the page ready without a stream", `document.body.dataset.ready === 'true' && document.getElementById('conn').textContent === 'no event stream'`)
	c.wait("the optional tabs hidden", `document.querySelector('.tab[data-view="sessions"]').hidden && document.querySelector('.tab[data-view="hooks"]').hidden`)
	if c.eval(`document.querySelectorAll('#messages .msg.error').length > 0 || !document.getElementById('auth').hidden`) {
		t.Fatal("the console shows an error or asks for the token again")
	}
	if refused.Load() == 0 {
		t.Fatal("the page asked for none of the endpoints that answer 404")
	}
}
