package adapters

// listen.go holds the limits every HTTP listener herald opens shares (the
// local API, the Telegram webhook, the Slack Events API): a client that
// sends its headers or body slowly, holds idle keep-alive connections, or
// opens connections by the hundred is cut off instead of holding file
// descriptors and goroutines for good.

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// HTTPLimits bound what one client of an HTTP listener can hold. A zero
// field takes its default (DefaultHTTPLimits).
type HTTPLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// BodyTimeout bounds reading a whole request, body included. A
	// streaming handler (Server-Sent Events) lifts it for its own request
	// with http.ResponseController.SetReadDeadline.
	BodyTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers.
	MaxHeaderBytes int
	// MaxBody bounds a request's body; handlers may set a lower bound of
	// their own.
	MaxBody int64
	// MaxConns bounds the connections served at once; more wait to be
	// accepted.
	MaxConns int
}

// DefaultHTTPLimits are the limits of a listener that sets none.
var DefaultHTTPLimits = HTTPLimits{
	ReadHeaderTimeout: 10 * time.Second,
	BodyTimeout:       30 * time.Second,
	IdleTimeout:       60 * time.Second,
	MaxHeaderBytes:    64 << 10,
	MaxBody:           4 << 20,
	MaxConns:          128,
}

// WithDefaults fills the zero fields of l from DefaultHTTPLimits.
func (l HTTPLimits) WithDefaults() HTTPLimits {
	d := DefaultHTTPLimits
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = d.ReadHeaderTimeout
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = d.BodyTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = d.IdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if l.MaxBody <= 0 {
		l.MaxBody = d.MaxBody
	}
	if l.MaxConns <= 0 {
		l.MaxConns = d.MaxConns
	}
	return l
}

// ServeHTTP serves h on ln under limits l until ctx ends, then shuts the
// server down (waiting up to grace for requests in flight). It returns
// nil on a clean stop, or the error that stopped the server.
func ServeHTTP(ctx context.Context, ln net.Listener, h http.Handler, l HTTPLimits, grace time.Duration) error {
	l = l.WithDefaults()
	srv := &http.Server{
		Handler:           http.MaxBytesHandler(h, l.MaxBody),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.BodyTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(LimitConns(ln, l.MaxConns)) }()
	select {
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
		<-errc
		return nil
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// LimitConns returns a listener that has at most n of its connections
// open at once: Accept waits while n are open.
func LimitConns(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{}
	closeOnce sync.Once
	done      chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
