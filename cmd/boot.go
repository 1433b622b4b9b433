package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/heraldgw/herald"

	"github.com/heraldgw/herald/boot"
	"github.com/heraldgw/herald/config"
)

// The BOOT.md checklist: a built-in gateway:startup hook (boot.enabled,
// default on) and `herald boot run`.

func init() {
	registerCommand(command{name: "boot", synopsis: "boot run", summary: "run $HERALD_HOME/BOOT.md once and print the reply", subcommands: []string{"run"},
		run: func(ctx context.Context, e *env, args []string) error { return e.boot(ctx, args) }})
	gatewayHooks = append(gatewayHooks, startBoot)
}

func newBootHook(a *app) *boot.Hook {
	return boot.New(boot.Config{Home: a.home, Agent: a.agent, MaxIterations: config.DefaultBootMaxIterations, Log: a.log.With("hook", boot.HookName)})
}

// startBoot attaches the hook before the gateway emits gateway:startup, and
// serves POST /v1/boot/run so that `herald boot run` runs the checklist
// inside the gateway, where send_message can deliver.
func startBoot(ctx context.Context, a *app, g *gatewayParts) (func(), error) {
	h := newBootHook(a)
	if g.local != nil {
		g.local.Handle("POST /v1/boot/run", func(w http.ResponseWriter, r *http.Request) {
			reply, err := h.RunOnce(r.Context())
			if err != nil {
				status := http.StatusInternalServerError
				if errors.Is(err, boot.ErrNoChecklist) {
					status = http.StatusNotFound
				}
				writeJSONError(w, status, err.Error())
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"reply": reply})
		})
	}
	if !config.On(a.cfg.Boot.Enabled, true) {
		a.log.Info("BOOT.md hook is off (boot.enabled: false)")
		return h.Close, nil
	}
	unsub := a.hooks.Subscribe(h.Subscription())
	return func() { unsub(); h.Close() }, nil
}

func (e *env) boot(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "run" {
		return usagef("usage: herald boot run")
	}
	fs := e.flags("boot run")
	if _, err := parse(fs, args[1:]); err != nil {
		return err
	}
	cfg, err := e.loadConfigWarned()
	if err != nil {
		return err
	}
	// checked here, with or without a gateway: a missing checklist is the
	// operator's to write, not the gateway's or the agent's failure
	path := filepath.Join(cfg.Home, boot.FileName)
	b, err := herald.ReadRegularFile(path)
	if errors.Is(err, os.ErrNotExist) || err == nil && strings.TrimSpace(string(b)) == "" {
		return &exitError{code: 1, msg: fmt.Sprintf("no BOOT.md checklist: %s is missing or empty (write the checks to run at gateway start there)", path)}
	}
	if err != nil {
		return &exitError{code: 1, msg: err.Error()}
	}
	var reply string
	if runningGateway(cfg.Home) != 0 {
		var out struct {
			Reply string `json:"reply"`
		}
		if err := callGateway(ctx, cfg.Home, "/v1/boot/run", struct{}{}, &out); err != nil {
			return &exitError{code: 1, msg: err.Error()}
		}
		reply = out.Reply
	} else {
		fmt.Fprintln(e.stderr, "herald: no gateway is running, so the checklist runs here and cannot send messages to platforms.")
		a, err := e.newApp(appOptions{quiet: true})
		if err != nil {
			return err
		}
		defer a.close()
		h := newBootHook(a)
		defer h.Close()
		reply, err = h.RunOnce(ctx)
		if err != nil {
			return &exitError{code: 1, msg: "boot-md agent failed: " + err.Error()}
		}
	}
	fmt.Fprintln(e.stdout, reply)
	fmt.Fprintln(e.stderr, boot.Summary(reply))
	return nil
}
