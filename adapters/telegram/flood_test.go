package telegram_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
)

// The gateway paces Telegram chats at one message a second, groups
// (negative chat ids) at twenty a minute besides, and the bot at thirty a
// second over all chats.
func TestPace(t *testing.T) {
	var a adapters.Adapter = telegram.New(telegram.Config{Token: "1:x"})
	p, ok := a.(adapters.Pacer)
	if !ok {
		t.Fatal("the Telegram adapter declares no pace")
	}
	for chat, want := range map[string]adapters.Pace{
		"42":             {Every: time.Second, BotPerSecond: 30},
		"-1001234567890": {Every: time.Second, PerMinute: 20, BotPerSecond: 30},
	} {
		if got := p.Pace(herald.Target{Platform: herald.PlatformTelegram, ChatID: chat}); got != want {
			t.Fatalf("chat %s: pace %+v, want %+v", chat, got, want)
		}
	}
}

// Delete removes a sent message with deleteMessage.
func TestDelete(t *testing.T) {
	srv := newFake(t)
	a := newAdapter(srv, nil)
	ctx := context.Background()
	to := herald.Target{Platform: herald.PlatformTelegram, ChatID: "42"}
	sent, err := a.Send(ctx, to, adapters.Outgoing{Text: "preview"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Delete(ctx, to, sent.MessageID); err != nil {
		t.Fatal(err)
	}
	if calls := srv.Calls("deleteMessage"); len(calls) != 1 || calls[0].ChatID != "42" || calls[0].MessageID != sent.MessageID {
		t.Fatalf("deleteMessage calls %+v", calls)
	}
	if err := a.Delete(ctx, to, sent.MessageID); err == nil || adapters.IsFatal(err) {
		t.Fatalf("deleting it again: %v", err)
	}
}
