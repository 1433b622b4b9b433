package webhook

// seen.go is the idempotency record: each delivery id a route took is
// kept in state.db's kv table (with where its answer goes), so a sender's
// retry of the same delivery never runs twice, also after a restart.
// Records older than keepFor are pruned when the adapter starts.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// KV is the part of the state store the adapter keeps its records in;
// *sessions.Store implements it.
type KV interface {
	KV(ctx context.Context, key string) (string, bool, error)
	KVWithPrefix(ctx context.Context, prefix string) (map[string]string, error)
	SetKV(ctx context.Context, key, value string) error
	DeleteKV(ctx context.Context, keys ...string) error
}

// seenPrefix namespaces the records in the kv table.
const seenPrefix = "webhook.delivery/"

// keepFor is how long a delivery id is remembered: longer than any
// sender's retries (GitHub and GitLab give up within hours), as long as
// the gateway's inbound journal keeps its rows.
const keepFor = 7 * 24 * time.Hour

// maxIDLen bounds a delivery id kept as it came; longer ones are hashed.
const maxIDLen = 128

// record is what is kept of one delivery.
type record struct {
	// At is when it arrived (Unix milliseconds).
	At int64 `json:"at"`
	// To is where its answer goes ("log" for the log).
	To string `json:"to"`
}

// seen claims delivery ids. Claims are serialised: one gateway owns a
// home, so a mutex makes check-then-write atomic.
type seen struct {
	mu    sync.Mutex
	store KV
}

// seenKey is the kv key of a route's delivery id.
func seenKey(route, id string) string {
	return seenPrefix + route + "/" + id
}

// cleanID returns a delivery id fit to be a key and a thread id: as it
// came when short and printable, else its SHA-256.
func cleanID(id string) string {
	id = strings.TrimSpace(id)
	ok := id != "" && len(id) <= maxIDLen
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.:", c) >= 0
	}
	if ok {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256-" + hex.EncodeToString(sum[:16])
}

// claim records id for route; fresh is false when it was there already.
func (s *seen) claim(ctx context.Context, route, id string, r record) (fresh bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := seenKey(route, id)
	if _, ok, err := s.store.KV(ctx, key); err != nil || ok {
		return false, err
	}
	b, _ := json.Marshal(r)
	return true, s.store.SetKV(ctx, key, string(b))
}

// release forgets a claim whose delivery was not taken, so that the
// sender's retry runs.
func (s *seen) release(ctx context.Context, route, id string) error {
	return s.store.DeleteKV(context.WithoutCancel(ctx), seenKey(route, id))
}

// lookup returns the record of a route's delivery id.
func (s *seen) lookup(ctx context.Context, route, id string) (record, bool, error) {
	v, ok, err := s.store.KV(ctx, seenKey(route, id))
	if err != nil || !ok {
		return record{}, false, err
	}
	var r record
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return record{}, false, fmt.Errorf("webhook: delivery record %s: %w", id, err)
	}
	return r, true, nil
}

// prune deletes the records older than keepFor (and unreadable ones).
func (s *seen) prune(ctx context.Context, now time.Time) (int, error) {
	all, err := s.store.KVWithPrefix(ctx, seenPrefix)
	if err != nil {
		return 0, err
	}
	var old []string
	cut := now.Add(-keepFor).UnixMilli()
	for k, v := range all {
		var r record
		if json.Unmarshal([]byte(v), &r) != nil || r.At < cut {
			old = append(old, k)
		}
	}
	return len(old), s.store.DeleteKV(ctx, old...)
}
