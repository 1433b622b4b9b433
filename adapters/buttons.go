package adapters

// buttons.go: choices shown as buttons under a message (an approval
// prompt's Approve once / Approve for session / Always / Deny), and the
// presses that come back. The gateway decides what a press means; an
// adapter only draws the buttons in its platform's form (Telegram inline
// keyboard, Discord message components, Slack Block Kit actions) and
// reports who pressed which one.

import (
	"context"

	"github.com/heraldgw/herald"
)

// MaxButtonData is the longest Button.Data the gateway makes: Telegram
// carries at most 64 bytes of callback data, and the other platforms
// take more.
const MaxButtonData = 64

// Button is one choice under a message.
type Button struct {
	// Label is the text on the button ("Approve once").
	Label string
	// Data is what a press reports back (Press.Data); opaque to the
	// adapter, at most MaxButtonData bytes.
	Data string
	// Style hints at the button's colour: "primary", "danger" or "" for
	// the platform's default.
	Style string
}

// ButtonSender is implemented by adapters that can show buttons. The
// gateway sets Outgoing.Buttons only for adapters that implement it (on
// the last part of a split message); Send then draws them in one row
// under the text. Others get the text alone, which always says how to
// answer by typing.
type ButtonSender interface {
	// CloseButtons replaces the text of the message messageID (in the
	// model's Markdown, formatted as Send formats Outgoing.Text) and
	// removes its buttons, so that a prompt shows the decision and can
	// be pressed no more.
	CloseButtons(ctx context.Context, to herald.Target, messageID, text string) error
}

// Press is one press of a button, as the platform reported it. The
// adapter fills it from what the platform vouches for (the presser's
// platform user id, never a field of the button's own data).
type Press struct {
	// Chat is where the message with the button is (platform, chat,
	// thread); ChatType as the adapter knows it.
	Chat     herald.Target
	ChatType herald.ChatType
	// MessageID is the platform id of the message the button is under.
	MessageID string
	// UserID and UserName are the presser's.
	UserID   string
	UserName string
	// Data is the pressed button's Button.Data.
	Data string
}

// PressSink is implemented by sinks (the gateway) that take button
// presses. An adapter whose Sink implements it reports each press with
// Press and shows the returned text to the presser alone (Telegram
// answerCallbackQuery, a Discord ephemeral reply, Slack
// chat.postEphemeral); "" shows nothing. Press returns at once: the
// gateway edits the message itself (CloseButtons) when the press decided
// something. An adapter whose Sink does not implement it answers every
// press with "This button no longer works."
type PressSink interface {
	Press(ctx context.Context, p Press) (reply string)
}
