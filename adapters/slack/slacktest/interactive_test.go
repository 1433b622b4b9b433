package slacktest_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	slackapi "github.com/slack-go/slack"

	"github.com/heraldgw/herald/adapters/slack/slacktest"
)

// The fake refuses blocks Slack refuses, keeps what a message shows after
// an update, and builds a block_actions payload slack-go reads as Slack's.
func TestBlocksAndPressPayload(t *testing.T) {
	srv := slacktest.New(slacktest.Options{})
	defer srv.Close()
	api := slackapi.New("xoxb-any", slackapi.OptionAPIURL(srv.APIURL()))
	ctx := context.Background()

	long := slackapi.NewSectionBlock(slackapi.NewTextBlockObject("mrkdwn", strings.Repeat("a", slacktest.MaxSectionText+1), false, false), nil, nil)
	if _, _, err := api.PostMessageContext(ctx, "C1", slackapi.MsgOptionText("x", false), slackapi.MsgOptionBlocks(long)); err == nil || !strings.Contains(err.Error(), "invalid_blocks") {
		t.Errorf("a section of %d characters: err = %v, want invalid_blocks", slacktest.MaxSectionText+1, err)
	}
	twice := slackapi.NewActionBlock("b",
		slackapi.NewButtonBlockElement("same", "1", slackapi.NewTextBlockObject("plain_text", "One", false, false)),
		slackapi.NewButtonBlockElement("same", "2", slackapi.NewTextBlockObject("plain_text", "Two", false, false)))
	if _, _, err := api.PostMessageContext(ctx, "C1", slackapi.MsgOptionText("x", false), slackapi.MsgOptionBlocks(twice)); err == nil || !strings.Contains(err.Error(), "invalid_blocks") {
		t.Errorf("a repeated action_id: err = %v, want invalid_blocks", err)
	}

	section := slackapi.NewSectionBlock(slackapi.NewTextBlockObject("mrkdwn", "Run `ls`?", false, false), nil, nil)
	buttons := slackapi.NewActionBlock("acts",
		slackapi.NewButtonBlockElement("a0", "yes-data", slackapi.NewTextBlockObject("plain_text", "Yes", false, false)).WithStyle(slackapi.StylePrimary),
		slackapi.NewButtonBlockElement("a1", "no-data", slackapi.NewTextBlockObject("plain_text", "No", false, false)).WithStyle(slackapi.StyleDanger))
	_, ts, err := api.PostMessageContext(ctx, "C1", slackapi.MsgOptionText("Run ls?", false), slackapi.MsgOptionTS("1700.1"), slackapi.MsgOptionBlocks(section, buttons))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := srv.PressPayload(slacktest.Press{Channel: "C1", TS: ts, UserID: "U1", UserName: "ann", Label: "No"})
	if err != nil {
		t.Fatal(err)
	}
	var ic slackapi.InteractionCallback
	if err := json.Unmarshal(payload, &ic); err != nil {
		t.Fatal(err)
	}
	acts := ic.ActionCallback.BlockActions
	if ic.Type != slackapi.InteractionTypeBlockActions || ic.User.ID != "U1" || ic.User.Name != "ann" ||
		ic.Container.ChannelID != "C1" || ic.Container.MessageTs != ts || ic.Container.ThreadTs != "1700.1" ||
		ic.Message.ThreadTimestamp != "1700.1" || len(acts) != 1 || acts[0].Value != "no-data" || acts[0].ActionID != "a1" || acts[0].BlockID != "acts" {
		t.Errorf("payload read by slack-go = %+v", ic)
	}
	form, err := url.ParseQuery(string(slacktest.InteractiveForm(payload)))
	if err != nil || form.Get("payload") != string(payload) {
		t.Errorf("form = %v, %v", form, err)
	}

	// an update without blocks keeps them; one with only a section drops
	// the buttons
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slackapi.MsgOptionText("edited", false)); err != nil {
		t.Fatal(err)
	}
	if p, _ := srv.Shown("C1", ts); p.Text != "edited" || len(p.Blocks) != 2 {
		t.Errorf("after a text update: %+v", p)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, "C1", ts, slackapi.MsgOptionText("Denied", false), slackapi.MsgOptionBlocks(section)); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.PressPayload(slacktest.Press{Channel: "C1", TS: ts, UserID: "U1", Label: "No"}); err == nil {
		t.Error("a button removed by an update could still be pressed")
	}
}
