// Package cmdtest starts a whole herald gateway inside a test — the real
// cmd.Main with its real local platform on 127.0.0.1 — and talks to it
// over HTTP, so a user can test their own plugins, directory hooks and
// shell hooks end to end:
//
//	g := cmdtest.Start(t, cmdtest.Options{Plugins: []hooks.Plugin{myplugin.Plugin}})
//	r := g.Say(t, "chat1", "hello")
//	// r.Status == "done", r.Replies[0].Text …
//
// Each gateway gets its own $HERALD_HOME (t.TempDir() unless given) and
// is stopped when the test ends.
package cmdtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald/cmd"
	"github.com/heraldgw/herald/hooks"
)

// Options configure Start.
type Options struct {
	// Home is $HERALD_HOME; t.TempDir() when empty.
	Home string
	// Env is the gateway's whole environment (HERALD_HOME and
	// HERALD_LOCAL_LISTEN are added).
	Env map[string]string
	// Plugins are compiled into this gateway.
	Plugins []hooks.Plugin
	// Args are extra flags after "gateway" (e.g. --accept-hooks).
	Args []string
}

// Gateway is a running gateway.
type Gateway struct {
	Home  string
	Addr  string
	Token string
	// Stdout and Stderr collect what the gateway printed.
	Stdout, Stderr *Buffer

	t        testing.TB
	cancel   context.CancelFunc
	done     chan int
	stopOnce sync.Once
	code     int
}

// Buffer is a goroutine-safe bytes.Buffer.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *Buffer) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Start runs a gateway and waits until its local platform listens.
func Start(t testing.TB, o Options) *Gateway {
	t.Helper()
	if o.Home == "" {
		o.Home = t.TempDir()
	}
	env := map[string]string{}
	for k, v := range o.Env {
		env[k] = v
	}
	env["HERALD_HOME"] = o.Home
	if env["HERALD_LOCAL_LISTEN"] == "" {
		env["HERALD_LOCAL_LISTEN"] = "127.0.0.1:0"
	}
	os.Remove(filepath.Join(o.Home, "local.addr"))
	ctx, cancel := context.WithCancel(context.Background())
	g := &Gateway{t: t, Home: o.Home, cancel: cancel, done: make(chan int, 1), Stdout: &Buffer{}, Stderr: &Buffer{}}
	args := append([]string{"gateway"}, o.Args...)
	go func() {
		g.done <- cmd.Main(ctx, args, cmd.WithStdio(strings.NewReader(""), g.Stdout, g.Stderr),
			cmd.WithGetenv(func(k string) string { return env[k] }), cmd.WithPlugins(o.Plugins...))
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(o.Home, "local.addr"))
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			g.Addr = strings.TrimSpace(string(b))
			break
		}
		select {
		case code := <-g.done:
			t.Fatalf("gateway exited with %d before listening:\n%s\n%s", code, g.Stdout, g.Stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway did not start:\n%s", g.Stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tok, err := os.ReadFile(filepath.Join(o.Home, "local.token"))
	if err != nil {
		t.Fatal(err)
	}
	g.Token = strings.TrimSpace(string(tok))
	t.Cleanup(func() { g.Stop() })
	return g
}

// Stop stops the gateway (as Ctrl-C would) and returns its exit status,
// or -1 (and marks the test failed) if it does not stop within 30 s. It
// may be called from any goroutine, and more than once.
func (g *Gateway) Stop() int {
	g.stopOnce.Do(func() {
		g.cancel()
		select {
		case g.code = <-g.done:
		case <-time.After(30 * time.Second):
			g.t.Errorf("gateway did not stop within 30 s")
			g.code = -1
		}
	})
	return g.code
}

// Response is POST /v1/messages' answer.
type Response struct {
	SessionID string  `json:"session_id"`
	Status    string  `json:"status"`
	Replies   []Reply `json:"replies"`
	MessageID string  `json:"message_id"`
	Error     string  `json:"error"`
}

// Reply is one message the gateway sent: text, or a file with its
// caption.
type Reply struct {
	// ID is the message's id in the chat's outbox.
	ID   string `json:"id"`
	Text string `json:"text"`
	File *File  `json:"file,omitempty"`
	// Buttons are the choices under the message (an approval prompt's).
	Buttons []Button `json:"buttons,omitempty"`
}

// Button is one choice under a reply; pressing it is POST
// /v1/chats/{chat_id}/press with its Data.
type Button struct {
	Label string `json:"label"`
	Data  string `json:"data"`
	Style string `json:"style"`
}

// File is a file the gateway sent; GetFile downloads it.
type File struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	MIME string `json:"mime"`
	Size int64  `json:"size"`
	URL  string `json:"url"`
}

// Media is an attachment of a Message: Data holds its bytes (Send
// encodes them in base64).
type Media struct {
	Name string `json:"name"`
	MIME string `json:"mime,omitempty"`
	Data []byte `json:"data"`
}

// GetFile downloads a file the gateway sent (with the token).
func (g *Gateway) GetFile(t testing.TB, f *File) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+g.Addr+f.URL, nil)
	req.Header.Set("Authorization", "Bearer "+g.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s = %d %q %v", f.URL, res.StatusCode, b, err)
	}
	return b
}

// Text returns every reply's text joined with newlines.
func (r Response) Text() string {
	var parts []string
	for _, x := range r.Replies {
		parts = append(parts, x.Text)
	}
	return strings.Join(parts, "\n")
}

