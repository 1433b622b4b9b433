package telegram_test

import (
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram"
)

// The gateway paces Telegram chats at one message a second, and groups
// (negative chat ids) at twenty a minute besides.
func TestPace(t *testing.T) {
	var a adapters.Adapter = telegram.New(telegram.Config{Token: "1:x"})
	p, ok := a.(adapters.Pacer)
	if !ok {
		t.Fatal("the Telegram adapter declares no pace")
	}
	for chat, want := range map[string]adapters.Pace{
		"42":             {Every: time.Second},
		"-1001234567890": {Every: time.Second, PerMinute: 20},
	} {
		if got := p.Pace(herald.Target{Platform: herald.PlatformTelegram, ChatID: chat}); got != want {
			t.Fatalf("chat %s: pace %+v, want %+v", chat, got, want)
		}
	}
}
