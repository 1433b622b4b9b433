package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldgw/herald"
)

type deliveries struct {
	mu   sync.Mutex
	sent []string
	err  error
}

func (d *deliveries) Deliver(ctx context.Context, to herald.Target, text string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return d.err
	}
	d.sent = append(d.sent, to.String()+" "+text)
	return nil
}

func TestSendMessage(t *testing.T) {
	d := &deliveries{}
	bound := &SendMessage{}
	bound.Bind(d, func() []string { return []string{"local", "telegram"} })
	for _, tc := range []struct {
		name string
		tool *SendMessage
		args map[string]any
		err  string
		sent string
	}{
		{"home channel", bound, map[string]any{"target": "telegram", "message": "hi"}, "", "telegram hi"},
		{"chat", bound, map[string]any{"action": "send", "target": "telegram:-100123", "message": "hi"}, "", "telegram:-100123 hi"},
		{"thread", bound, map[string]any{"target": "telegram:-100123:17", "message": "hi"}, "", "telegram:-100123:17 hi"},
		{"unknown platform", bound, map[string]any{"target": "myspace:1", "message": "hi"}, "Unknown platform: myspace", ""},
		{"unconfigured platform", bound, map[string]any{"target": "discord:1", "message": "hi"}, "platform discord is not configured", ""},
		{"missing message", bound, map[string]any{"target": "telegram"}, "Both 'target' and 'message' are required", ""},
		{"bad target", bound, map[string]any{"target": "telegram:", "message": "x"}, "empty chat id", ""},
		{"no gateway", &SendMessage{}, map[string]any{"target": "telegram", "message": "hi"}, "no gateway is running", ""},
		{"bad action", bound, map[string]any{"action": "shout"}, "unknown action", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d.sent = nil
			out, err := tc.tool.Run(context.Background(), &Call{Args: tc.args})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !strings.Contains(out, `"success":true`) {
				t.Fatalf("%s %v", out, err)
			}
			if len(d.sent) != 1 || d.sent[0] != tc.sent {
				t.Errorf("sent %q", d.sent)
			}
		})
	}
	t.Run("list", func(t *testing.T) {
		out, err := bound.Run(context.Background(), &Call{Args: map[string]any{"action": "list"}})
		if err != nil || !strings.Contains(out, `"platforms":["local","telegram"]`) {
			t.Errorf("%s %v", out, err)
		}
	})
	// queued or maybe sent is not a failure: the model must not send it again
	for _, tc := range []struct {
		err  error
		note string
	}{
		{&herald.QueuedError{Until: time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)}, "queued and will be delivered at 2026-12-03T08:00:00Z; do not send it again"},
		{fmt.Errorf("deliver to telegram:1: %w", herald.ErrMaybeSent), "probably delivered; do not send it again"},
	} {
		d.err = tc.err
		out, err := bound.Run(context.Background(), &Call{Args: map[string]any{"target": "telegram", "message": "x"}})
		if err != nil || !strings.Contains(out, `"success":true`) || !strings.Contains(out, tc.note) {
			t.Errorf("%v: %s %v", tc.err, out, err)
		}
	}
	t.Run("delivery error", func(t *testing.T) {
		d.err = errors.New("telegram: 403 bot was blocked")
		_, err := bound.Run(context.Background(), &Call{Args: map[string]any{"target": "telegram", "message": "x"}})
		if err == nil || !strings.Contains(err.Error(), "bot was blocked") {
			t.Errorf("err %v", err)
		}
	})
}
