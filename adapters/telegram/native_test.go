package telegram_test

// native_test.go: what a bot meets beyond messages — a stale webhook, the
// command menu, a deleted forum topic, a group upgraded to a supergroup.

import (
	"testing"
)

// A webhook left set (by webhook mode or another deployment) is removed
// before polling, so getUpdates does not answer 409 forever.
func TestPollingRemovesStaleWebhook(t *testing.T) {
	srv := newFake(t)
	srv.SetWebhook("https://old.example/telegram")
	ad := newAdapter(srv, nil)
	sk := newSink()
	run(t, ad, sk)
	srv.DM(42, "alice", "after the webhook")
	if m := sk.next(t); m.Text != "after the webhook" {
		t.Errorf("got %+v", m)
	}
	if srv.Webhook() != nil {
		t.Errorf("webhook still set: %v", srv.Webhook())
	}
	if n := srv.Attempts("deleteWebhook"); n != 1 {
		t.Errorf("deleteWebhook sent %d times, want 1", n)
	}
	if c := srv.Calls("deleteWebhook"); len(c) == 1 && c[0].Form.Get("drop_pending_updates") == "true" {
		t.Error("deleteWebhook dropped the pending updates")
	}
}

