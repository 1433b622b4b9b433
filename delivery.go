package herald

// delivery.go: what a delivery that neither went through nor failed
// reports (see Deliverer).

import (
	"errors"
	"fmt"
	"time"
)

// QueuedError is returned by Deliverer.Deliver for text that was not sent
// yet: the platform asked the bot to wait longer than the gateway retries
// for, so the text (or the parts of it not sent yet) is kept, behind
// whatever else waits for the chat, and sent at Until or later, also
// after a restart. It is not lost; delivering it again would double it.
type QueuedError struct {
	Target Target
	Until  time.Time
}

func (e *QueuedError) Error() string {
	return fmt.Sprintf("deliver to %s: queued, to be sent at %s (the platform asked the bot to wait)", e.Target, e.Until.UTC().Format(time.RFC3339))
}

// ErrMaybeSent is wrapped by the error Deliverer.Deliver returns when a
// send timed out after its request was written: the platform may have
// taken the text. It is not sent again (that could double it).
var ErrMaybeSent = errors.New("the platform did not answer in time after the message was written: it may have been delivered, and is not sent again")
