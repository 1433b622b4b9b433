package telegram_test

// native_test.go: what a bot meets beyond messages — a stale webhook, the
// command menu, a deleted forum topic, a group upgraded to a supergroup.

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/adapters/telegram/telegramtest"
	"github.com/heraldgw/herald/agent"
)

// A webhook left set (by webhook mode or another deployment) is removed
// before polling, so getUpdates does not answer 409 forever.
func TestPollingRemovesStaleWebhook(t *testing.T) {
	srv := newFake(t)
	srv.SetWebhook("https://old.example/telegram")
	ad := newAdapter(srv, nil)
	sk := newSink()
	run(t, ad, sk)
	srv.DM(42, "alice", "after the webhook")
	if m := sk.next(t); m.Text != "after the webhook" {
		t.Errorf("got %+v", m)
	}
	if srv.Webhook() != nil {
		t.Errorf("webhook still set: %v", srv.Webhook())
	}
	if n := srv.Attempts("deleteWebhook"); n != 1 {
		t.Errorf("deleteWebhook sent %d times, want 1", n)
	}
	if c := srv.Calls("deleteWebhook"); len(c) == 1 && c[0].Form.Get("drop_pending_updates") == "true" {
		t.Error("deleteWebhook dropped the pending updates")
	}
}

// A reply aimed at a forum topic that was deleted goes to the chat
// itself, once, rather than being lost; so do files and typing.
func TestGoneTopicFallsBackToChat(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	srv.DeleteTopic(-8, 5)
	to := herald.Target{Platform: herald.PlatformTelegram, ChatID: "-8", ThreadID: "5"}
	ctx := ctxT(t)
	if _, err := ad.Send(ctx, to, adapters.Outgoing{Text: "answer", ReplyTo: "77"}); err != nil {
		t.Fatalf("send: %v", err)
	}
	calls := srv.Calls("sendMessage")
	if len(calls) != 1 || calls[0].ChatID != "-8" || calls[0].ThreadID != "" || calls[0].Text != "answer" || calls[0].ReplyTo != "77" {
		t.Errorf("sent = %+v", calls)
	}
	if n := srv.Attempts("sendMessage"); n != 2 {
		t.Errorf("sendMessage attempts = %d, want 2 (the topic, then the chat)", n)
	}
	path := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(path, []byte("notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ad.SendFile(ctx, to, adapters.OutgoingFile{Path: path, Name: "notes.txt", MIME: "text/plain", Type: herald.MediaDocument, Size: 5}); err != nil {
		t.Fatalf("send file: %v", err)
	}
	if up := srv.Calls("sendDocument"); len(up) != 1 || up[0].ChatID != "-8" || up[0].ThreadID != "" {
		t.Errorf("uploaded = %+v", up)
	}
	if err := ad.Typing(ctx, to); err != nil {
		t.Fatalf("typing: %v", err)
	}
	if ty := srv.Calls("sendChatAction"); len(ty) != 1 || ty[0].ThreadID != "" {
		t.Errorf("typing = %+v", ty)
	}
	// a topic that exists is kept
	if _, err := ad.Send(ctx, herald.Target{Platform: herald.PlatformTelegram, ChatID: "-8", ThreadID: "6"}, adapters.Outgoing{Text: "in six"}); err != nil {
		t.Fatal(err)
	}
	if c := srv.Calls("sendMessage"); len(c) != 2 || c[1].ThreadID != "6" {
		t.Errorf("sent = %+v", c)
	}
}

// The catalogue the gateway gives becomes the bot's command menu in the
// default, private and group scopes, in Telegram's spelling; what
// Telegram cannot take is left out, and the adapter runs on.
func TestCommandMenuIsPublished(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	long := strings.Repeat("x", 300)
	ad.SetCommands([]adapters.Command{
		{Name: "new", Description: "start a new conversation"},
		{Name: "/Deploy-Now", Description: "  ship   it "},
		{Name: "bad name!", Description: "left out"},
		{Name: "no_help"},
		{Name: "long", Description: long},
		{Name: "new", Description: "a duplicate"},
	})
	sk := newSink()
	run(t, ad, sk)
	if _, err := srv.WaitCalls(ctxT(t), "setMyCommands", 3); err != nil {
		t.Fatal(err)
	}
	want := []telegramtest.BotCommand{
		{Command: "new", Description: "start a new conversation"},
		{Command: "deploy_now", Description: "ship it"},
		{Command: "no_help", Description: "/no_help"},
		{Command: "long", Description: strings.Repeat("x", 255) + "…"},
	}
	for _, scope := range []string{"default", "all_private_chats", "all_group_chats"} {
		if got := srv.Commands(scope); !reflect.DeepEqual(got, want) {
			t.Errorf("menu in %s = %+v\nwant %+v", scope, got, want)
		}
	}
	srv.DM(42, "alice", "still running")
	if m := sk.next(t); m.Text != "still running" {
		t.Errorf("got %+v", m)
	}
}

// A menu Telegram refuses is logged, never fatal, and set at the next
// connect.
func TestCommandMenuRefusedIsRetriedAtReconnect(t *testing.T) {
	srv := newFake(t)
	srv.Fail("setMyCommands", 1, telegramtest.Failure{Code: 500, Description: "Internal Server Error"})
	ad := newAdapter(srv, nil)
	ad.SetCommands([]adapters.Command{{Name: "help", Description: "list commands"}})
	sk := newSink()
	stop, _ := run(t, ad, sk)
	srv.DM(42, "alice", "first")
	sk.next(t)
	if got := srv.Commands("default"); got != nil {
		t.Fatalf("menu = %+v after a refusal", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	run(t, ad, sk)
	if _, err := srv.WaitCalls(ctxT(t), "setMyCommands", 3); err != nil {
		t.Fatal(err)
	}
	if got := srv.Commands("all_group_chats"); len(got) != 1 || got[0].Command != "help" {
		t.Errorf("menu = %+v", got)
	}
}

// The gateway gives the adapter its command catalogue at start: the
// built-ins, in /help's order, with /help's descriptions.
func TestGatewayPublishesItsCommands(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), agent.Echo{})
	if _, err := srv.WaitCalls(ctxT(t), "setMyCommands", 3); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range srv.Commands("all_private_chats") {
		names = append(names, c.Command)
		if c.Command == "help" && c.Description != "list commands (alias /commands)" {
			t.Errorf("help = %+v", c)
		}
	}
	if got, want := strings.Join(names, " "), "new stop status queue approve deny model whoami help"; got != want {
		t.Errorf("menu = %s, want %s", got, want)
	}
}
