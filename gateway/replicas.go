package gateway

// replicas.go: several gateway replicas sharing their chats through a
// Coordinator (the replica package, on PostgreSQL). Without one
// (Config.Coordinator nil) nothing here runs and a gateway is one process,
// as before.
//
// With one, a platform message is claimed (inbound dedup across replicas)
// and put in its chat's queue in the database before Receive returns. The
// replica holding the chat's lease takes the queue in order into the chat's
// intake; the rest is the one-process flow (interrupts, commands, approvals,
// the turn). A replica that receives a message for a chat another replica
// holds wakes that replica and resolves its own receipt queued. A job taken
// from the queue is removed from it when its handling ends; the lease is
// given up when the chat is idle and its queue empty. Before a queued
// message is dispatched the lease is checked (and renewed): a replica that
// lost it (it stalled past the lease's expiry) leaves the message to the
// replica that took the chat over.

import (
	"context"
	"encoding/json"
	"errors"
	"hash/maphash"
	"strconv"
	"sync"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
	"github.com/heraldgw/herald/sessions"
)

// Coordinator shares chats, inbound dedup and approvals among gateway
// replicas. Its methods are safe for concurrent use.
type Coordinator interface {
	// Submit claims the message's id (platform, chat, message id) and
	// puts it at the end of its chat's queue, in one transaction; fresh
	// is false when the id was claimed before (a replay, maybe received
	// by another replica), and then nothing is queued.
	Submit(ctx context.Context, in SharedInbound) (fresh bool, err error)
	// Take takes the lease of the chat with key for this replica when it
	// is free, expired or already this replica's, and returns the queued
	// messages no live replica has taken, oldest first, marked taken by
	// this one. When another replica holds a live lease, Held is false
	// and Holder names it.
	Take(ctx context.Context, key string) (Taken, error)
	// Wake tells the replica holder that messages wait in the chat's
	// queue.
	Wake(ctx context.Context, holder, key string) error
	// Holds renews the chat's lease and reports whether this replica
	// still holds it.
	Holds(ctx context.Context, key string) (bool, error)
	// Done removes handled messages (by SharedInbound.ID) from the queue.
	Done(ctx context.Context, ids []int64) error
	// Return puts messages this replica took, and did not start, back in
	// the queue for the next replica to take the chat (it lost the lease,
	// or is shutting down).
	Return(ctx context.Context, ids []int64) error
	// Release gives up the chat's lease when its queue is empty; waiting
	// is how many messages no replica has taken yet (the lease is kept:
	// the caller takes them).
	Release(ctx context.Context, key string) (waiting int, err error)
	// Leave gives up every lease of this replica (a clean shutdown).
	Leave(ctx context.Context) error
	// Run renews this replica's leases and calls wake with the key of
	// each chat whose queued messages this replica may take (a wake from
	// another replica, a chat whose lease expired), until ctx ends.
	Run(ctx context.Context, wake func(key string)) error

	// OpenApproval records an approval waiting on this replica; the
	// channel yields the answer given on any replica (AnswerApproval).
	OpenApproval(ctx context.Context, a SharedApproval) (<-chan SharedAnswer, error)
	// CloseApproval ends the wait (answered, timed out or stopped).
	CloseApproval(token string)
	// LookupApproval finds a waiting approval by its token.
	LookupApproval(ctx context.Context, token string) (SharedApproval, bool, error)
	// AnswerApproval answers a waiting approval once; ok is false when it
	// was answered already or no longer waits.
	AnswerApproval(ctx context.Context, token string, ans SharedAnswer) (ok bool, err error)

	// Status is what /healthz reports of the replica.
	Status(ctx context.Context) ReplicaStatus
}

// SharedInbound is one message in a chat's queue.
type SharedInbound struct {
	// ID is the queue row (set by Take).
	ID                          int64
	Key                         string
	Platform, ChatID, MessageID string
	Message                     []byte // herald.Message, JSON
	ReceivedAt                  time.Time
	// Attempts is how many times a replica took the message, this one
	// included (set by Take): more than one means the replica that took
	// it before lost the chat without finishing it.
	Attempts int
}

// Taken is what Take found.
type Taken struct {
	Messages []SharedInbound
	Held     bool
	// Fresh is set when the lease was not this replica's before: what it
	// knew of the chat may be stale.
	Fresh bool
	// Holder is the replica holding the lease when Held is false ("" when
	// another replica was taking it at that moment).
	Holder string
}

