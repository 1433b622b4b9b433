package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/hooks"
)

// weatherPlugin registers /weather, which answers with who asked where,
// and /broken, which fails; calls counts the handler's runs.
func weatherPlugin(calls *int, mu *sync.Mutex) hooks.Plugin {
	return hooks.Plugin{Name: "weather", Register: func(c *hooks.PluginContext) error {
		err := c.RegisterCommand("/Weather", "tells the weather", "  <city> ", func(ctx context.Context, call *hooks.CommandCall) (string, error) {
			mu.Lock()
			*calls++
			mu.Unlock()
			if _, ok := ctx.Deadline(); !ok {
				return "", errors.New("no deadline")
			}
			return fmt.Sprintf("Sunny in %s for %s on %s:%s (%s)", call.RawArgs, call.Source.UserID, call.Source.Platform, call.Source.ChatID, call.Command), nil
		})
		if err != nil {
			return err
		}
		return c.RegisterCommand("broken", "", "", func(ctx context.Context, call *hooks.CommandCall) (string, error) {
			return "", errors.New("the weather service is down")
		})
	}}
}

func withPlugins(ps ...hooks.Plugin) harnessOpt {
	return func(c *Config) { c.Hooks.LoadPlugins(ps...) }
}

// A plugin's command answers in a chat, its failure is told as such, and
// /help lists it with its arguments and description.
func TestPluginCommand(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	h := newHarness(t, nil, withPlugins(weatherPlugin(&calls, &mu)))
	if r := h.post(msg{User: "u1", Text: "/weather Paris"}); r.Status != adapters.StatusDone || r.text() != "Sunny in Paris for u1 on local:c1 (weather)" {
		t.Fatalf("/weather answered %q (%s)", r.text(), r.Status)
	}
	if r := h.post(msg{User: "u1", Text: "/WEATHER  Oslo "}); r.text() != "Sunny in Oslo for u1 on local:c1 (weather)" {
		t.Fatalf("/WEATHER answered %q", r.text())
	}
	if r := h.post(msg{User: "u1", Text: "/broken"}); r.text() != "⚠️ /broken failed: the weather service is down" {
		t.Fatalf("/broken answered %q", r.text())
	}
	help := h.post(msg{User: "u1", Text: "/help"}).text()
	if !strings.Contains(help, "/whoami — show your platform user id") ||
		!strings.HasSuffix(help, "\n\nPlugin commands:\n/weather <city> — tells the weather\n/broken — Plugin command") {
		t.Fatalf("/help:\n%s", help)
	}
	// not a turn: the model never saw them
	if r := h.post(msg{User: "u1", Text: "hello"}); r.text() != echo+"hello" {
		t.Fatalf("text answered %q", r.text())
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Fatalf("handler ran %d times", calls)
	}
}

