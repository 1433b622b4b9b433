package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/hooks"
	"github.com/heraldgw/herald/sessions"
)

// fakeAdapter is a platform that records what the gateway sends; fail,
// when set, decides the outcome of each Send attempt (1-based).
type fakeAdapter struct {
	name   herald.Platform
	limits adapters.Limits

	mu    sync.Mutex
	calls int
	sent  []adapters.Outgoing
	ids   []string // the platform id of each of sent
	times []time.Time
	fail  func(attempt int, out adapters.Outgoing) error
}

func (f *fakeAdapter) Platform() herald.Platform { return f.name }
func (f *fakeAdapter) Limits() adapters.Limits   { return f.limits }
func (f *fakeAdapter) Run(ctx context.Context, sink adapters.Sink) error {
	<-ctx.Done()
	return nil
}

func (f *fakeAdapter) Send(ctx context.Context, to herald.Target, out adapters.Outgoing) (adapters.Sent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.times = append(f.times, time.Now())
	if f.fail != nil {
		if err := f.fail(f.calls, out); err != nil {
			return adapters.Sent{}, err
		}
	}
	id := fmt.Sprint("s", f.calls)
	f.sent = append(f.sent, out)
	f.ids = append(f.ids, id)
	return adapters.Sent{MessageID: id}, nil
}

func (f *fakeAdapter) texts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, o := range f.sent {
		out = append(out, o.Text)
	}
	return out
}

// editAdapter can also edit (streaming).
type editAdapter struct {
	fakeAdapter
	edits []string
}

func (e *editAdapter) Edit(ctx context.Context, to herald.Target, id, text string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.edits = append(e.edits, text)
	return nil
}

// buttonAdapter also draws buttons (adapters.ButtonSender); closeErr,
// when set, fails every CloseButtons.
type buttonAdapter struct {
	fakeAdapter
	closeErr error
	closes   []closedPrompt
}

type closedPrompt struct {
	to       herald.Target
	id, text string
}

func (b *buttonAdapter) CloseButtons(ctx context.Context, to herald.Target, id, text string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closeErr != nil {
		return b.closeErr
	}
	b.closes = append(b.closes, closedPrompt{to: to, id: id, text: text})
	return nil
}

// prompts returns the messages sent with buttons, and their ids.
func (b *buttonAdapter) prompts() (outs []adapters.Outgoing, ids []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, o := range b.sent {
		if len(o.Buttons) > 0 {
			outs, ids = append(outs, o), append(ids, b.ids[i])
		}
	}
	return outs, ids
}

func (b *buttonAdapter) closed() []closedPrompt {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]closedPrompt(nil), b.closes...)
}

// bubble is a Runner on a fake adapter, for use inside synctest.Test.
type bubble struct {
	t      *testing.T
	store  *sessions.Store
	reg    *hooks.Registry
	rec    *recorder
	runner *Runner
	cancel context.CancelFunc
	done   chan error
}

func newBubble(t *testing.T, ad adapters.Adapter, model agent.Model, opts ...harnessOpt) *bubble {
	t.Helper()
	return newBubbleOn(t, filepath.Join(t.TempDir(), "state.db"), ad, model, opts...)
}

// newBubbleOn is newBubble on the store at path (a second bubble on the
// same path is the gateway after a restart).
func newBubbleOn(t *testing.T, path string, ad adapters.Adapter, model agent.Model, opts ...harnessOpt) *bubble {
	t.Helper()
	st, err := sessions.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	reg := hooks.NewRegistry(nil)
	b := &bubble{t: t, store: st, reg: reg, rec: newRecorder(reg)}
	if model == nil {
		model = agent.Echo{}
	}
	ag := &agent.Agent{Model: model, Tools: agent.NewTools(dangerTool{}), Hooks: reg, ModelName: "echo-test"}
	cfg := Config{Adapters: []adapters.Adapter{ad}, Store: st, Hooks: reg, Agent: ag,
		Auth: map[herald.Platform]PlatformAuth{ad.Platform(): {TrustAll: true}}}
	for _, o := range opts {
		o(&cfg)
	}
	b.runner = New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel, b.done = cancel, make(chan error, 1)
	go func() { b.done <- b.runner.Run(ctx) }()
	return b
}

// stop shuts everything down; call it at the end of the bubble's function.
func (b *bubble) stop() {
	b.cancel()
	<-b.done
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	b.reg.Close(ctx)
	cancel()
	b.store.Close()
}

func (b *bubble) send(chat, user, text string) *adapters.Receipt {
	return b.runner.Receive(context.Background(), herald.Message{Text: text,
		Source: herald.Source{Platform: "fake", ChatID: chat, ChatType: herald.ChatDM, UserID: user}})
}

// turnTook sends text to chat c1 and waits for it to be done; it returns
// how long that took.
func (b *bubble) turnTook(t *testing.T, text string) time.Duration {
	t.Helper()
	start := time.Now()
	if o := outcome(t, b.send("c1", "u1", text)); o.Status != adapters.StatusDone {
		t.Fatalf("%+v", o)
	}
	return time.Since(start)
}

func outcome(t *testing.T, rec *adapters.Receipt) adapters.Outcome {
	t.Helper()
	select {
	case <-rec.Done():
		return rec.Outcome()
	case <-time.After(time.Hour): // fake time inside a bubble
		t.Fatal("receipt never resolved")
		return adapters.Outcome{}
	}
}
