package whatsapp

// buttons.go: buttons as interactive messages — up to three as reply
// buttons, more as one list message whose rows are the choices — and the
// interactive replies that come back, handed to the sink's Press.

import (
	"context"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

var _ adapters.ButtonSender = (*Adapter)(nil)

// The Cloud API's limits on interactive messages.
const (
	maxReplyButtons   = 3
	maxButtonTitle    = 20
	maxListRows       = 10
	maxRowTitle       = 24
	maxButtonBody     = 1024
	maxListBody       = 4096
	listButtonLabel   = "Choose"
	pressReplyTimeout = 30 * time.Second
)

// NoPressText answers a press when the sink takes no presses.
const NoPressText = "This button no longer works."

type wireInteractive struct {
	Type   string     `json:"type"`
	Body   wireBody   `json:"body"`
	Action wireAction `json:"action"`
}

type wireBody struct {
	Text string `json:"text"`
}

type wireAction struct {
	// reply buttons
	Buttons []wireButton `json:"buttons,omitempty"`
	// a list
	Button   string        `json:"button,omitempty"`
	Sections []wireSection `json:"sections,omitempty"`
}

type wireButton struct {
	Type  string      `json:"type"`
	Reply ReplyChoice `json:"reply"`
}

type wireSection struct {
	Title string        `json:"title,omitempty"`
	Rows  []ReplyChoice `json:"rows"`
}

// interactive is text with buttons under it: reply buttons for up to
// three, else a list (the rest past ten is dropped; the text always says
// how to answer by typing). A body too long for its kind keeps its end,
// where the instructions are.
func interactive(text string, buttons []adapters.Button) wireMessage {
	if len(buttons) <= maxReplyButtons {
		act := wireAction{}
		for _, b := range buttons {
			act.Buttons = append(act.Buttons, wireButton{Type: "reply", Reply: ReplyChoice{ID: b.Data, Title: clip(b.Label, maxButtonTitle)}})
		}
		return wireMessage{Type: "interactive", Interactive: &wireInteractive{Type: "button", Body: wireBody{Text: tail(text, maxButtonBody)}, Action: act}}
	}
	rows := make([]ReplyChoice, 0, min(len(buttons), maxListRows))
	for _, b := range buttons[:min(len(buttons), maxListRows)] {
		rows = append(rows, ReplyChoice{ID: b.Data, Title: clip(b.Label, maxRowTitle)})
	}
	return wireMessage{Type: "interactive", Interactive: &wireInteractive{Type: "list", Body: wireBody{Text: tail(text, maxListBody)},
		Action: wireAction{Button: listButtonLabel, Sections: []wireSection{{Rows: rows}}}}}
}

// clip cuts s to n characters, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// tail keeps the last n characters of s, marking the cut.
func tail(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// CloseButtons implements adapters.ButtonSender. WhatsApp cannot edit a
// sent message or take its buttons away: the presser was answered by a
// message of its own, and a press of a closed prompt answers that it no
// longer waits, so there is nothing to send.
func (a *Adapter) CloseButtons(context.Context, herald.Target, string, string) error { return nil }

// handlePress hands p to the sink's Press, when the sink takes presses,
// and sends the answer to the presser's chat (a DM: only they see it),
// quoting the message the button was under.
func (a *Adapter) handlePress(ctx context.Context, sink adapters.Sink, p adapters.Press) {
	reply := NoPressText
	if ps, ok := sink.(adapters.PressSink); ok {
		reply = ps.Press(ctx, p)
	}
	if reply == "" {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, pressReplyTimeout)
	defer cancel()
	msg := wireMessage{Type: "text", Text: &wireText{Body: reply}}
	if p.MessageID != "" {
		msg.Context = &wireContext{MessageID: p.MessageID}
	}
	if _, err := a.post(rctx, p.Chat.ChatID, msg); err != nil {
		a.log.Warn("whatsapp: the answer to a button press was not sent", "err", a.red.Redact(err.Error()))
	}
}
