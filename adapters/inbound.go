package adapters

// inbound.go is the shared inbound listener's side of the adapters: the
// endpoints that face the internet (Telegram's webhook, Slack's Events
// API, the webhook platform's routes) are served by one HTTP server,
// separate from the local API. An adapter offers its paths through
// InboundRouter; cmd collects them into an InboundMux before the gateway
// runs and serves it with ServeHTTP. Each path authenticates by its own
// platform's signature: the mux checks nothing itself.

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
)

// InboundRouter is implemented by adapters with endpoints on the inbound
// listener. InboundRoutes is called once, before Run, and maps exact
// paths ("/telegram/webhook") to their handlers; nil or empty means none
// (the adapter serves a listener of its own, or none at all). A handler
// is served from before Run starts to after it returns: it answers 503
// while its adapter is not running (Mount does that).
type InboundRouter interface {
	InboundRoutes() map[string]http.Handler
}

// InboundMux routes requests on the inbound listener by exact path.
type InboundMux struct {
	routes map[string]http.Handler
	owners map[string]string
}

// NewInboundMux returns an empty mux.
func NewInboundMux() *InboundMux {
	return &InboundMux{routes: map[string]http.Handler{}, owners: map[string]string{}}
}

// Add puts owner's routes on the mux. A path that is not absolute and
// clean, or that another owner (or owner itself) already took, is an
// error naming the path and both owners; nothing of routes is added then.
func (m *InboundMux) Add(owner string, routes map[string]http.Handler) error {
	paths := make([]string, 0, len(routes))
	for p := range routes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "?#") || path.Clean(p) != p {
			return fmt.Errorf("inbound listener: %s: path %q is not a clean absolute path", owner, p)
		}
		if routes[p] == nil {
			return fmt.Errorf("inbound listener: %s: path %s has no handler", owner, p)
		}
		if prev, ok := m.owners[p]; ok {
			return fmt.Errorf("inbound listener: path %s is taken by both %s and %s", p, prev, owner)
		}
	}
	for _, p := range paths {
		m.routes[p] = routes[p]
		m.owners[p] = owner
	}
	return nil
}

// Paths returns the routed paths, sorted, each with its owner
// ("/slack/events (slack)").
func (m *InboundMux) Paths() []string {
	out := make([]string, 0, len(m.routes))
	for p := range m.routes {
		out = append(out, p+" ("+m.owners[p]+")")
	}
	sort.Strings(out)
	return out
}

// Len is the number of routed paths.
func (m *InboundMux) Len() int { return len(m.routes) }

// ServeHTTP hands a request to the handler of its exact path; any other
// path is a 404 that says nothing about what is routed.
func (m *InboundMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, ok := m.routes[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h.ServeHTTP(w, r)
}

// Mount is the handler an adapter gives the inbound listener before it
// runs: it serves what the adapter's Run put in it, and answers 503 (so
// the platform retries) while nothing is. The zero value is ready.
type Mount struct {
	mu sync.RWMutex
	h  http.Handler
}

// Serve serves h on the mount until ctx ends, then takes it down again.
// It blocks; Run calls it where it would otherwise serve a listener of
// its own.
func (m *Mount) Serve(ctx context.Context, h http.Handler) {
	defer m.Put(h)()
	<-ctx.Done()
}

// Put serves h on the mount until the returned function is called.
func (m *Mount) Put(h http.Handler) (remove func()) {
	m.mu.Lock()
	m.h = h
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		m.h = nil
		m.mu.Unlock()
	}
}

// ServeHTTP implements http.Handler.
func (m *Mount) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.RLock()
	h := m.h
	m.mu.RUnlock()
	if h == nil {
		http.Error(w, "not ready; retry later", http.StatusServiceUnavailable)
		return
	}
	h.ServeHTTP(w, r)
}
