package cmd

// inbound.go opens the inbound listener (inbound.listen, default
// 127.0.0.1:8644): one HTTP server, under the shared limits, for every
// endpoint that faces the internet — the routes adapters offer through
// adapters.InboundRouter. It is separate from the local API and opened
// only when some adapter has a route; each route authenticates by its own
// platform's signature.

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/heraldgw/herald/adapters"
)

// inboundListener is the opened listener, ready to serve.
type inboundListener struct {
	ln     net.Listener
	mux    *adapters.InboundMux
	limits adapters.HTTPLimits
	file   string
}

// openInbound collects the inbound routes of ads and listens when there
// are any; it returns nil when none has a route. A path taken twice, or
// an address it cannot listen on, is an error.
func openInbound(a *app, ads []adapters.Adapter) (*inboundListener, error) {
	mux := adapters.NewInboundMux()
	for _, ad := range ads {
		ir, ok := ad.(adapters.InboundRouter)
		if !ok {
			continue
		}
		if err := mux.Add(string(ad.Platform()), ir.InboundRoutes()); err != nil {
			return nil, err
		}
	}
	if mux.Len() == 0 {
		return nil, nil
	}
	addr := a.cfg.Inbound.Listen
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("inbound.listen: cannot listen on %s for %s: %w", addr, strings.Join(mux.Paths(), ", "), err)
	}
	// the webhook platform's own body limit may be above the shared one;
	// each route enforces its own
	limits := adapters.HTTPLimits{MaxBody: max(adapters.DefaultHTTPLimits.MaxBody, a.cfg.Platforms.Webhook.MaxBodyBytes)}
	for _, r := range a.cfg.Platforms.Webhook.Routes {
		limits.MaxBody = max(limits.MaxBody, r.MaxBodyBytes)
	}
	in := &inboundListener{ln: ln, mux: mux, limits: limits, file: filepath.Join(a.home, "inbound.addr")}
	os.WriteFile(in.file, []byte(ln.Addr().String()+"\n"), 0o600)
	fmt.Fprintf(a.e.stdout, "herald gateway: inbound listener on http://%s (%s)\n", ln.Addr(), strings.Join(mux.Paths(), ", "))
	a.log.Info("inbound listener listening", "addr", ln.Addr().String(), "paths", strings.Join(mux.Paths(), ", "))
	if !loopbackAddr(addr) {
		a.log.Warn("the inbound listener is not on a loopback address: serve it behind a TLS proxy", "addr", addr)
	}
	return in, nil
}

// serve serves until ctx ends.
func (in *inboundListener) serve(ctx context.Context) error {
	defer os.Remove(in.file)
	if err := adapters.ServeHTTP(ctx, in.ln, in.mux, in.limits, 5*time.Second); err != nil {
		return fmt.Errorf("inbound listener: %w", err)
	}
	return nil
}

// loopbackAddr reports whether a listen address binds a loopback host
// only ("127.0.0.1:8644", "[::1]:0", "localhost:8644").
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