// SharedApproval is an approval waiting on some replica.
type SharedApproval struct {
	Token, Key                 string
	Platform, ChatID, ThreadID string
	// Asker is the user id of the person whose message needs it.
	Asker string
}

// SharedAnswer is an approval's answer.
type SharedAnswer struct {
	Choice agent.Choice
	Who    string
}

// ReplicaStatus is what /healthz says of a replica.
type ReplicaStatus struct {
	ID string `json:"id"`
	// CronLeader is set while this replica runs the cron scheduler.
	CronLeader bool `json:"cron_leader"`
	// Leads names every leadership this replica holds ("cron",
	// "telegram-polling": it long-polls Telegram for all replicas).
	Leads []string `json:"leads,omitempty"`
	// Leases is how many chats this replica holds; AllLeases how many all
	// replicas do.
	Leases    int    `json:"leases"`
	AllLeases int    `json:"all_leases"`
	Error     string `json:"error,omitempty"`
}

// Replica reports the replica's state; ok is false for a single process.
func (r *Runner) Replica() (ReplicaStatus, bool) {
	if r.coord == nil {
		return ReplicaStatus{}, false
	}
	ctx, cancel := context.WithTimeout(r.baseCtx, 5*time.Second)
	defer cancel()
	return r.coord.Status(ctx), true
}

// errLeaseLost refuses a queued message on a replica that no longer holds
// its chat: the replica that does handles it.
var errLeaseLost = errors.New("another replica took the chat over")

// maxSharedAttempts: a message taken this many times without being
// finished (each replica that took it died or lost the chat while
// handling it) is given up, as the journal gives up a second replay.
const maxSharedAttempts = 2

// sharedRow is the queue row a job came from.
type sharedRow struct {
	id  int64
	key string
}

// pullLocks serialize taking a chat's queue on this replica, so that its
// messages reach the intake in order.
type pullLocks struct {
	seed  maphash.Seed
	locks [64]sync.Mutex
}

func (p *pullLocks) of(key string) *sync.Mutex {
	return &p.locks[maphash.String(p.seed, key)%uint64(len(p.locks))]
}

// receiveShared is Receive with a Coordinator: the message is claimed and
// queued in the database, then this replica takes the chat if it can.
func (r *Runner) receiveShared(ctx context.Context, m herald.Message) *adapters.Receipt {
	key := sessions.Key(m.Source, r.cfg.Keys)
	k := inboxKey{Platform: string(m.Source.Platform), ChatID: m.Source.ChatID, MessageID: m.ID}
	if k.MessageID == "" {
		k.MessageID = unnamedID(r.cfg.Now())
	}
	body, err := json.Marshal(m)
	fresh := false
	if err == nil {
		fresh, err = r.coord.Submit(ctx, SharedInbound{Key: key, Platform: k.Platform, ChatID: k.ChatID, MessageID: k.MessageID, Message: body, ReceivedAt: m.Received})
	}
	switch {
	case err != nil:
		return r.refuseUnsaved(ctx, &job{msg: m, rec: adapters.NewReceipt()}, err)
	case !fresh:
		r.log.Debug("duplicate message dropped", "platform", m.Source.Platform, "chat", m.Source.ChatID, "message_id", m.ID)
		return adapters.Resolved(adapters.Outcome{Status: adapters.StatusSkipped})
	}
	rec := adapters.NewReceipt()
	r.handoff.Store(k, rec)
	r.pull(key, true)
	if _, left := r.handoff.LoadAndDelete(k); left {
		// another replica answers it (or this one, later)
		rec.Resolve(adapters.Outcome{Status: adapters.StatusQueued})
	}
	return rec
}

// pull takes the chat's queued messages into its intake when this replica
// gets (or has) its lease. wakeHolder: when another replica holds it, wake
// that replica (the message was received here).
func (r *Runner) pull(key string, wakeHolder bool) {
	mu := r.pulls.of(key)
	mu.Lock()
	defer mu.Unlock()
	if !r.accepting.Load() {
		return // shutting down: the queue keeps them for another replica
	}
	t, err := r.coord.Take(r.baseCtx, key)
	if err != nil {
		if r.baseCtx.Err() == nil {
			r.log.Error("could not take a chat's queued messages; another replica or a later poll will", "session_key", key, "err", err)
		}
		return
	}
	if !t.Held {
		if wakeHolder && t.Holder != "" {
			if err := r.coord.Wake(r.baseCtx, t.Holder, key); err != nil {
				r.log.Warn("could not wake the replica holding a chat; it polls", "session_key", key, "replica", t.Holder, "err", err)
			}
		}
		return
	}
	if t.Fresh {
		r.reloadChat(key)
	}
	for _, in := range t.Messages {
		r.enqueueShared(in)
	}
}

