package boot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
)

// HookName is the built-in hook's name, as Hermes' built-in had it.
const HookName = "boot-md"

// FileName is the checklist's name inside $HERALD_HOME.
const FileName = "BOOT.md"

// SilentMarker as the whole reply (trimmed) means there was nothing to
// report; a reply that merely contains it (quoting the checklist) is not
// silent.
const SilentMarker = "[SILENT]"

// Runner runs one agent turn; *agent.Agent is one.
type Runner interface {
	Run(ctx context.Context, prompt string, o agent.Options) (*agent.Result, error)
}

// Config wires the hook.
type Config struct {
	// Home is $HERALD_HOME; the checklist is Home/BOOT.md.
	Home string
	// Agent must be the gateway's own agent (same resolved model,
	// endpoint and credentials, same tools).
	Agent Runner
	// MaxIterations bounds the checklist's turn (default 20).
	MaxIterations int
	Log           *slog.Logger
}

// Hook is the BOOT.md startup checklist. Its goroutines are owned by it:
// Close cancels a checklist still running and waits for it.
type Hook struct {
	cfg    Config
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns the hook; attach it with Subscription.
func New(cfg Config) *Hook {
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = 20
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	h := &Hook{cfg: cfg, log: cfg.Log}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h
}

// Subscription is the built-in gateway:startup hook.
func (h *Hook) Subscription() hooks.Subscription {
	return hooks.Subscription{
		Name:   HookName + " (built-in)",
		Attach: hooks.AttachGo,
		Events: []string{hooks.GatewayStartup},
		Handler: func(ctx context.Context, ev hooks.Event) (any, error) {
			h.Start()
			return nil, nil
		},
	}
}

// Start reads the checklist and, when there is one, runs it in the
// background; it never waits for the agent. A missing or blank BOOT.md
// does nothing.
func (h *Hook) Start() {
	content, ok, err := h.read()
	if err != nil {
		h.log.Error("boot-md: cannot read checklist", "err", err)
		return
	}
	if !ok {
		return
	}
	h.log.Info(fmt.Sprintf("Running BOOT.md (%d chars)", utf8.RuneCountInString(content)))
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		reply, err := h.run(h.ctx, content)
		if err != nil {
			h.log.Error("boot-md agent failed: " + err.Error())
			return
		}
		h.log.Info(Summary(reply))
	}()
}

// Summary is the log line for a finished checklist.
func Summary(reply string) string {
	if r := strings.TrimSpace(reply); r == "" || r == SilentMarker {
		return "boot-md completed (nothing to report)"
	}
	return "boot-md completed: " + firstChars(reply, 200)
}

// ErrNoChecklist is returned by RunOnce when BOOT.md is missing or blank.
var ErrNoChecklist = errors.New("no BOOT.md checklist")

// RunOnce runs the checklist in the foreground and returns the reply
// (herald boot run).
func (h *Hook) RunOnce(ctx context.Context) (string, error) {
	content, ok, err := h.read()
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%w: %s is missing or empty", ErrNoChecklist, h.Path())
	}
	h.log.Info(fmt.Sprintf("Running BOOT.md (%d chars)", utf8.RuneCountInString(content)))
	return h.run(ctx, content)
}

// Path is the checklist file.
func (h *Hook) Path() string { return filepath.Join(h.cfg.Home, FileName) }

// Wait blocks until a checklist started by the hook has finished.
func (h *Hook) Wait() { h.wg.Wait() }

// Close stops a running checklist and waits for it.
func (h *Hook) Close() {
	h.cancel()
	h.wg.Wait()
}

func (h *Hook) read() (string, bool, error) {
	b, err := herald.ReadRegularFile(h.Path()) // never waits on a named pipe
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	content := strings.TrimSpace(string(b))
	return content, content != "", nil
}

// run is the one-shot agent: platform gateway, no history, no approver
// (dangerous commands are denied), at most MaxIterations steps, with the
// gateway agent's tools.
func (h *Hook) run(ctx context.Context, content string) (reply string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("crashed: %v", p)
		}
	}()
	if h.cfg.Agent == nil {
		return "", errors.New("no agent configured")
	}
	res, err := h.cfg.Agent.Run(ctx, Prompt(content), agent.Options{
		Turn:          agent.Turn{SessionID: "boot-md", Platform: "gateway", Surface: "gateway"},
		MaxIterations: h.cfg.MaxIterations,
	})
	if err != nil {
		return "", err
	}
	return res.FinalResponse, nil
}

// Prompt frames the checklist for the agent, with the [SILENT] convention.
func Prompt(content string) string {
	return "You are running a startup boot checklist. Follow the BOOT.md instructions below exactly.\n\n" +
		"---\n" + content + "\n---\n\n" +
		"Execute each instruction. If you need to send a message to a platform, use the send_message tool.\n" +
		"If nothing needs attention and there is nothing to report, reply with ONLY: [SILENT]"
}

func firstChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
