package whatsapp

// typing.go: the typing indicator. The Cloud API shows one only with a
// read receipt for a message the user sent (status "read" with
// typing_indicator), and keeps it up to 25 seconds or until herald
// answers; so the adapter remembers each user's last message id and
// renews the indicator at most every typingRenew.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

var _ adapters.Typer = (*Adapter)(nil)

// typingRenew is how often the indicator is shown again (it lasts 25 s).
const typingRenew = 20 * time.Second

// lastMessage is a user's last message and when its indicator was shown.
type lastMessage struct {
	id    string
	shown time.Time
}

// received notes user's message id, for the typing indicator.
func (a *Adapter) received(user, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.last == nil {
		a.last = map[string]lastMessage{}
	}
	a.last[user] = lastMessage{id: id}
}

// Typing implements adapters.Typer: a read receipt for the user's last
// message, with the typing indicator.
func (a *Adapter) Typing(ctx context.Context, to herald.Target) error {
	chat, err := a.recipient(to)
	if err != nil {
		return err
	}
	now := a.cfg.Now()
	a.mu.Lock()
	lm, ok := a.last[chat]
	due := ok && lm.id != "" && now.Sub(lm.shown) >= typingRenew
	if due {
		lm.shown = now
		a.last[chat] = lm
	}
	a.mu.Unlock()
	if !due {
		return nil
	}
	body, _ := json.Marshal(map[string]any{
		"messaging_product": "whatsapp", "status": "read", "message_id": lm.id,
		"typing_indicator": map[string]string{"type": "text"},
	})
	return a.graph(ctx, a.http, http.MethodPost, "/"+url.PathEscape(a.cfg.PhoneNumberID)+"/messages", body, "", nil)
}
