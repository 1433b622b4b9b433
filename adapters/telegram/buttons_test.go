package telegram_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
)

// pressSink is a sink that also takes presses, answering each with reply.
type pressSink struct {
	*sink
	reply   string
	mu      sync.Mutex
	presses []adapters.Press
}

func (p *pressSink) Press(ctx context.Context, pr adapters.Press) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.presses = append(p.presses, pr)
	return p.reply
}

func (p *pressSink) got() []adapters.Press {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]adapters.Press(nil), p.presses...)
}

var approvalButtons = []adapters.Button{
	{Label: "Approve once", Data: "ap:0123456789abcdef:once", Style: "primary"},
	{Label: "Deny", Data: "ap:0123456789abcdef:deny", Style: "danger"},
}

// Buttons go out as one row of an inline keyboard; a press comes back to
// the sink's Press with who pressed what where, and is answered with
// Press's reply; CloseButtons edits the text and takes the keyboard away.
func TestButtonsSendPressClose(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	sk := &pressSink{sink: newSink(), reply: "✅ Approved (once)."}
	run(t, ad, sk)
	ctx := ctxT(t)
	to := herald.Target{Platform: herald.PlatformTelegram, ChatID: "-100"}
	sent, err := ad.Send(ctx, to, adapters.Outgoing{Text: "Run **this**?", Buttons: approvalButtons})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]telegramtest.InlineButton{{{Text: "Approve once", CallbackData: "ap:0123456789abcdef:once"}, {Text: "Deny", CallbackData: "ap:0123456789abcdef:deny"}}}
	if kb := srv.Keyboard("-100", sent.MessageID); !reflect.DeepEqual(kb, want) {
		t.Fatalf("keyboard %+v", kb)
	}
	qid := srv.PressButton("-100", sent.MessageID, telegramtest.User{ID: 7, UserName: "bob"}, "ap:0123456789abcdef:once")
	calls, err := srv.WaitCalls(ctx, "answerCallbackQuery", 1)
	if err != nil {
		t.Fatal(err)
	}
	if calls[0].CallbackQueryID != qid || calls[0].Text != "✅ Approved (once)." {
		t.Fatalf("answer %+v", calls[0])
	}
	wantPress := adapters.Press{Chat: to, ChatType: herald.ChatGroup, MessageID: sent.MessageID, UserID: "7", UserName: "bob", Data: "ap:0123456789abcdef:once"}
	if got := sk.got(); len(got) != 1 || !reflect.DeepEqual(got[0], wantPress) {
		t.Fatalf("presses %+v", got)
	}
	if !slices.Contains(srv.AllowedUpdates(), "callback_query") || !slices.Contains(srv.AllowedUpdates(), "message") {
		t.Fatalf("getUpdates asked for %q", srv.AllowedUpdates())
	}
	if err := ad.CloseButtons(ctx, to, sent.MessageID, "Run **this**?\n\n✅ Approved once by bob"); err != nil {
		t.Fatal(err)
	}
	edits := srv.Calls("editMessageText")
	if len(edits) != 1 || edits[0].Text != "Run <b>this</b>?\n\n✅ Approved once by bob" || edits[0].Keyboard != nil ||
		edits[0].Form.Get("reply_markup") != `{"inline_keyboard":[]}` || srv.Keyboard("-100", sent.MessageID) != nil {
		t.Fatalf("edits %+v", edits)
	}
	// closing again changes nothing and is no error
	if err := ad.CloseButtons(ctx, to, sent.MessageID, "Run **this**?\n\n✅ Approved once by bob"); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

// A press in a forum topic names the topic; a sink that takes no presses
// still gets every press answered, and no message.
func TestPressInTopicAndWithoutPressSink(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	sk := &pressSink{sink: newSink()}
	stop, _ := run(t, ad, sk)
	ctx := ctxT(t)
	to := herald.Target{Platform: herald.PlatformTelegram, ChatID: "-200", ThreadID: "5"}
	sent, err := ad.Send(ctx, to, adapters.Outgoing{Text: "pick", Buttons: approvalButtons})
	if err != nil {
		t.Fatal(err)
	}
	srv.PressButton("-200", sent.MessageID, telegramtest.User{ID: 8, First: "Carol"}, "ap:0123456789abcdef:deny")
	calls, err := srv.WaitCalls(ctx, "answerCallbackQuery", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := sk.got(); len(got) != 1 || got[0].Chat != to || got[0].UserName != "Carol" || calls[0].Text != "" {
		t.Fatalf("presses %+v, answer %+v", got, calls[0])
	}
	stop()

	plain := newSink()
	run(t, newAdapter(srv, nil), plain)
	srv.PressButton("-200", sent.MessageID, telegramtest.User{ID: 8}, "ap:0123456789abcdef:deny")
	// a query with no message (an inline-mode message) is answered too
	srv.AddUpdate(map[string]any{"callback_query": map[string]any{"id": "inline-1", "from": map[string]any{"id": 8, "is_bot": false, "first_name": "C"},
		"inline_message_id": "im1", "chat_instance": "x", "data": "ap:0123456789abcdef:deny"}})
	calls, err = srv.WaitCalls(ctx, "answerCallbackQuery", 3)
	if err != nil {
		t.Fatal(err)
	}
	if calls[1].Text != telegram.NoPressText || calls[2].CallbackQueryID != "inline-1" || calls[2].Text != telegram.NoPressText {
		t.Fatalf("answers %+v", calls)
	}
	if got := texts(plain); got != "" {
		t.Fatalf("a press became a message: %q", got)
	}
}

// In webhook mode, setWebhook asks for button presses, and a posted
// press reaches Press and is answered.
func TestPressViaWebhook(t *testing.T) {
	srv := newFake(t)
	sk := &pressSink{sink: newSink(), reply: "This approval is no longer waiting."}
	url, _ := runWebhook(t, srv, sk, "https://bot.example/telegram")
	var kinds []string
	json.Unmarshal([]byte(srv.Webhook().Get("allowed_updates")), &kinds)
	if !slices.Contains(kinds, "callback_query") || !slices.Contains(kinds, "message") {
		t.Fatalf("setWebhook allowed_updates = %q", srv.Webhook().Get("allowed_updates"))
	}
	ctx := ctxT(t)
	sent, err := newAdapter(srv, nil).Send(ctx, herald.Target{Platform: herald.PlatformTelegram, ChatID: "42"}, adapters.Outgoing{Text: "pick", Buttons: approvalButtons})
	if err != nil {
		t.Fatal(err)
	}
	qid, upd := srv.PressUpdate(77, "42", sent.MessageID, telegramtest.User{ID: 42, UserName: "alice"}, "ap:0123456789abcdef:once")
	if code, err := telegramtest.PostWebhook(ctx, url, "s3cret-webhook-token", upd); err != nil || code != 200 {
		t.Fatalf("post: %d %v", code, err)
	}
	calls, err := srv.WaitCalls(ctx, "answerCallbackQuery", 1)
	if err != nil || calls[0].CallbackQueryID != qid || calls[0].Text != "This approval is no longer waiting." {
		t.Fatalf("answer %+v %v", calls, err)
	}
	if got := sk.got(); len(got) != 1 || got[0].ChatType != herald.ChatDM || got[0].UserID != "42" {
		t.Fatalf("presses %+v", got)
	}
}
