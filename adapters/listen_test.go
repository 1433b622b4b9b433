package adapters

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// serve runs h under l on a fresh 127.0.0.1 listener until the test ends.
func serve(t *testing.T, h http.Handler, l HTTPLimits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeHTTP(ctx, ln, h, l, time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	return ln.Addr().String()
}

// closedWithin reads from c until the server closes it, and reports how
// long that took; it fails the test if c is still open after limit.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %s", limit)
	}
	return time.Since(start)
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	io.WriteString(w, "ok")
})

func TestServeHTTPClosesIdleConnections(t *testing.T) {
	addr := serve(t, ok, HTTPLimits{IdleTimeout: 200 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("first request: %v %v", res, err)
	}
	res.Body.Close()
	// the connection is now idle in keep-alive: the server must close it
	d := closedWithin(t, c, 10*time.Second)
	t.Logf("idle keep-alive connection closed after %s (idle timeout 200ms)", d)
}

func TestServeHTTPCutsSlowBody(t *testing.T) {
	addr := serve(t, ok, HTTPLimits{BodyTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// promise 1000 bytes, send 10, then stall
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789")
	d := closedWithin(t, c, 10*time.Second)
	t.Logf("slow body cut off after %s (body timeout 300ms)", d)
}

func TestServeHTTPCapsHeadersAndBody(t *testing.T) {
	var bodyErr error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, bodyErr = io.ReadAll(r.Body)
		if bodyErr != nil {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
		}
	})
	addr := serve(t, h, HTTPLimits{MaxBody: 100, MaxHeaderBytes: 1 << 10})
	res, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader(strings.Repeat("x", 101)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var mbe *http.MaxBytesError
	if res.StatusCode != http.StatusRequestEntityTooLarge || !errors.As(bodyErr, &mbe) {
		t.Fatalf("101-byte body under a 100-byte cap: status %d, read error %v", res.StatusCode, bodyErr)
	}
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	req.Header.Set("X-Big", strings.Repeat("y", 8<<10))
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("8 KiB header under a 1 KiB cap: status %d", res.StatusCode)
	}
}

// pipeListener hands out one end of in-memory pipes.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *pipeListener) Close() error   { close(l.done); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{} }

func TestLimitConns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pl := &pipeListener{conns: make(chan net.Conn, 10), done: make(chan struct{})}
		ln := LimitConns(pl, 2)
		defer ln.Close()
		for range 4 {
			server, client := net.Pipe()
			defer client.Close()
			pl.conns <- server
		}
		accepted := make(chan net.Conn, 4)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted <- c
			}
		}()
		synctest.Wait()
		if len(accepted) != 2 {
			t.Fatalf("accepted %d connections under a cap of 2", len(accepted))
		}
		first := <-accepted
		first.Close()
		first.Close() // a second Close must not free a second slot
		synctest.Wait()
		if len(accepted) != 2 {
			t.Fatalf("after one close: %d open, want 2", len(accepted))
		}
	})
}
