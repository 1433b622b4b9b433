package slacktest

// blocks.go reads the Block Kit blocks the bot posts (chat.postMessage,
// chat.postEphemeral, chat.update), refusing what Slack refuses
// (invalid_blocks) by the documented limits of the blocks herald uses:
// sections and actions blocks of buttons.

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Slack's documented Block Kit limits.
const (
	MaxBlocks         = 50   // blocks in one message
	MaxSectionText    = 3000 // characters in a section's text
	MaxActionElements = 25   // elements in one actions block
	MaxButtonText     = 75   // characters on a button
	MaxButtonValue    = 2000 // characters in a button's value
	MaxID             = 255  // characters in a block_id or action_id
)

// Block is one Block Kit block, in Slack's wire shape (the fields of the
// blocks herald draws: section and actions).
type Block struct {
	Type     string      `json:"type"`
	BlockID  string      `json:"block_id,omitempty"`
	Text     *TextObject `json:"text,omitempty"`     // section
	Elements []Element   `json:"elements,omitempty"` // actions
}

// TextObject is a text composition object: "mrkdwn" or "plain_text".
type TextObject struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Emoji    bool   `json:"emoji,omitempty"`
	Verbatim bool   `json:"verbatim,omitempty"`
}

// Element is an interactive element of an actions block (a "button").
type Element struct {
	Type     string      `json:"type"`
	ActionID string      `json:"action_id,omitempty"`
	Text     *TextObject `json:"text,omitempty"`
	Value    string      `json:"value,omitempty"`
	Style    string      `json:"style,omitempty"` // "", "primary" or "danger"
}

// parseBlocks reads a "blocks" form field; "" is no blocks. An error
// is the reason Slack's invalid_blocks would give.
func parseBlocks(raw string) ([]Block, error) {
	if raw == "" {
		return nil, nil
	}
	var blocks []Block
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return nil, fmt.Errorf("blocks is not a JSON array of blocks: %v", err)
	}
	if len(blocks) > MaxBlocks {
		return nil, fmt.Errorf("%d blocks, more than %d", len(blocks), MaxBlocks)
	}
	blockIDs := map[string]bool{}
	actionIDs := map[string]bool{}
	for i, b := range blocks {
		at := fmt.Sprintf("blocks[%d]", i)
		if b.BlockID != "" {
			if blockIDs[b.BlockID] || utf8.RuneCountInString(b.BlockID) > MaxID {
				return nil, fmt.Errorf("%s: block_id %q repeated or too long", at, b.BlockID)
			}
			blockIDs[b.BlockID] = true
		}
		switch b.Type {
		case "section":
			if b.Text == nil || b.Text.Text == "" || (b.Text.Type != "mrkdwn" && b.Text.Type != "plain_text") {
				return nil, fmt.Errorf("%s: a section needs a mrkdwn or plain_text text", at)
			}
			if n := utf8.RuneCountInString(b.Text.Text); n > MaxSectionText {
				return nil, fmt.Errorf("%s.text: %d characters, more than %d", at, n, MaxSectionText)
			}
		case "actions":
			if len(b.Elements) == 0 || len(b.Elements) > MaxActionElements {
				return nil, fmt.Errorf("%s: %d elements, want 1 to %d", at, len(b.Elements), MaxActionElements)
			}
			for j, e := range b.Elements {
				if err := checkButton(e, actionIDs); err != nil {
					return nil, fmt.Errorf("%s.elements[%d]: %w", at, j, err)
				}
			}
		default:
			return nil, fmt.Errorf("%s: block type %q is not one the fake knows", at, b.Type)
		}
	}
	return blocks, nil
}

func checkButton(e Element, actionIDs map[string]bool) error {
	switch {
	case e.Type != "button":
		return fmt.Errorf("element type %q is not a button", e.Type)
	case e.Text == nil || e.Text.Type != "plain_text" || e.Text.Text == "" || utf8.RuneCountInString(e.Text.Text) > MaxButtonText:
		return fmt.Errorf("a button's text is plain_text of 1 to %d characters", MaxButtonText)
	case e.ActionID == "" || utf8.RuneCountInString(e.ActionID) > MaxID || actionIDs[e.ActionID]:
		return fmt.Errorf("action_id %q missing, too long or repeated", e.ActionID)
	case utf8.RuneCountInString(e.Value) > MaxButtonValue:
		return fmt.Errorf("value longer than %d characters", MaxButtonValue)
	case e.Style != "" && e.Style != "primary" && e.Style != "danger":
		return fmt.Errorf("style %q is not primary or danger", e.Style)
	}
	actionIDs[e.ActionID] = true
	return nil
}
