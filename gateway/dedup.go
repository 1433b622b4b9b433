package gateway

// dedup.go: the gateway's side of the inbound journal (sessions/inbox.go).
// Receive stores every platform message before it returns; the journal is
// also the dedup, persisted: a (platform, chat, message id) already in it
// is a replay and is skipped, also after a restart. A row is finished when
// its message's handling ends; rows a crash left unfinished are handed to
// dispatch again at the next start, once.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/sessions"
)

// Journal bounds: finished rows are kept for dedup this long, and at most
// this many (the newest); the sweep prunes the rest. Unfinished rows are
// never pruned.
const (
	inboxKeepFor  = 7 * 24 * time.Hour
	inboxKeepRows = 100_000
)

// inboxKey names a journal row.
type inboxKey = sessions.InboundKey

// batch collects items for one goroutine to write in batches (a store
// commit per message would leave a goroutine per message waiting on the
// writer under load): the first caller to find nobody writing writes,
// until the batch is empty.
type batch[T any] struct {
	mu       sync.Mutex
	items    []T
	draining bool
}

// add queues item and, unless another caller is writing, writes every
// queued item with write, in batches, until none is left.
func (b *batch[T]) add(item T, write func([]T)) {
	b.mu.Lock()
	b.items = append(b.items, item)
	if b.draining {
		b.mu.Unlock()
		return
	}
	b.draining = true
	for len(b.items) > 0 {
		items := b.items
		b.items = nil
		b.mu.Unlock()
		write(items)
		b.mu.Lock()
	}
	b.draining = false
	b.mu.Unlock()
}

// unnamed numbers journal rows of messages that came without an id (they
// cannot be replayed, so they need no dedup, only a row of their own).
var unnamed atomic.Int64

// journal stores m in the inbound journal. fresh is false when the message
// is already in it.
func (r *Runner) journal(ctx context.Context, m *herald.Message) (key inboxKey, fresh bool, err error) {
	key = inboxKey{Platform: string(m.Source.Platform), ChatID: m.Source.ChatID, MessageID: m.ID}
	if key.MessageID == "" {
		key.MessageID = unnamedID(r.cfg.Now())
	}
	body, err := json.Marshal(m)
	if err != nil {
		return key, false, fmt.Errorf("encode message: %w", err)
	}
	fresh, err = r.store.RecordInbound(ctx, sessions.Inbound{
		Platform: key.Platform, ChatID: key.ChatID, MessageID: key.MessageID, Message: string(body), ReceivedAt: m.Received,
	})
	return key, fresh, err
}

// watch finishes j's journal row once j's handling ends: when its receipt
// resolves, or, for a message only queued (or waiting for an approval),
// when its chat next goes idle. A message refused because the gateway is
// shutting down keeps its row unfinished for the next start.
func (r *Runner) watch(j *job) {
	if !r.bg.add() {
		return // after Run: the row stays for the next start
	}
	go func() {
		defer r.bg.done()
		<-j.rec.Done()
		o := j.rec.Outcome()
		if errors.Is(o.Err, errShuttingDown) {
			return
		}
		if o.Status == adapters.StatusQueued || o.Status == adapters.StatusAwaitingInput {
			r.waitIdle(sessions.Key(j.msg.Source, r.cfg.Keys))
		}
		r.finished(*j.inbox)
	}()
}

// finished queues k to be finished, in batches; finished runs only on
// watch goroutines, which Run waits for.
func (r *Runner) finished(k inboxKey) {
	r.finishing.add(k, func(keys []inboxKey) {
		// the wall clock, as pruneInbox's cutoff: this runs off the intake
		if err := r.store.FinishInbound(context.Background(), keys, sessions.InboundDone, time.Now()); err != nil {
			r.log.Error("could not mark inbound messages handled; a restart may answer them again", "messages", len(keys), "err", err)
		}
	})
}

// waitIdle returns once the chat with key runs no turn.
func (r *Runner) waitIdle(key string) {
	c := r.existingChat(key)
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.running == nil {
		c.mu.Unlock()
		return
	}
	if c.idle == nil {
		c.idle = make(chan struct{})
	}
	idle := c.idle
	c.mu.Unlock()
	<-idle
}

// finishInbox finishes one journal row at once (the replay's give-ups).
func (r *Runner) finishInbox(k inboxKey, state string) {
	if err := r.store.FinishInbound(context.Background(), []inboxKey{k}, state, time.Now()); err != nil {
		r.log.Error("could not mark an inbound message handled", "platform", k.Platform, "chat", k.ChatID, "message_id", k.MessageID, "err", err)
	}
}

// background runs fn on a goroutine Run waits for; after Run it does
// nothing and returns false.
func (r *Runner) background(fn func()) bool {
	if !r.bg.add() {
		return false
	}
	go func() {
		defer r.bg.done()
		fn()
	}()
	return true
}

// readUnfinished reads the journal rows the last run left unfinished. New
// calls it, before any Receive can add rows of this run.
func (r *Runner) readUnfinished() []sessions.Inbound {
	rows, err := r.store.UnfinishedInbound(context.Background())
	if err != nil {
		r.log.Error("could not read the inbound journal; messages left unfinished by the last run are not handled", "err", err)
	}
	return rows
}

// replayUnfinished hands the messages a crash left unfinished to dispatch
// again, oldest first. A message already replayed once (the gateway
// crashed again while handling it) is not replayed a third time.
func (r *Runner) replayUnfinished(ctx context.Context, rows []sessions.Inbound) {
	for _, in := range rows {
		k := inboxKey{Platform: in.Platform, ChatID: in.ChatID, MessageID: in.MessageID}
		var m herald.Message
		if in.State != sessions.InboundReceived {
			r.log.Warn("a message was left unfinished twice; giving it up", "platform", in.Platform, "chat", in.ChatID, "message_id", in.MessageID)
			r.finishInbox(k, sessions.InboundAbandoned)
			continue
		}
		if err := json.Unmarshal([]byte(in.Message), &m); err != nil {
			r.log.Error("an unreadable message in the inbound journal; giving it up", "platform", in.Platform, "chat", in.ChatID, "message_id", in.MessageID, "err", err)
			r.finishInbox(k, sessions.InboundAbandoned)
			continue
		}
		if err := r.store.SetInboundState(ctx, k.Platform, k.ChatID, k.MessageID, sessions.InboundReplayed, time.Now()); err != nil {
			r.log.Error("could not mark a message replayed; not replaying it now", "message_id", in.MessageID, "err", err)
			continue
		}
		m.Received = in.ReceivedAt
		if m.Source.ChatType == "" {
			m.Source.ChatType = herald.ChatDM
		}
		r.log.Info("handling a message left unfinished by the last run", "platform", in.Platform, "chat", in.ChatID, "message_id", in.MessageID)
		r.enqueue(&job{msg: m, rec: adapters.NewReceipt(), inbox: &k})
	}
}

// pruneInbox deletes finished journal rows past the bounds.
func (r *Runner) pruneInbox(ctx context.Context) {
	n, err := r.store.PruneInbound(ctx, time.Now().Add(-inboxKeepFor), inboxKeepRows)
	if err != nil {
		r.log.Error("could not prune the inbound journal", "err", err)
		return
	}
	if n > 0 {
		r.log.Debug("inbound journal pruned", "rows", n)
	}
}
