package adapters

// replies.go: handing what the gateway sends back to the HTTP request
// that caused it. A request waits on the id of the inbound message it
// handed to the Sink; the adapter's Send passes each Outgoing (by its
// Cause) here, and the request reads what arrived once the message's
// Receipt resolved (or as it arrives, to stream it).

import "sync"

// Replies collects, per inbound message id, what the gateway sent in
// answer to it. A reply is matched by the message id (Outgoing.Cause)
// and by the chat it goes to, so that no request collects another chat's
// replies. The zero value is ready to use.
type Replies[T any] struct {
	mu      sync.Mutex
	waiting map[string]*Waiter[T]
}

// Waiter is what one or more requests waiting on the same message id
// (from the same chat) have collected.
type Waiter[T any] struct {
	chat string
	refs int // requests waiting with this id (guarded by Replies.mu)

	mu   sync.Mutex
	got  []T
	kick chan struct{}
}

// Await registers a request waiting for the replies to message id from
// chat. It fails when id is in flight for another chat; requests from
// the same chat with the same id share one Waiter. Call Release when the
// request is over.
func (rs *Replies[T]) Await(id, chat string) (*Waiter[T], bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.waiting == nil {
		rs.waiting = map[string]*Waiter[T]{}
	}
	w := rs.waiting[id]
	if w == nil {
		w = &Waiter[T]{chat: chat, kick: make(chan struct{}, 1)}
		rs.waiting[id] = w
	} else if w.chat != chat {
		return nil, false
	}
	w.refs++
	return w, true
}

// Release ends one request's wait on id.
func (rs *Replies[T]) Release(id string, w *Waiter[T]) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if w.refs--; w.refs == 0 {
		delete(rs.waiting, id)
	}
}

// Deliver hands v to the request waiting on message id cause, if that
// request came from chat; it reports whether one took it.
func (rs *Replies[T]) Deliver(chat, cause string, v T) bool {
	rs.mu.Lock()
	w := rs.waiting[cause]
	rs.mu.Unlock()
	if w == nil || w.chat != chat {
		return false
	}
	w.mu.Lock()
	w.got = append(w.got, v)
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
	return true
}

// Got returns a copy of what arrived so far, in order.
func (w *Waiter[T]) Got() []T {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]T{}, w.got...)
}

// Arrived receives a value after something new arrived (several
// arrivals may share one); read Got then.
func (w *Waiter[T]) Arrived() <-chan struct{} { return w.kick }

// Revise rewrites what every request waiting from chat has collected:
// revise returns each value as it is to be, and whether it changed. A
// sent message was edited (a streamed reply grew), and a request that
// answers once the turn is over must return the message as it ended,
// once. It reports whether any value changed.
func (rs *Replies[T]) Revise(chat string, revise func(T) (T, bool)) bool {
	rs.mu.Lock()
	var ws []*Waiter[T]
	for _, w := range rs.waiting {
		if w.chat == chat {
			ws = append(ws, w)
		}
	}
	rs.mu.Unlock()
	changed := false
	for _, w := range ws {
		w.mu.Lock()
		for i, v := range w.got {
			if nv, ok := revise(v); ok {
				w.got[i], changed = nv, true
			}
		}
		w.mu.Unlock()
	}
	return changed
}
