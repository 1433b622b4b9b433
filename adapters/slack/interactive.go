package slack

// interactive.go takes the presses of herald's buttons: block_actions
// payloads, over Socket Mode ("interactive" envelopes) or posted to the
// Events API receiver (the app's Interactivity Request URL, a signed form
// whose field payload is the JSON). A press is acknowledged at once, then
// reported to the sink when it takes presses (adapters.PressSink), and
// the sink's reply is shown to the presser alone (chat.postEphemeral).
// Other interactions (menus, modals, shortcuts) are acknowledged and
// ignored.

import (
	"context"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// NoPressSink is the answer to a press when the sink takes none.
const NoPressSink = "This button no longer works."

// pressReplyTimeout bounds posting the answer to a press.
const pressReplyTimeout = 10 * time.Second

// handleInteraction reports a button press to the sink and shows its
// reply to the presser.
func (a *Adapter) handleInteraction(ctx context.Context, sink adapters.Sink, ic slackapi.InteractionCallback) {
	if ic.Type != slackapi.InteractionTypeBlockActions {
		a.log.Debug("slack interaction ignored", "type", ic.Type)
		return
	}
	var pressed *slackapi.BlockAction
	for _, act := range ic.ActionCallback.BlockActions {
		if act != nil && act.Type == slackapi.ActionType(slackapi.METButton) {
			pressed = act
			break
		}
	}
	if pressed == nil {
		a.log.Debug("slack block action ignored: no button pressed")
		return
	}
	p, ok := pressOf(ic, pressed)
	if !ok {
		a.log.Warn("slack sent a button press without a user, channel or message; dropped", "action_id", pressed.ActionID)
		return
	}
	a.log.Debug("slack button pressed", "channel", p.Chat.ChatID, "message", p.MessageID, "user", p.UserID, "action_id", pressed.ActionID)
	reply := NoPressSink
	if ps, ok := sink.(adapters.PressSink); ok {
		reply = ps.Press(ctx, p)
	}
	if reply == "" {
		return
	}
	// posted beside the event loop: presses reach the sink in order, and
	// a slow post holds up no other event
	a.replies.Add(1)
	go func() {
		defer a.replies.Done()
		a.recovered("slack: answering a button press panicked", func() { a.answerPress(ctx, p, reply) })
	}()
}

// answerPress shows reply to the presser alone, in the thread of the
// message pressed.
func (a *Adapter) answerPress(ctx context.Context, p adapters.Press, reply string) {
	ctx, cancel := context.WithTimeout(ctx, pressReplyTimeout)
	defer cancel()
	opts := []slackapi.MsgOption{a.textOption(reply, false)}
	if p.Chat.ThreadID != "" {
		opts = append(opts, slackapi.MsgOptionTS(p.Chat.ThreadID))
	}
	if _, err := a.api.PostEphemeralContext(ctx, p.Chat.ChatID, p.UserID, opts...); err != nil {
		a.log.Warn("slack: could not answer a button press", "channel", p.Chat.ChatID, "user", p.UserID,
			"err", mapError("post to "+p.UserID+" in "+p.Chat.ChatID, err, "SLACK_BOT_TOKEN"))
	}
}

// pressOf reads a press from what Slack vouches for: the presser is the
// payload's user, the message is the container's (or the message's), the
// data is the pressed button's value.
func pressOf(ic slackapi.InteractionCallback, act *slackapi.BlockAction) (adapters.Press, bool) {
	channel := first(ic.Container.ChannelID, ic.Channel.ID)
	ts := first(ic.Container.MessageTs, ic.Message.Timestamp)
	if ic.User.ID == "" || channel == "" || ts == "" {
		return adapters.Press{}, false
	}
	thread := first(ic.Container.ThreadTs, ic.Message.ThreadTimestamp)
	if thread == ts {
		// a top-level message others replied to is the parent of its
		// thread, not in one
		thread = ""
	}
	return adapters.Press{
		Chat:      herald.Target{Platform: herald.PlatformSlack, ChatID: channel, ThreadID: thread},
		ChatType:  chatTypeOf("", channel),
		MessageID: ts,
		UserID:    ic.User.ID,
		UserName:  first(ic.User.Name, ic.User.Username, ic.User.ID),
		Data:      act.Value,
	}, true
}

// first returns the first of ss that is not "".
func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
