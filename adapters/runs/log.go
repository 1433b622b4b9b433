package runs

// log.go: a run's event log, bounded in bytes (the oldest events go
// first, and are counted), and GET /v1/runs/{id}/events serving it as
// Server-Sent Events: the log from the start (or after Last-Event-ID),
// then live events, until the run's last event.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

type logEvent struct {
	seq  int64
	name string
	data []byte
}

type eventLog struct {
	max int
	// events[start:] are kept; the slice is compacted when half of it
	// is dropped ones
	events []logEvent
	start  int
	bytes  int
	last   int64 // seq of the newest event (ids start at 1)
	// final is the seq of the run's last event (0 while it runs)
	final int64
}

func (l *eventLog) add(name string, data []byte) int64 {
	l.last++
	e := logEvent{seq: l.last, name: name, data: data}
	l.events = append(l.events, e)
	l.bytes += e.size()
	// drop the oldest past the bound, keeping the newest event
	for l.bytes > l.max && l.start < len(l.events)-1 {
		l.bytes -= l.events[l.start].size()
		l.events[l.start] = logEvent{}
		l.start++
	}
	if l.start > len(l.events)/2 {
		l.events = append([]logEvent(nil), l.events[l.start:]...)
		l.start = 0
	}
	return e.seq
}

func (e logEvent) size() int { return len(e.name) + len(e.data) + 32 }

// since returns the events after seq, and how many of those were
// dropped from the log.
func (l *eventLog) since(seq int64) (evs []logEvent, missed int64) {
	kept := l.events[l.start:]
	if len(kept) == 0 {
		return nil, 0
	}
	first := kept[0].seq
	if seq+1 < first {
		missed = first - seq - 1
		seq = first - 1
	}
	i := int(seq + 1 - first)
	if i >= len(kept) {
		return nil, missed
	}
	return append([]logEvent(nil), kept[i:]...), missed
}

// writeTimeout bounds one write to an events client.
const writeTimeout = 10 * time.Second

// keepAlive is how often an idle stream gets a comment line.
const keepAlive = 15 * time.Second

func (a *Adapter) events(w http.ResponseWriter, req *http.Request) {
	r := a.lookup(w, req)
	if r == nil {
		return
	}
	var after int64
	if last := req.Header.Get("Last-Event-ID"); last != "" {
		n, err := strconv.ParseInt(strings.TrimSpace(last), 10, 64)
		if err != nil || n < 0 {
			writeErr(w, http.StatusBadRequest, "Last-Event-ID "+strconv.Quote(last)+" is not an event id of this run")
			return
		}
		after = n
	}
	r.mu.Lock()
	last := r.log.last
	r.mu.Unlock()
	if after > last {
		writeErr(w, http.StatusBadRequest, fmt.Sprintf("Last-Event-ID %d is beyond the run's last event (%d)", after, last))
		return
	}
	rc := http.NewResponseController(w)
	// a stream outlives the listener's whole-request read deadline
	rc.SetReadDeadline(time.Time{})
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	fmt.Fprint(w, ": herald run "+r.id+"\n\n")
	keep := time.NewTicker(keepAlive)
	defer keep.Stop()
	for {
		r.mu.Lock()
		evs, missed := r.log.since(after)
		final, changed := r.log.final, r.changed
		r.mu.Unlock()
		if missed > 0 {
			fmt.Fprintf(w, "event: dropped\ndata: {\"dropped\":%d}\n\n", missed)
		}
		for _, e := range evs {
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.seq, e.name, e.data)
			after = e.seq
		}
		if rc.Flush() != nil || (final != 0 && after >= final) {
			return
		}
		select {
		case <-changed:
		case <-keep.C:
			rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-req.Context().Done():
			return
		}
		// the deadline covers the writes and the flush that follow
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	}
}
