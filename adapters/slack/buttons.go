package slack

// buttons.go draws adapters.Buttons as Block Kit: the message's text in
// section blocks (mrkdwn, at most 3000 characters each) and the buttons
// in an actions block under them, the text itself kept as the
// notification's fallback. CloseButtons puts the new text in its
// sections and leaves the actions block out.

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

var _ adapters.ButtonSender = (*Adapter)(nil)

// Slack's Block Kit limits.
const (
	maxSectionText = 3000 // characters in a section's text
	maxButtonText  = 75   // characters on a button
	maxActions     = 25   // elements in one actions block
)

// buttonsBlockID names the actions blocks herald draws ("herald_buttons",
// then "herald_buttons_2", …); buttonActionID prefixes their action ids.
const (
	buttonsBlockID = "herald_buttons"
	buttonActionID = "herald_button_"
)

// blocks draws text (formatted as Send formats it) in sections and the
// buttons in actions blocks under them.
func blocks(text string, plain bool, buttons []adapters.Button) []slackapi.Block {
	var out []slackapi.Block
	kind, body := slackapi.MarkdownType, toMrkdwn(text)
	if plain {
		kind, body = slackapi.PlainTextType, text
	}
	for _, s := range sections(body, maxSectionText, !plain) {
		if strings.TrimSpace(s) == "" {
			continue // Slack refuses an empty section
		}
		out = append(out, slackapi.NewSectionBlock(slackapi.NewTextBlockObject(kind, s, false, false), nil, nil))
	}
	for start := 0; start < len(buttons); start += maxActions {
		row := buttons[start:min(start+maxActions, len(buttons))]
		elements := make([]slackapi.BlockElement, 0, len(row))
		for i, b := range row {
			label := b.Label
			if utf8.RuneCountInString(label) > maxButtonText {
				label = string([]rune(label)[:maxButtonText-1]) + "…"
			}
			e := slackapi.NewButtonBlockElement(fmt.Sprintf("%s%d", buttonActionID, start+i), b.Data,
				slackapi.NewTextBlockObject(slackapi.PlainTextType, label, true, false))
			switch b.Style {
			case "primary":
				e = e.WithStyle(slackapi.StylePrimary)
			case "danger":
				e = e.WithStyle(slackapi.StyleDanger)
			}
			elements = append(elements, e)
		}
		id := buttonsBlockID
		if start > 0 {
			id = fmt.Sprintf("%s_%d", buttonsBlockID, start/maxActions+1)
		}
		out = append(out, slackapi.NewActionBlock(id, elements...))
	}
	return out
}

// CloseButtons implements adapters.ButtonSender with chat.update: the new
// text, in sections, without the actions block.
func (a *Adapter) CloseButtons(ctx context.Context, to herald.Target, messageID, text string) error {
	channel := to.ChatID
	if channel == "" {
		channel = a.cfg.HomeChannel
	}
	key := channel + "/" + messageID
	opts := []slackapi.MsgOption{a.textOption(text, false), slackapi.MsgOptionBlocks(blocks(text, false, nil)...)}
	if _, _, _, err := a.api.UpdateMessageContext(ctx, channel, messageID, opts...); err != nil {
		return mapError("close the buttons of "+key, err, "SLACK_BOT_TOKEN")
	}
	a.remember(channel, messageID, text)
	return nil
}

// sections cuts text into pieces of at most max characters (counted in
// UTF-16 units, never fewer than Slack's characters) for section blocks:
// at line breaks where it can, else at a space, else between runes (not
// inside an &amp; escape). With fences, a ``` block open at a cut is
// closed at the end of its piece and opened again in the next.
func sections(text string, max int, fences bool) []string {
	if adapters.UTF16Len(text) <= max {
		return []string{text}
	}
	const fence = "```"
	room := max - len("\n"+fence) // always room to close a block
	var out []string
	var b strings.Builder
	n, open, carried := 0, false, false // carried: b holds only a reopened fence
	flush := func() {
		s := b.String()
		if open {
			s += "\n" + fence
		}
		out = append(out, s)
		b.Reset()
		n, carried = 0, false
		if open {
			b.WriteString(fence)
			n, carried = len(fence), true
		}
	}
	for _, line := range strings.Split(text, "\n") {
		for {
			sep := 0
			if b.Len() > 0 {
				sep = 1
			}
			head, tail, w, fits := cutLine(line, room-n-sep)
			if fits {
				if sep == 1 {
					b.WriteByte('\n')
				}
				b.WriteString(line)
				n += sep + w
				carried = false
				break
			}
			if b.Len() > 0 && !carried {
				flush()
				continue
			}
			if sep == 1 {
				b.WriteByte('\n')
			}
			b.WriteString(head)
			carried = false
			flush()
			line = tail
		}
		if fences && strings.HasPrefix(strings.TrimSpace(line), fence) {
			open = !open
		}
	}
	if b.Len() > 0 && !carried {
		out = append(out, b.String())
	}
	return out
}

// cutLine returns line whole (its width, fits) when it fits in budget
// UTF-16 units; else it cuts it at its last space in the second half of
// what fits, else between runes, stepping back out of an &…; escape or a
// run of backticks. At least one rune goes in head. It reads at most
// budget runes, so cutting a long line is linear.
func cutLine(line string, budget int) (head, tail string, width int, fits bool) {
	n, end, space := 0, 0, -1
	for end < len(line) {
		r, size := utf8.DecodeRuneInString(line[end:])
		w := utf16.RuneLen(r) // an invalid byte (U+FFFD) counts 1
		if n+w > budget {
			break
		}
		if r == ' ' {
			space = end
		}
		n += w
		end += size
	}
	if end == len(line) {
		return line, "", n, true
	}
	if end == 0 {
		_, end = utf8.DecodeRuneInString(line)
	}
	if space > 0 && space >= end/2 {
		return line[:space], line[space+1:], 0, false
	}
	if amp := strings.LastIndexByte(line[:end], '&'); amp > 0 && end-amp < len("&quot;") && !strings.Contains(line[amp:end], ";") {
		end = amp
	}
	// nor inside a run of backticks (a ``` would fall apart)
	if end < len(line) && line[end] == '`' {
		if run := len(strings.TrimRight(line[:end], "`")); run > 0 {
			end = run
		}
	}
	return line[:end], line[end:], 0, false
}
