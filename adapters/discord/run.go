package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/heraldgw/herald/adapters"
)

// errOpenStuck: discordgo's Open did not return even after its socket was
// closed. That is its known deadlock (bwmarrin/discordgo#513: op 7
// RECONNECT during the handshake makes Open wait for a lock it holds);
// the session can never be used or closed again.
var errOpenStuck = errors.New("discord: gateway handshake hung (discordgo#513)")

// inbound is one MESSAGE_CREATE with the session that received it and
// its raw JSON (for the attachment fields discordgo does not keep).
type inbound struct {
	s   *discordgo.Session
	m   *discordgo.Message
	raw json.RawMessage
	// i is an INTERACTION_CREATE (m is nil then); deferred says a slash
	// command was already answered with a deferred response
	i        *discordgo.Interaction
	deferred bool
}

// Run connects to the gateway and serves until ctx ends. It checks the
// token first (a refused one is a *adapters.FatalError naming
// DISCORD_BOT_TOKEN), bounds every handshake by OpenTimeout, resumes the
// session when the connection drops, and retries failed connections with
// capped exponential backoff and jitter. Messages reach sink one at a
// time, in the order the gateway sent them; button presses go to the
// sink in their own order, never behind messages waiting for it.
func (a *Adapter) Run(ctx context.Context, sink adapters.Sink) error {
	if a.token == "" {
		err := &adapters.FatalError{Msg: "discord: no bot token; set DISCORD_BOT_TOKEN"}
		a.state.Store("failed: " + err.Msg)
		return err
	}
	if c := a.cfg; c.ShardCount > 0 && (c.ShardID < 0 || c.ShardID >= c.ShardCount) {
		// discordgo would refuse every Open alike, and be retried forever
		err := &adapters.FatalError{Msg: fmt.Sprintf("discord: shard %d of %d: want 0 <= shard_id < shard_count", c.ShardID, c.ShardCount)}
		a.state.Store("failed: " + err.Msg)
		return err
	}
	a.state.Store("connecting")
	// cancelled when Run returns, for whatever reason, so that the
	// goroutines following slash commands end too
	ctx, cancel := context.WithCancel(ctx)
	in := make(chan inbound, 256)
	// button presses have a queue of their own: Discord drops one not
	// answered within 3 s, and messages before it may wait for the sink
	presses := make(chan inbound, 64)
	down := make(chan struct{}, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a.consume(ctx, sink, in, stop)
	}()
	go func() {
		defer wg.Done()
		a.consume(ctx, sink, presses, stop)
	}()

	newGateway := func() *discordgo.Session {
		s := a.session()
		// SyncEvents: these run on discordgo's reading goroutine, so they
		// only hand over; consume does the work.
		// the raw event, not *discordgo.MessageCreate: attachments'
		// voice fields are only in its JSON
		s.AddHandler(func(s *discordgo.Session, e *discordgo.Event) {
			mc, ok := e.Struct.(*discordgo.MessageCreate)
			if e.Type != "MESSAGE_CREATE" || !ok || mc.Message == nil {
				return
			}
			select {
			case in <- inbound{s: s, m: mc.Message, raw: e.RawData}:
			case <-stop:
			}
		})
		s.AddHandler(func(s *discordgo.Session, ic *discordgo.InteractionCreate) {
			if ic.Interaction == nil {
				return
			}
			ev := inbound{s: s, i: ic.Interaction}
			to := in
			switch ic.Type {
			case discordgo.InteractionApplicationCommand:
				// answered here, not behind the messages queued for
				// consume: Discord drops one not answered within 3 s
				ev.deferred = a.deferSlash(ctx, ic.Interaction)
			case discordgo.InteractionMessageComponent:
				to = presses
			}
			select {
			case to <- ev:
			case <-stop:
			}
		})
		s.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
			if r.User != nil && r.User.ID != "" {
				a.botID.Store(r.User.ID)
				a.botName.Store(r.User.Username)
			}
			if r.Application != nil && r.Application.ID != "" {
				a.appID.Store(r.Application.ID)
			}
		})
		s.AddHandler(func(*discordgo.Session, *discordgo.Disconnect) {
			select {
			case down <- struct{}{}:
			default:
			}
		})
		return s
	}
	gw := newGateway()
	defer func() {
		cancel()
		gw.Close() // discordgo waits 1 s here for the close handshake
		close(stop)
		wg.Wait()
		a.watchers.Wait()
	}()

	checked := false
	backoff := a.cfg.MinBackoff
	for {
		var err error
		if !checked {
			err = a.checkToken(ctx, gw)
			checked = err == nil
		}
		if err == nil {
			drain(down)
			err = a.open(ctx, gw)
		}
		if errors.Is(err, errOpenStuck) {
			// the stuck session holds its own lock for good: leave it
			// (with the one goroutine blocked in it), never Close it, and
			// start afresh
			a.log.Error("discord gateway handshake hung; abandoning that session and identifying anew")
			gw = newGateway()
		}
		if ctx.Err() != nil {
			a.state.Store("stopped")
			return nil
		}
		switch {
		case err == nil:
			// before "connected", so that a connected adapter has tried
			a.registerCommands(ctx)
			a.state.Store("connected")
			a.log.Info("discord gateway connected")
			backoff = a.cfg.MinBackoff
			select {
			case <-ctx.Done():
				a.state.Store("stopped")
				return nil
			case <-down:
				a.state.Store("reconnecting")
				a.log.Warn("discord gateway connection lost; resuming the session")
				continue
			}
		case adapters.IsFatal(err):
			a.state.Store("failed: " + err.Error())
			return err
		}
		wait := jitter(backoff)
		var ra *adapters.RetryAfterError
		if errors.As(err, &ra) && ra.After > wait {
			wait = ra.After
		}
		a.state.Store("reconnecting")
		a.log.Warn("discord gateway connection failed; retrying", "err", errString(err), "in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			a.state.Store("stopped")
			return nil
		case <-t.C:
		}
		backoff = min(backoff*2, a.cfg.MaxBackoff)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func drain(c chan struct{}) {
	select {
	case <-c:
	default:
	}
}

// checkToken asks who the bot is, so that a refused token is known before
// the gateway is tried (and the bot's id is known for mentions).
func (a *Adapter) checkToken(ctx context.Context, s *discordgo.Session) error {
	u, err := s.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		return connectError(ctx, "check the bot token", err)
	}
	a.botID.Store(u.ID)
	a.botName.Store(u.Username)
	return nil
}

