package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heraldgw/herald"
)

// SendMessage is the send_message tool: action "send" delivers a message
// to a target through the gateway's one delivery path (a
// herald.Deliverer); action "list" says which platforms can be reached.
// Targets are Hermes': "platform" (its home channel), "platform:chat_id",
// "platform:chat_id:thread_id". Until Bind is called (no gateway runs),
// every send is a tool error.
type SendMessage struct {
	mu        sync.RWMutex
	deliverer herald.Deliverer
	platforms func() []string
}

var _ Tool = (*SendMessage)(nil)

// Bind hands the tool the gateway's deliverer and the list of configured
// platforms. It may be called at any time, from any goroutine.
func (t *SendMessage) Bind(d herald.Deliverer, platforms func() []string) {
	t.mu.Lock()
	t.deliverer, t.platforms = d, platforms
	t.mu.Unlock()
}

func (*SendMessage) Name() string { return "send_message" }
func (*SendMessage) Description() string {
	return "Send a message to a chat on a messaging platform. target is 'platform' (its home channel), " +
		"'platform:chat_id' or 'platform:chat_id:thread_id'. Use action='list' to see the platforms you can reach."
}
func (*SendMessage) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"action":{"type":"string","enum":["send","list"],"description":"send (default) or list"},` +
		`"target":{"type":"string","description":"platform, platform:chat_id or platform:chat_id:thread_id"},` +
		`"message":{"type":"string","description":"The text to send"}},"required":[]}`)
}

// knownPlatforms are the platforms herald has adapters for.
var knownPlatforms = map[herald.Platform]bool{
	herald.PlatformLocal: true, herald.PlatformTelegram: true, herald.PlatformDiscord: true, herald.PlatformSlack: true, herald.PlatformCLI: true,
}

func (t *SendMessage) Run(ctx context.Context, c *Call) (string, error) {
	t.mu.RLock()
	d, list := t.deliverer, t.platforms
	t.mu.RUnlock()
	var configured []string
	if list != nil {
		configured = list()
	}
	action := strings.ToLower(strings.TrimSpace(c.String("action")))
	switch action {
	case "list":
		if d == nil {
			return "", errors.New("send_message: no gateway is running, so no platform can be reached")
		}
		b, err := json.Marshal(map[string]any{
			"platforms": configured,
			"targets":   "use 'platform' for its home channel, 'platform:chat_id' or 'platform:chat_id:thread_id'",
		})
		return string(b), err
	case "", "send":
	default:
		return "", fmt.Errorf("send_message: unknown action %q (use send or list)", action)
	}
	target, text := c.String("target"), c.String("message")
	if strings.TrimSpace(target) == "" || strings.TrimSpace(text) == "" {
		return "", errors.New("Both 'target' and 'message' are required when action='send'")
	}
	to, err := herald.ParseTarget(target)
	if err != nil {
		return "", fmt.Errorf("send_message: %w", err)
	}
	if !knownPlatforms[to.Platform] && !slices.Contains(configured, string(to.Platform)) {
		return "", fmt.Errorf("Unknown platform: %s", to.Platform)
	}
	if d == nil {
		return "", errors.New("send_message: no gateway is running, so the message cannot be delivered")
	}
	found := false
	for _, p := range configured {
		if p == string(to.Platform) {
			found = true
		}
	}
	if !found {
		return "", fmt.Errorf("send_message: platform %s is not configured (configured: %s)", to.Platform, strings.Join(configured, ", "))
	}
	answer := map[string]any{"success": true, "target": to.String()}
	// a queued or maybe-sent message is not a failure: the model must
	// not send it again
	var queued *herald.QueuedError
	switch err := d.Deliver(ctx, to, text); {
	case err == nil:
	case errors.As(err, &queued):
		answer["note"] = "rate limited: the message is queued and will be delivered at " + queued.Until.UTC().Format(time.RFC3339) + "; do not send it again"
	case errors.Is(err, herald.ErrMaybeSent):
		answer["note"] = "the platform did not confirm the message in time; it was probably delivered; do not send it again"
	default:
		return "", fmt.Errorf("send_message: %w", err)
	}
	b, err := json.Marshal(answer)
	return string(b), err
}