// Message is POST /v1/messages' body.
type Message struct {
	ChatID    string  `json:"chat_id"`
	UserID    string  `json:"user_id"`
	UserName  string  `json:"user_name,omitempty"`
	ChatType  string  `json:"chat_type,omitempty"`
	ThreadID  string  `json:"thread_id,omitempty"`
	Text      string  `json:"text"`
	Mentioned *bool   `json:"mentioned,omitempty"`
	Media     []Media `json:"media,omitempty"`
}

// Post sends a raw body with extra headers ("Host" sets the Host) and
// returns the status code and decoded answer. It fails the test on a
// transport error or an answer that is not JSON, so call it from the test's
// own goroutine; from any other goroutine use PostAsync.
func (g *Gateway) Post(t testing.TB, body string, hdr map[string]string) (int, Response) {
	t.Helper()
	code, out, err := g.Request(body, hdr)
	if err != nil {
		t.Fatal(err)
	}
	return code, out
}

// Request is Post without a test: it returns what went wrong instead of
// failing, so it may run on any goroutine.
func (g *Gateway) Request(body string, hdr map[string]string) (int, Response, error) {
	req, err := http.NewRequest("POST", "http://"+g.Addr+"/v1/messages", strings.NewReader(body))
	if err != nil {
		return 0, Response{}, err
	}
	req.Header.Set("Authorization", "Bearer "+g.Token)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, Response{}, err
	}
	defer res.Body.Close()
	var out Response
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, out, fmt.Errorf("response %d: %w", res.StatusCode, err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return res.StatusCode, out, fmt.Errorf("response %d is not JSON: %q", res.StatusCode, b)
	}
	return res.StatusCode, out, nil
}

// Pending is a POST /v1/messages under way on its own goroutine.
type Pending struct {
	done chan struct{}
	code int
	resp Response
	err  error
}

// PostAsync sends body as Post does, on a goroutine of its own, and
// returns at once; Wait collects the answer on the test's goroutine.
func (g *Gateway) PostAsync(body string, hdr map[string]string) *Pending {
	p := &Pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.code, p.resp, p.err = g.Request(body, hdr)
	}()
	return p
}

// Done is closed once the answer (or the error) has arrived.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait waits for the answer and returns it, failing the test if the
// request failed. Call it from the test's goroutine.
func (p *Pending) Wait(t testing.TB) (int, Response) {
	t.Helper()
	<-p.done
	if p.err != nil {
		t.Fatal(p.err)
	}
	return p.code, p.resp
}

// Send posts m and fails the test unless the answer is 200.
func (g *Gateway) Send(t testing.TB, m Message) Response {
	t.Helper()
	b, _ := json.Marshal(m)
	code, r := g.Post(t, string(b), nil)
	if code != 200 {
		t.Fatalf("POST /v1/messages = %d %+v", code, r)
	}
	return r
}

// Say sends text as user "u-<chat>" in a DM called chat.
func (g *Gateway) Say(t testing.TB, chat, text string) Response {
	t.Helper()
	return g.Send(t, Message{ChatID: chat, UserID: "u-" + chat, UserName: "Ann", ChatType: "dm", Text: text})
}

// Event is one /v1/events frame.
type Event struct {
	Name    string         `json:"event_type"`
	Context map[string]any `json:"context"`
	// PointID and At name a hook point's firing and its time.
	PointID string `json:"point_id"`
	At      string `json:"at"`
	// Session names whose session a point that carries only its key
	// belongs to (approvals).
	Session map[string]any `json:"session"`
}

// Events opens /v1/events; frames arrive on the channel until the test
// ends. It returns once the stream is open.
func (g *Gateway) Events(t testing.TB) <-chan Event {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+g.Addr+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+g.Token)
	return openEvents(t, req)
}

// TicketEvents opens /v1/events with a ticket (from POST
// /v1/events/ticket) instead of the token, as a browser's EventSource
// does; otherwise as Events.
func (g *Gateway) TicketEvents(t testing.TB, ticket string) <-chan Event {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+g.Addr+"/v1/events?ticket="+ticket, nil)
	return openEvents(t, req)
}

func openEvents(t testing.TB, req *http.Request) <-chan Event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("GET /v1/events = %d", res.StatusCode)
	}
	out := make(chan Event, 1024)
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	// the comment line the server writes first means it has subscribed
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), ":") {
			break
		}
	}
	go func() {
		defer res.Body.Close()
		defer close(out)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e Event
				if json.Unmarshal([]byte(v), &e) == nil {
					out <- e
				}
			}
		}
	}()
	return out
}

// WaitFor reads events until one named name arrives (returning it) or
// the timeout passes (failing the test).
func WaitFor(t testing.TB, events <-chan Event, name string, timeout time.Duration) Event {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("event stream ended before %s", name)
			}
			if e.Name == name {
				return e
			}
		case <-deadline:
			t.Fatalf("no %s event within %s", name, timeout)
		}
	}
}

// Log returns the gateway's log so far ($HERALD_HOME/logs/gateway.log).
func (g *Gateway) Log() string {
	b, _ := os.ReadFile(filepath.Join(g.Home, "logs", "gateway.log"))
	return string(b)
}

// WaitLog waits until the gateway's log contains substr (observer hooks
// run off the hot path, so their lines may follow the reply) and returns
// the log; it fails the test after timeout.
func (g *Gateway) WaitLog(t testing.TB, substr string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l := g.Log()
		if strings.Contains(l, substr) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("gateway.log has no %q after %s:\n%s", substr, timeout, l)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
