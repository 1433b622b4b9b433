package gateway

// activity.go reports what the Runner is doing now, for `herald status`
// (GET /v1/status on the local API).

// Activity is a snapshot of the Runner's work. It is read chat by chat,
// not under one lock, so the counts may be a moment apart.
type Activity struct {
	// Chats is how many chats the gateway holds in memory.
	Chats int
	// RunningTurns is how many chats are running a turn now.
	RunningTurns int
	// QueuedMessages is how many inbound messages wait: for their chat's
	// running turn (busy_input_mode queue) or for the chat's intake.
	QueuedMessages int
	// QueuedDeliveries is how many outbound messages wait for a rate limit
	// to pass (Delivery().Queued).
	QueuedDeliveries int64
}

// Activity returns what the Runner is doing now.
func (r *Runner) Activity() Activity {
	r.mu.Lock()
	chats := make([]*chat, 0, len(r.chats))
	for _, c := range r.chats {
		chats = append(chats, c)
	}
	r.mu.Unlock()
	a := Activity{Chats: len(chats), QueuedDeliveries: r.queued.Load()}
	for _, c := range chats {
		c.mu.Lock()
		if c.running != nil {
			a.RunningTurns++
		}
		a.QueuedMessages += len(c.queue) + len(c.intake)
		c.mu.Unlock()
	}
	return a
}
