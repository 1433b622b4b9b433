package gateway

import "sync"

// dedup remembers recently seen (platform, message id) pairs so that a
// reconnect replay is never answered twice. It is bounded: the oldest ids
// are forgotten first.
type dedup struct {
	mu   sync.Mutex
	seen map[string]struct{}
	ring []string
	next int
}

func newDedup(n int) *dedup {
	return &dedup{seen: make(map[string]struct{}, n), ring: make([]string, n)}
}

// first reports whether key is new (and remembers it).
func (d *dedup) first(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.seen[key]; ok {
		return false
	}
	if old := d.ring[d.next]; old != "" {
		delete(d.seen, old)
	}
	d.ring[d.next] = key
	d.next = (d.next + 1) % len(d.ring)
	d.seen[key] = struct{}{}
	return true
}
