package local

// events.go is GET /v1/events: every hook point as it fires, as
// Server-Sent Events. One subscription to the hooks feeds every client;
// each event is encoded once and shared. A client may fall behind by at
// most its byte budget: past it, it is dropped (its connection closed),
// and when it reconnects with the Last-Event-ID its browser or library
// sends, the stream first says how many events it missed. The hub
// subscribes to the hooks when its first client comes and stays
// subscribed, so that it can count the events a reconnecting client
// missed.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultEventBuffer is how far, in bytes, a /v1/events client may fall
// behind before it is dropped.
const DefaultEventBuffer = 1 << 20

// eventWriteTimeout bounds one write to an events client.
const eventWriteTimeout = 10 * time.Second

type eventHub struct {
	subscribe func(fn func(name string, payload any)) (unsubscribe func())
	budget    int
	// epoch tells this process's event ids from an earlier one's
	epoch string
	once  sync.Once

	mu      sync.Mutex
	seq     int64
	clients map[*eventClient]struct{}
}

// HookPoint is the payload of one firing of a hook point: its context,
// with the firing's id and time, which go into the event's data beside
// the context ("point_id", "at").
type HookPoint struct {
	ID      string
	At      time.Time
	Context any
	// Session, if set, names whose session the point belongs to
	// ("session" beside the context), for points whose context names
	// only the session key (approvals).
	Session *SessionRef
}

// SessionRef names a session by its key and whose it is.
type SessionRef struct {
	Key      string `json:"key"`
	Platform string `json:"platform"`
	ChatID   string `json:"chat_id"`
	UserID   string `json:"user_id"`
}

func (p HookPoint) at() string {
	if p.At.IsZero() {
		return ""
	}
	return p.At.UTC().Format(time.RFC3339Nano)
}

type eventClient struct {
	wake chan struct{} // one pending wake-up

	mu      sync.Mutex
	frames  [][]byte
	queued  int  // bytes in frames
	dropped bool // fell behind by more than the budget
}

func newEventHub(subscribe func(func(string, any)) func(), budget int) *eventHub {
	if budget <= 0 {
		budget = DefaultEventBuffer
	}
	return &eventHub{subscribe: subscribe, budget: budget, epoch: newMessageID()[1:9], clients: map[*eventClient]struct{}{}}
}

// publish encodes one event and queues it for every client. It never
// blocks on a client.
func (h *eventHub) publish(name string, payload any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	if len(h.clients) == 0 {
		return
	}
	var point HookPoint
	if hp, ok := payload.(HookPoint); ok {
		point, payload = hp, hp.Context
	}
	ctxJSON, err := json.Marshal(payload)
	if err != nil || payload == nil || string(ctxJSON) == "null" {
		ctxJSON = []byte("{}")
	}
	data, _ := json.Marshal(struct {
		EventType string          `json:"event_type"`
		Context   json.RawMessage `json:"context"`
		PointID   string          `json:"point_id,omitempty"`
		At        string          `json:"at,omitempty"`
		Session   *SessionRef     `json:"session,omitempty"`
	}{name, ctxJSON, point.ID, point.at(), point.Session})
	frame := fmt.Appendf(nil, "id: %s-%d\nevent: %s\ndata: %s\n\n", h.epoch, h.seq, name, data)
	for c := range h.clients {
		c.mu.Lock()
		if !c.dropped {
			if c.queued+len(frame) > h.budget {
				c.dropped, c.frames, c.queued = true, nil, 0
			} else {
				c.frames = append(c.frames, frame)
				c.queued += len(frame)
			}
		}
		c.mu.Unlock()
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// join adds a client and returns how many events it missed since
// lastID (-1: unknown, the id is from an earlier run; 0 for none or no
// lastID).
func (h *eventHub) join(lastID string) (*eventClient, int64) {
	h.once.Do(func() { h.subscribe(h.publish) })
	c := &eventClient{wake: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clients[c] = struct{}{}
	if lastID == "" {
		return c, 0
	}
	epoch, seq, _ := strings.Cut(lastID, "-")
	n, err := strconv.ParseInt(seq, 10, 64)
	if epoch != h.epoch || err != nil || n > h.seq {
		return c, -1
	}
	return c, h.seq - n
}

func (h *eventHub) leave(c *eventClient) {
	h.mu.Lock()
	delete(h.clients, c)
	h.mu.Unlock()
}

// take returns the frames waiting for c, and whether c was dropped.
func (c *eventClient) take() ([][]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.frames
	c.frames, c.queued = nil, 0
	return f, c.dropped
}

func (h *eventHub) serve(w http.ResponseWriter, r *http.Request) {
	if h.subscribe == nil {
		writeErr(w, http.StatusNotFound, "events are not available")
		return
	}
	rc := http.NewResponseController(w)
	// a stream outlives the listener's whole-request read deadline
	rc.SetReadDeadline(time.Time{})
	c, missed := h.join(r.Header.Get("Last-Event-ID"))
	defer h.leave(c)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": herald events\n\n")
	switch {
	case missed > 0:
		fmt.Fprintf(w, "event: dropped\ndata: {\"dropped\":%d}\n\n", missed)
	case missed < 0:
		fmt.Fprint(w, "event: dropped\ndata: {\"dropped\":null,\"reason\":\"the gateway restarted; the events in between are not known\"}\n\n")
	}
	flush := func() bool {
		rc.SetWriteDeadline(time.Now().Add(eventWriteTimeout))
		return rc.Flush() == nil
	}
	if !flush() {
		return
	}
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			if !flush() {
				return
			}
		case <-c.wake:
			frames, dropped := c.take()
			if dropped {
				// the client reconnects with its Last-Event-ID and is
				// told how many events it missed
				return
			}
			rc.SetWriteDeadline(time.Now().Add(eventWriteTimeout))
			for _, f := range frames {
				if _, err := w.Write(f); err != nil {
					return
				}
			}
			if !flush() {
				return
			}
		}
	}
}