// enqueueShared hands a message taken from the queue to its chat's intake.
func (r *Runner) enqueueShared(in SharedInbound) {
	row := &sharedRow{id: in.ID, key: in.Key}
	k := inboxKey{Platform: in.Platform, ChatID: in.ChatID, MessageID: in.MessageID}
	var m herald.Message
	if err := json.Unmarshal(in.Message, &m); err != nil {
		r.log.Error("an unreadable message in a chat's queue; giving it up", "platform", in.Platform, "chat", in.ChatID, "message_id", in.MessageID, "err", err)
		// off the pull, which holds the chat's pull lock
		r.background(func() { r.sharedFinished(*row) })
		return
	}
	if in.Attempts > maxSharedAttempts {
		r.log.Warn("a message was left unfinished by replicas twice; giving it up", "platform", in.Platform, "chat", in.ChatID, "message_id", in.MessageID)
		r.background(func() { r.sharedFinished(*row) })
		return
	}
	if in.Attempts > 1 {
		r.log.Info("handling a message another replica left unfinished", "platform", in.Platform, "chat", in.ChatID, "message_id", in.MessageID)
	}
	rec := adapters.NewReceipt()
	if v, ok := r.handoff.LoadAndDelete(k); ok {
		rec = v.(*adapters.Receipt)
	}
	r.enqueue(&job{msg: m, rec: rec, shared: row})
}

// reloadChat makes an idle chat read its session from the store again:
// another replica may have written it while it held the chat.
func (r *Runner) reloadChat(key string) {
	c := r.existingChat(key)
	if c == nil {
		return
	}
	c.mu.Lock()
	if !c.busy() {
		c.loaded, c.sess, c.history = false, nil, nil
	}
	c.mu.Unlock()
}

// holdsLease is the check before a queued message is dispatched.
func (r *Runner) holdsLease(key string) bool {
	ok, err := r.coord.Holds(r.baseCtx, key)
	if err != nil {
		r.log.Error("could not check a chat's lease; leaving its message to the replica that holds it", "session_key", key, "err", err)
		return false
	}
	return ok
}

// watchShared removes j's queue row once j's handling ends (for a queued
// or approval-waiting message: when its turn ends, turnDone, or at the
// latest once its chat is next idle). A message refused at shutdown, or
// left to the replica that took the chat over, is returned to the queue.
func (r *Runner) watchShared(j *job) {
	if !r.bg.add() {
		return
	}
	go func() {
		defer r.bg.done()
		<-j.rec.Done()
		o := j.rec.Outcome()
		if errors.Is(o.Err, errShuttingDown) || errors.Is(o.Err, errLeaseLost) {
			if err := r.coord.Return(context.WithoutCancel(r.baseCtx), []int64{j.shared.id}); err != nil {
				r.log.Warn("could not return a message to its chat's queue; the next replica to take the chat takes it", "session_key", j.shared.key, "err", err)
			}
			return
		}
		if o.Status == adapters.StatusQueued || o.Status == adapters.StatusAwaitingInput {
			r.waitIdle(j.shared.key)
		}
		r.sharedFinished(*j.shared)
	}()
}

// turnDone removes the queue row of a message whose turn ended: its
// receipt resolved long before when it was queued behind another turn or
// waited for an approval.
func (r *Runner) turnDone(j *job) {
	if r.coord == nil || j.shared == nil {
		return
	}
	row := *j.shared
	r.background(func() { r.sharedFinished(row) })
}

// sharedFinished queues a row to be removed; rows are removed in batches
// by whichever caller finds nobody removing, and each chat they were of is
// then given up if idle.
func (r *Runner) sharedFinished(row sharedRow) {
	r.sharedDone.add(row, func(rows []sharedRow) {
		ids := make([]int64, len(rows))
		keys := map[string]bool{}
		for i, x := range rows {
			ids[i] = x.id
			keys[x.key] = true
		}
		if err := r.coord.Done(context.WithoutCancel(r.baseCtx), ids); err != nil {
			r.log.Error("could not remove handled messages from their chats' queues; a replica taking the chat over may answer them again", "messages", len(ids), "err", err)
			return
		}
		for key := range keys {
			r.maybeRelease(key)
		}
	})
}