// open runs discordgo's Open, which takes no context and can hang, under
// a watchdog: when OpenTimeout passes (or ctx ends) the socket is closed
// under it, which ends any read it waits in. If even that does not make
// it return, the session is stuck (errOpenStuck).
func (a *Adapter) open(ctx context.Context, s *discordgo.Session) error {
	done := make(chan error, 1)
	go func() { done <- s.Open() }() // returns, unless errOpenStuck
	t := time.NewTimer(a.cfg.OpenTimeout)
	defer t.Stop()
	var why error
	select {
	case err := <-done:
		return a.openResult(ctx, err)
	case <-ctx.Done():
		why = ctx.Err()
	case <-t.C:
		why = fmt.Errorf("no READY within %s", a.cfg.OpenTimeout)
	}
	a.conns.closeLast()
	grace := time.NewTimer(min(2*time.Second, a.cfg.OpenTimeout))
	defer grace.Stop()
	select {
	case err := <-done:
		if err == nil {
			return nil
		}
		return &adapters.TemporaryError{Err: fmt.Errorf("discord: connect to the gateway: %w (%v)", why, err)}
	case <-grace.C:
		return errOpenStuck
	}
}

func (a *Adapter) openResult(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, discordgo.ErrWSAlreadyOpen) {
		return nil
	}
	return connectError(ctx, "connect to the gateway", err)
}

// consume turns MESSAGE_CREATEs into herald messages for the sink, one at
// a time, under a recover boundary.
func (a *Adapter) consume(ctx context.Context, sink adapters.Sink, in <-chan inbound, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case ev := <-in:
			func() {
				defer func() {
					if x := recover(); x != nil {
						a.log.Error("discord message handling panicked; message dropped", "panic", fmt.Sprint(x), "stack", string(debug.Stack()))
					}
				}()
				if ev.i != nil {
					a.interaction(ctx, sink, ev)
					return
				}
				if m, ok := a.toMessage(ctx, ev.s, ev.m, ev.raw); ok {
					a.rx.Receive(ctx, sink, m, channel(m.Source.Target()))
				}
			}()
		}
	}
}

// interaction handles one INTERACTION_CREATE: a button press or a slash
// command; other kinds (autocomplete, modals) herald does not use.
func (a *Adapter) interaction(ctx context.Context, sink adapters.Sink, ev inbound) {
	switch ev.i.Type {
	case discordgo.InteractionMessageComponent:
		a.press(ctx, sink, ev.s, ev.i)
	case discordgo.InteractionApplicationCommand:
		a.slash(ctx, sink, ev.s, ev.i, ev.deferred)
	default:
		a.log.Debug("discord interaction ignored", "type", ev.i.Type.String())
	}
}

// connTracker remembers the last socket the gateway dialer opened, so the
// watchdog can close it under a hanging Open.
type connTracker struct {
	mu   sync.Mutex
	last net.Conn
}

func (t *connTracker) dialer() *websocket.Dialer {
	return &websocket.Dialer{Proxy: http.ProxyFromEnvironment, HandshakeTimeout: 10 * time.Second, NetDialContext: t.dial}
}

func (t *connTracker) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.last = c
	t.mu.Unlock()
	return c, nil
}

func (t *connTracker) closeLast() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.last != nil {
		t.last.Close()
	}
}
