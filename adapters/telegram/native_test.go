package telegram_test

// native_test.go: what a bot meets beyond messages — a stale webhook, the
// command menu, a deleted forum topic, a group upgraded to a supergroup.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

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

// moverSink is a sink that also follows chat moves, as the gateway does.
type moverSink struct {
	*sink
	moves chan [2]string
	fail  int // refuse this many moves first
}

func (s *moverSink) MoveChat(ctx context.Context, p herald.Platform, from, to string) error {
	if p != herald.PlatformTelegram {
		return fmt.Errorf("platform %s", p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return errors.New("store unavailable")
	}
	s.moves <- [2]string{from, to}
	return nil
}

// A group upgraded to a supergroup is reported to the gateway, from both
// service messages Telegram sends; a move the gateway could not make is
// not confirmed, so it comes again; sends to the old id go to the new.
func TestGroupMigrationIsReported(t *testing.T) {
	srv := newFake(t)
	ad := newAdapter(srv, nil)
	sk := &moverSink{sink: newSink(), moves: make(chan [2]string, 10), fail: 1}
	run(t, ad, sk)
	srv.MigrateGroup(-5, -1005, telegramtest.User{ID: 42, UserName: "alice"})
	for i := range 2 {
		select {
		case mv := <-sk.moves:
			if mv != [2]string{"-5", "-1005"} {
				t.Errorf("move %d = %v", i, mv)
			}
		case <-time.After(wait):
			t.Fatalf("move %d not reported", i)
		}
	}
	if err := srv.Wait(ctxT(t), func() bool { return srv.Confirmed() >= 3 }); err != nil {
		t.Fatal(err)
	}
	sk.mu.Lock()
	if len(sk.msgs) != 0 {
		t.Errorf("service messages reached the sink as messages: %+v", sk.msgs)
	}
	sk.mu.Unlock()
	old := herald.Target{Platform: herald.PlatformTelegram, ChatID: "-5"}
	if _, err := ad.Send(ctxT(t), old, adapters.Outgoing{Text: "after the upgrade"}); err != nil {
		t.Fatal(err)
	}
	if c := srv.Calls("sendMessage"); len(c) != 1 || c[0].ChatID != "-1005" {
		t.Errorf("sent = %+v", c)
	}
	if n := srv.Attempts("sendMessage"); n != 1 {
		t.Errorf("sendMessage attempts = %d: the known move should be used at once", n)
	}
}

// A send to a group that became a supergroup, before any service message
// said so, is resent there once, and later sends go there at once.
func TestSendToUpgradedGroupFollowsIt(t *testing.T) {
	srv := newFake(t)
	srv.MigrateGroup(-5, -1005, telegramtest.User{ID: 42, UserName: "alice"})
	ad := newAdapter(srv, nil)
	old := herald.Target{Platform: herald.PlatformTelegram, ChatID: "-5"}
	for i, text := range []string{"first", "second"} {
		if _, err := ad.Send(ctxT(t), old, adapters.Outgoing{Text: text}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	calls := srv.Calls("sendMessage")
	if len(calls) != 2 || calls[0].ChatID != "-1005" || calls[1].ChatID != "-1005" {
		t.Errorf("sent = %+v", calls)
	}
	if n := srv.Attempts("sendMessage"); n != 3 {
		t.Errorf("sendMessage attempts = %d, want 3 (old id, new id, new id)", n)
	}
	if err := ad.Edit(ctxT(t), old, calls[1].MessageID, "second, edited"); err != nil {
		t.Errorf("edit of a message sent since the upgrade: %v", err)
	}
}

// historyModel answers with every user message of the conversation, so a
// reply shows what the session remembers.
type historyModel struct{}

func (historyModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	var heard []string
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleUser {
			heard = append(heard, m.Content)
		}
	}
	return openai.ChatCompletionResponse{ID: "history", Model: "history", Choices: []openai.ChatCompletionChoice{{
		FinishReason: openai.FinishReasonStop,
		Message:      openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "heard: " + strings.Join(heard, " | ")},
	}}}, nil
}

// When a group becomes a supergroup, the conversation goes on in the new
// chat with what was said before.
func TestGatewayConversationFollowsSupergroup(t *testing.T) {
	srv := newFake(t)
	startGateway(t, srv, t.TempDir(), historyModel{})
	alice := telegramtest.User{ID: 42, UserName: "alice"}
	srv.Mention(-5, alice, "the word is apple")
	if _, err := srv.WaitCalls(ctxT(t), "sendMessage", 1); err != nil {
		t.Fatal(err)
	}
	srv.MigrateGroup(-5, -1005, alice)
	srv.Mention(-1005, alice, "what was the word?")
	calls, err := srv.WaitCalls(ctxT(t), "sendMessage", 2)
	if err != nil {
		t.Fatal(err)
	}
	last := calls[1]
	if last.ChatID != "-1005" || !strings.Contains(last.Text, "apple") || !strings.Contains(last.Text, "what was the word?") {
		t.Errorf("reply in the supergroup = %+v", last)
	}
}

// In webhook mode a move the gateway could not make answers 503, so
// Telegram posts the update again.
func TestWebhookGroupMigration(t *testing.T) {
	srv := newFake(t)
	sk := &moverSink{sink: newSink(), moves: make(chan [2]string, 10), fail: 1}
	url, _ := runWebhook(t, srv, sk, "")
	upd := srv.Update(10, map[string]any{
		"chat":               map[string]any{"id": -5, "type": "group", "title": "test group"},
		"from":               map[string]any{"id": 42, "is_bot": false, "first_name": "alice"},
		"migrate_to_chat_id": -1005,
	})
	for _, want := range []int{503, 200} {
		code, err := telegramtest.PostWebhook(ctxT(t), url, "s3cret-webhook-token", upd)
		if err != nil || code != want {
			t.Fatalf("status = %d, %v; want %d", code, err, want)
		}
	}
	if mv := <-sk.moves; mv != [2]string{"-5", "-1005"} {
		t.Errorf("move = %v", mv)
	}
}