// chatIdle is told when a chat's intake or turns ended (dispatch.go).
func (r *Runner) chatIdle(key string) {
	if r.coord == nil {
		return
	}
	r.background(func() { r.maybeRelease(key) })
}

// maybeRelease gives up the chat's lease when it is idle here and its
// queue is empty; messages that came meanwhile are taken instead.
func (r *Runner) maybeRelease(key string) {
	if c := r.existingChat(key); c != nil {
		c.mu.Lock()
		busy := c.running != nil || c.intaking || len(c.intake) > 0 || len(c.queue) > 0 || c.approval != nil
		c.mu.Unlock()
		if busy {
			return // its end calls again
		}
	}
	waiting, err := r.coord.Release(context.WithoutCancel(r.baseCtx), key)
	if err != nil {
		r.log.Warn("could not give up a chat's lease; it expires", "session_key", key, "err", err)
		return
	}
	if waiting > 0 {
		r.pull(key, false)
	}
}

// runCoordinator serves the Coordinator until ctx ends: a wake takes the
// chat's queue off the caller's goroutine.
func (r *Runner) runCoordinator(ctx context.Context) {
	err := r.coord.Run(ctx, func(key string) {
		r.background(func() { r.pull(key, false) })
	})
	if err != nil && ctx.Err() == nil {
		r.log.Error("replica coordination stopped", "err", err)
	}
}

// leave gives up this replica's leases at a clean shutdown, once every
// turn ended.
func (r *Runner) leave() {
	if r.coord == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.coord.Leave(ctx); err != nil {
		r.log.Warn("could not give up this replica's chat leases; they expire", "err", err)
	}
}

// shareApproval makes approval p answerable from any replica (a button
// pressed on another one); the returned function ends that.
func (r *Runner) shareApproval(ctx context.Context, c *chat, p *pendingApproval) (stop func()) {
	if r.coord == nil {
		return func() {}
	}
	src := p.asker.msg.Source
	answers, err := r.coord.OpenApproval(ctx, SharedApproval{Token: p.token, Key: c.key, Platform: string(p.where.Platform),
		ChatID: p.where.ChatID, ThreadID: p.where.ThreadID, Asker: src.UserID})
	if err != nil {
		r.log.Warn("approval not shared with other replicas; only this one can answer it", "session_key", c.key, "err", err)
		return func() {}
	}
	done := make(chan struct{})
	r.background(func() {
		select {
		case a := <-answers:
			r.resolveApproval(c, p, approvalAnswer{choice: a.Choice, who: a.Who})
		case <-done:
		}
	})
	return func() {
		close(done)
		r.coord.CloseApproval(p.token)
	}
}

// pressShared answers a press of an approval waiting on another replica,
// with the checks Press makes for a local one.
func (r *Runner) pressShared(ctx context.Context, pr adapters.Press, token string, choice agent.Choice) string {
	a, ok, err := r.coord.LookupApproval(ctx, token)
	if err != nil {
		r.log.Error("could not look an approval up", "err", err)
		return StaleApprovalText
	}
	if !ok {
		return StaleApprovalText
	}
	if string(pr.Chat.Platform) != a.Platform || pr.Chat.ChatID != a.ChatID || pr.Chat.ThreadID != a.ThreadID {
		r.log.Warn("approval button pressed outside its chat; ignored", "platform", pr.Chat.Platform, "chat", pr.Chat.ChatID, "user", pr.UserID)
		return StaleApprovalText
	}
	if !r.mayAnswerAs(herald.Platform(a.Platform), a.Asker, pr.UserID) {
		return NotYourApprovalText
	}
	answered, err := r.coord.AnswerApproval(ctx, token, SharedAnswer{Choice: choice, Who: personName(pr.UserName, pr.UserID)})
	if err != nil || !answered {
		return StaleApprovalText
	}
	r.log.Info("approval waiting on another replica answered by a button", "platform", pr.Chat.Platform, "chat", pr.Chat.ChatID, "user", pr.UserID, "choice", choice)
	return answerAck(choice)
}

// unnamedID names a message that came without an id (it cannot be
// replayed, so it needs no dedup, only a row of its own).
func unnamedID(now time.Time) string {
	return "~" + strconv.FormatInt(now.UnixNano(), 36) + "." + strconv.FormatInt(unnamed.Add(1), 36)
}