// command:<name> fires before a plugin's command, with its raw arguments,
// and can deny it: the handler does not run.
func TestPluginCommandHookDenies(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	h := newHarness(t, nil, withPlugins(weatherPlugin(&calls, &mu)))
	seen := make(chan *hooks.Command, 1)
	register(h.reg, "command:weather", func(ctx context.Context, ev hooks.Event) (any, error) {
		seen <- ev.Payload.(*hooks.Command)
		return map[string]any{"decision": "deny"}, nil
	})
	r := h.post(msg{User: "u1", Text: "/weather Paris, today"})
	if r.text() != "Command `/weather` was blocked by a hook." {
		t.Fatalf("answered %q", r.text())
	}
	if p := <-seen; p.Command != "weather" || p.RawArgs != "Paris, today" || p.UserID != "u1" {
		t.Fatalf("payload %+v", p)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 0 {
		t.Fatalf("handler ran %d times", calls)
	}
}

// The command menu Telegram gets (setMyCommands) holds the plugins'
// commands with their descriptions after the built-ins, and the command
// answers in a Telegram chat.
func TestPluginCommandInTelegramMenu(t *testing.T) {
	srv := telegramtest.New(telegramtest.Options{})
	defer srv.Close()
	ad := telegram.New(telegram.Config{Token: srv.Token(), APIEndpoint: srv.Endpoint(), PollTimeout: time.Second})
	var mu sync.Mutex
	calls := 0
	rn := runAt(t, t.TempDir(), nil, []adapters.Adapter{ad}, withPlugins(weatherPlugin(&calls, &mu)))
	defer rn.stop()
	ctx := ctxFor(t)
	if _, err := srv.WaitCalls(ctx, "setMyCommands", 3); err != nil {
		t.Fatal(err)
	}
	menu := srv.Commands("default")
	if len(menu) != len(hooks.BuiltinCommands())+2 {
		t.Fatalf("menu %+v", menu)
	}
	if got := menu[len(menu)-2:]; got[0] != (telegramtest.BotCommand{Command: "weather", Description: "tells the weather"}) ||
		got[1] != (telegramtest.BotCommand{Command: "broken", Description: "Plugin command"}) {
		t.Fatalf("plugin commands in the menu: %+v", got)
	}
	srv.DM(42, "alice", "/weather Lyon")
	if err := srv.Wait(ctx, func() bool { return len(srv.Calls("sendMessage")) > 0 }); err != nil {
		t.Fatal(err)
	}
	if sent := srv.Calls("sendMessage"); sent[0].Text != "Sunny in Lyon for 42 on telegram:42 (weather)" {
		t.Fatalf("sent %+v", sent)
	}
}

// A plugin command whose handler never answers (it ignores its context)
// fails after its deadline instead of holding the chat: the user is told,
// and the chat goes on.
func TestPluginCommandHandlerHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		hang := hooks.Plugin{Name: "hang", Register: func(c *hooks.PluginContext) error {
			return c.RegisterCommand("slow", "", "", func(ctx context.Context, call *hooks.CommandCall) (string, error) {
				<-release
				return "too late", nil
			})
		}}
		ad := &fakeAdapter{name: "fake"}
		b := newBubble(t, ad, nil, withPlugins(hang))
		defer b.stop()
		defer close(release)
		took := b.turnTook(t, "/slow")
		if took != pluginCommandTimeout {
			t.Fatalf("answered after %s", took)
		}
		b.turnTook(t, "next")
		if got := ad.texts(); len(got) != 2 || got[0] != "⚠️ /slow failed: no answer within 30s" || got[1] != echo+"next" {
			t.Fatalf("sent %q", got)
		}
	})
}

// holdingHandler is a slog handler that holds its first record until
// release is closed: a turn logging its line is a turn that has answered
// and not yet ended.
type holdingHandler struct {
	once    *sync.Once
	release chan struct{}
}

func (h holdingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h holdingHandler) Handle(context.Context, slog.Record) error {
	h.once.Do(func() { <-h.release })
	return nil
}
func (h holdingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h holdingHandler) WithGroup(string) slog.Handler      { return h }

// A command sent after the turn's answer arrived, while the turn is only
// finishing, waits for the turn to end instead of being refused as
// mid-turn.
func TestCommandAfterTheAnswerWaitsForTheTurnToFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		calls := 0
		ad := &fakeAdapter{name: "fake"}
		release := make(chan struct{})
		held := slog.New(holdingHandler{once: new(sync.Once), release: release})
		b := newBubble(t, ad, nil, withPlugins(weatherPlugin(&calls, &mu)), func(c *Config) { c.TurnLog = held })
		defer b.stop()
		let := sync.OnceFunc(func() { close(release) })
		defer let() // before stop: a failed check must not leave the turn held
		if o := outcome(t, b.send("c1", "u1", "hello")); o.Status != adapters.StatusDone {
			t.Fatalf("hello: %+v", o)
		}
		synctest.Wait() // the answer is out; the turn is held in its log line
		rec := b.send("c1", "u1", "/weather Oslo")
		synctest.Wait()
		select {
		case <-rec.Done():
			t.Fatalf("answered while the turn was finishing: %q", ad.texts())
		default:
		}
		let()
		if o := outcome(t, rec); o.Status != adapters.StatusDone {
			t.Fatalf("/weather: %+v", o)
		}
		if got := ad.texts(); got[len(got)-1] != "Sunny in Oslo for u1 on fake:c1 (weather)" {
			t.Fatalf("sent %q", got)
		}
	})
}
