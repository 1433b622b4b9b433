package local_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/local"
)

// publisher stands in for the hook registry's subscriptions.
type publisher struct {
	mu  sync.Mutex
	fns map[int]func(string, any)
	n   int
}

func (p *publisher) subscribe(fn func(string, any)) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	id := p.n
	if p.fns == nil {
		p.fns = map[int]func(string, any){}
	}
	p.fns[id] = fn
	return func() { p.mu.Lock(); delete(p.fns, id); p.mu.Unlock() }
}

func (p *publisher) fire(name string, payload any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, fn := range p.fns {
		fn(name, payload)
	}
}

// runLocal runs the local adapter on 127.0.0.1 until the test ends.
func runLocal(t *testing.T, cfg local.Config) string {
	t.Helper()
	cfg.Listen, cfg.Token = "127.0.0.1:0", "test-token"
	addr := make(chan string, 1)
	cfg.OnListen = func(a string) { addr <- a }
	a := local.New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case s := <-addr:
		return s
	case err := <-done:
		t.Fatalf("Run: %v", err)
		return ""
	}
}

// subscribe opens /v1/events and reads only the response's head.
func subscribe(t *testing.T, addr, lastID string) (*http.Response, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer test-token\r\n"
	if lastID != "" {
		req += "Last-Event-ID: " + lastID + "\r\n"
	}
	io.WriteString(c, req+"\r\n")
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /v1/events: %v %v", res, err)
	}
	return res, c
}

type sseEvent struct{ id, name, data string }

// readEvents reads the stream until it ends (or deadline).
func readEvents(t *testing.T, res *http.Response, c net.Conn, max int) []sseEvent {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var out []sseEvent
	var ev sseEvent
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.name != "" {
				out = append(out, ev)
				if len(out) == max {
					return out
				}
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			ev.name = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.data = line[6:]
		}
	}
	// a dropped client's stream may also end mid-write, when the write
	// to it timed out before it read again
	if err := sc.Err(); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("reading events: %v (after %d events)", err, len(out))
	}
	return out
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// Ten clients that never read while 4,000 events of 8 KiB fire: each is
// dropped once it falls 1 MiB behind, so the gateway's heap stays bounded;
// reconnecting, a client is told how many events it missed.
func TestEventsSlowClientsAreDroppedAndTold(t *testing.T) {
	const clients, events, size = 10, 4000, 8 << 10
	pub := &publisher{}
	addr := runLocal(t, local.Config{Events: pub.subscribe})
	type sub struct {
		res *http.Response
		c   net.Conn
	}
	var subs []sub
	for range clients {
		res, c := subscribe(t, addr, "")
		subs = append(subs, sub{res, c})
	}
	before := liveHeap()
	peak := before
	payload := map[string]string{"text": strings.Repeat("z", size)}
	for i := range events {
		pub.fire("agent:step", payload)
		if i%200 == 199 {
			peak = max(peak, liveHeap())
		}
	}
	grew := int64(peak) - int64(before)
	t.Logf("live heap: %.1f MiB before, %.1f MiB at peak (+%.1f MiB) with %d clients not reading %d events of %d KiB (%.0f MiB in all)",
		float64(before)/(1<<20), float64(peak)/(1<<20), float64(grew)/(1<<20), clients, events, size>>10, float64(clients*events*size)/(1<<20))
	const bound = 32 << 20
	if grew > bound {
		t.Fatalf("heap grew by %d MiB; bound %d MiB", grew>>20, bound>>20)
	}
	// a client reading now gets what was queued, then the stream ends
	got := readEvents(t, subs[0].res, subs[0].c, events)
	if len(got) == 0 || len(got) >= events {
		t.Fatalf("a dropped client read %d of %d events", len(got), events)
	}
	last := got[len(got)-1].id
	epoch, seq, _ := strings.Cut(last, "-")
	var n int
	fmt.Sscan(seq, &n)
	res, c := subscribe(t, addr, last)
	first := readEvents(t, res, c, 1)
	if want := fmt.Sprintf(`{"dropped":%d}`, events-n); len(first) != 1 || first[0].name != "dropped" || first[0].data != want {
		t.Fatalf("reconnecting after id %s: first event %+v, want dropped %s", last, first, want)
	}
	t.Logf("client dropped after %d of %d events; told on reconnect: %s", len(got), events, first[0].data)
	// an id from an earlier run: the count is unknown, and said so
	res, c = subscribe(t, addr, "x"+epoch+"-1")
	if first := readEvents(t, res, c, 1); len(first) != 1 || first[0].name != "dropped" || !strings.Contains(first[0].data, "restarted") {
		t.Fatalf("reconnecting with a stale id: %+v", first)
	}
}

// The listener's whole-request read deadline must not end a stream.
func TestEventsOutliveTheBodyTimeout(t *testing.T) {
	pub := &publisher{}
	const bodyTimeout = 200 * time.Millisecond
	addr := runLocal(t, local.Config{Events: pub.subscribe, Limits: adaptersLimits(bodyTimeout)})
	res, c := subscribe(t, addr, "")
	fired := time.AfterFunc(3*bodyTimeout, func() { pub.fire("agent:end", map[string]string{"k": "v"}) })
	defer fired.Stop()
	got := readEvents(t, res, c, 1)
	if len(got) != 1 || got[0].name != "agent:end" {
		t.Fatalf("stream after the body timeout: %+v", got)
	}
}

func adaptersLimits(body time.Duration) adapters.HTTPLimits {
	return adapters.HTTPLimits{BodyTimeout: body}
}
