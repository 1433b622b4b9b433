package slack

// threads.go remembers which threads the bot takes part in, in memory and,
// when the adapter has a ThreadStore, in state.db, so that after a restart
// a follow-up in a thread the bot was answering still counts as addressed
// to it. Entries expire ThreadTTL after the bot last posted in the thread;
// at most MaxThreads are kept, the least recently active going first.

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ThreadStore keeps small values across restarts; *sessions.Store (its kv
// table) implements it.
type ThreadStore interface {
	KV(ctx context.Context, key string) (string, bool, error)
	KVWithPrefix(ctx context.Context, prefix string) (map[string]string, error)
	SetKV(ctx context.Context, key, value string) error
	DeleteKV(ctx context.Context, keys ...string) error
}

// Defaults for thread membership.
const (
	DefaultThreadTTL  = 7 * 24 * time.Hour
	DefaultMaxThreads = 10000
)

// threadKeyPrefix namespaces the adapter's keys in the store; the rest of
// a key is "<channel>/<thread ts>", the value the last activity in Unix
// milliseconds.
const threadKeyPrefix = "slack.thread/"

// threadRefresh is how stale a stored activity time may get before a new
// post in the thread writes it again: one write per thread per hour at
// most, however busy the thread.
const threadRefresh = time.Hour

// joined records that the bot posts in a thread: the thread is one it
// takes part in, and this process knows what was said there.
func (a *Adapter) joined(ctx context.Context, channel, thread string) {
	k := channel + "/" + thread
	a.seen.add(k)
	a.threads.add(ctx, k)
}

// threadSet is the bot's thread membership: channel/ts → last activity.
type threadSet struct {
	store ThreadStore // may be nil: memory only
	ttl   time.Duration
	max   int
	log   *slog.Logger

	mu    sync.Mutex
	last  map[string]time.Time
	saved map[string]time.Time // what the store holds, as far as known
}

func newThreadSet(store ThreadStore, ttl time.Duration, max int, log *slog.Logger) *threadSet {
	return &threadSet{store: store, ttl: ttl, max: max, log: log, last: map[string]time.Time{}, saved: map[string]time.Time{}}
}

// has reports whether the bot took part in the thread within the TTL.
// What this process does not know it asks the store: with several
// replicas on one store, another replica may have posted in the thread
// since this one loaded it. A store that cannot answer is a "no" (the
// follow-up then needs a mention).
func (s *threadSet) has(ctx context.Context, k string) bool {
	s.mu.Lock()
	t, ok := s.last[k]
	s.mu.Unlock()
	if ok && time.Since(t) < s.ttl {
		return true
	}
	if s.store == nil {
		return false
	}
	v, ok, err := s.store.KV(ctx, threadKeyPrefix+k)
	if err != nil {
		s.log.Debug("could not read a slack thread from the store", "thread", k, "err", err)
		return false
	}
	ms, perr := strconv.ParseInt(v, 10, 64)
	if !ok || perr != nil {
		return false
	}
	t = time.UnixMilli(ms)
	if time.Since(t) >= s.ttl {
		return false
	}
	s.mu.Lock()
	if t.After(s.last[k]) {
		s.last[k] = t
	}
	s.saved[k] = t
	evicted := s.evictLocked()
	s.mu.Unlock()
	s.forget(ctx, evicted)
	return true
}

// add records activity in a thread now, and stores it unless the store
// already holds a recent enough time. A store failure is logged: the
// thread is still remembered until a restart.
func (s *threadSet) add(ctx context.Context, k string) {
	now := time.Now()
	s.mu.Lock()
	s.last[k] = now
	evicted := s.evictLocked()
	write := s.store != nil && now.Sub(s.saved[k]) >= threadRefresh
	if write {
		s.saved[k] = now
	}
	s.mu.Unlock()
	if s.store == nil {
		return
	}
	// stored even when the caller's context ends: the post was made
	ctx = context.WithoutCancel(ctx)
	if write {
		if err := s.store.SetKV(ctx, threadKeyPrefix+k, strconv.FormatInt(now.UnixMilli(), 10)); err != nil {
			s.log.Warn("could not store a slack thread; it is remembered until a restart", "thread", k, "err", err)
			s.mu.Lock()
			delete(s.saved, k)
			s.mu.Unlock()
		}
	}
	s.forget(ctx, evicted)
}

// evictLocked drops expired entries and, above max, the least recently
// active tenth, and returns the dropped keys. It scans only when the set
// is full, so adding stays O(1) amortized.
func (s *threadSet) evictLocked() []string {
	if len(s.last) <= s.max {
		return nil
	}
	type entry struct {
		k string
		t time.Time
	}
	all := make([]entry, 0, len(s.last))
	for k, t := range s.last {
		all = append(all, entry{k, t})
	}
	slices.SortFunc(all, func(a, b entry) int { return a.t.Compare(b.t) })
	keep := s.max - s.max/10
	var out []string
	for i, e := range all {
		if i < len(all)-keep || time.Since(e.t) >= s.ttl {
			out = append(out, e.k)
			delete(s.last, e.k)
			delete(s.saved, e.k)
		}
	}
	return out
}

func (s *threadSet) forget(ctx context.Context, keys []string) {
	if s.store == nil || len(keys) == 0 {
		return
	}
	stored := make([]string, len(keys))
	for i, k := range keys {
		stored[i] = threadKeyPrefix + k
	}
	if err := s.store.DeleteKV(ctx, stored...); err != nil {
		s.log.Warn("could not forget old slack threads", "threads", len(keys), "err", err)
	}
}

// load reads the stored threads, forgetting (and deleting) those past
// the TTL and, above max, the oldest. An unreadable value is deleted.
func (s *threadSet) load(ctx context.Context) error {
	if s.store == nil {
		return nil
	}
	kv, err := s.store.KVWithPrefix(ctx, threadKeyPrefix)
	if err != nil {
		return err
	}
	var stale []string
	s.mu.Lock()
	for key, v := range kv {
		k := strings.TrimPrefix(key, threadKeyPrefix)
		ms, err := strconv.ParseInt(v, 10, 64)
		t := time.UnixMilli(ms)
		if err != nil || time.Since(t) >= s.ttl {
			stale = append(stale, k)
			continue
		}
		if t.After(s.last[k]) {
			s.last[k] = t
		}
		s.saved[k] = t
	}
	stale = append(stale, s.evictLocked()...)
	n := len(s.last)
	s.mu.Unlock()
	s.forget(ctx, stale)
	s.log.Debug("slack threads loaded", "threads", n, "expired", len(stale))
	return nil
}

// boundedSet remembers up to n strings, forgetting the oldest first.
type boundedSet struct {
	mu   sync.Mutex
	seen map[string]struct{}
	ring []string
	next int
}

func newBoundedSet(n int) *boundedSet {
	return &boundedSet{seen: make(map[string]struct{}, n), ring: make([]string, n)}
}

func (b *boundedSet) add(k string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[k]; ok {
		return
	}
	if old := b.ring[b.next]; old != "" {
		delete(b.seen, old)
	}
	b.ring[b.next] = k
	b.next = (b.next + 1) % len(b.ring)
	b.seen[k] = struct{}{}
}

func (b *boundedSet) has(k string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.seen[k]
	return ok
}
