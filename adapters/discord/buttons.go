package discord

// buttons.go draws adapters.Button as message components (one action
// row of buttons, custom_id = Button.Data), takes them off again
// (CloseButtons), and reports presses (MESSAGE_COMPONENT interactions) to
// a sink that implements adapters.PressSink.

import (
	"context"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

// NoLongerWorks is the answer to a press the sink cannot take.
const NoLongerWorks = "This button no longer works."

// Discord's limits on buttons: 5 to an action row, 5 rows to a message,
// 80 characters to a label.
const (
	buttonsPerRow  = 5
	maxButtonRows  = 5
	maxButtonLabel = 80
)

var _ adapters.ButtonSender = (*Adapter)(nil)

// buttonRows lays buttons out as action rows: one row, or as many as five
// buttons a row need. nil for none.
func buttonRows(bs []adapters.Button) []discordgo.MessageComponent {
	var rows []discordgo.MessageComponent
	for start := 0; start < len(bs) && len(rows) < maxButtonRows; start += buttonsPerRow {
		var row []discordgo.MessageComponent
		for _, b := range bs[start:min(start+buttonsPerRow, len(bs))] {
			row = append(row, discordgo.Button{Label: fitLabel(b.Label), Style: buttonStyle(b.Style), CustomID: b.Data})
		}
		rows = append(rows, discordgo.ActionsRow{Components: row})
	}
	return rows
}

func buttonStyle(s string) discordgo.ButtonStyle {
	switch s {
	case "primary":
		return discordgo.PrimaryButton
	case "danger":
		return discordgo.DangerButton
	default:
		return discordgo.SecondaryButton
	}
}

func fitLabel(l string) string {
	if utf8.RuneCountInString(l) <= maxButtonLabel {
		return l
	}
	return string([]rune(l)[:maxButtonLabel-1]) + "…"
}

// CloseButtons implements adapters.ButtonSender: the message gets text
// and an explicit empty components list (an edit without one keeps the
// buttons). A slash command's reply is edited through its interaction
// while the token lives.
func (a *Adapter) CloseButtons(ctx context.Context, to herald.Target, messageID, text string) error {
	none := []discordgo.MessageComponent{}
	done, err := a.editHooked(ctx, messageID, &discordgo.WebhookEdit{Content: &text, Components: &none})
	if !done {
		ch := channel(to)
		_, err = a.rest.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: messageID, Channel: ch, Content: &text, Components: &none}, discordgo.WithContext(ctx))
		if err != nil {
			err = classify(ctx, "close the buttons of "+messageID+" in "+ch, err)
		}
	}
	if err == nil {
		a.remember(messageID, text)
	}
	return err
}

// press reports one button press to the sink and answers it within
// Discord's 3 seconds: the sink's reply as an ephemeral message (only the
// presser sees it), or a deferred update (nothing shown) when the reply
// is "". A sink that takes no presses gets NoLongerWorks answered.
func (a *Adapter) press(ctx context.Context, sink adapters.Sink, s *discordgo.Session, i *discordgo.Interaction) {
	ps, ok := sink.(adapters.PressSink)
	u := interactionUser(i)
	if !ok || u == nil || i.Message == nil {
		a.answerPress(ctx, i, NoLongerWorks)
		return
	}
	src := a.chatOf(ctx, s, i.GuildID, i.ChannelID)
	reply := ps.Press(ctx, adapters.Press{
		Chat: src.Target(), ChatType: src.ChatType, MessageID: i.Message.ID,
		UserID: u.ID, UserName: displayName(u), Data: i.MessageComponentData().CustomID,
	})
	a.answerPress(ctx, i, reply)
}

func (a *Adapter) answerPress(ctx context.Context, i *discordgo.Interaction, reply string) {
	r := &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}
	if reply != "" {
		r = &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
			Data: &discordgo.InteractionResponseData{Content: reply, Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noPings()}}
	}
	if err := a.rest.InteractionRespond(i, r, discordgo.WithContext(ctx)); err != nil {
		a.log.Warn("discord: could not answer a button press", "channel", i.ChannelID, "err", a.interactionError(ctx, "answer a press", err))
	}
}

// interactionUser is who invoked an interaction, as Discord vouches for
// it: the member's user in a guild, the user in a DM.
func interactionUser(i *discordgo.Interaction) *discordgo.User {
	if i.Member != nil && i.Member.User != nil {
		return i.Member.User
	}
	return i.User
}
