package sessions

import (
	"context"
	"testing"
	"time"

	"github.com/heraldgw/herald"
)

// A group that became a supergroup takes its open conversations along:
// each participant's session is re-keyed to the new chat id, with its
// messages; ended sessions, other chats and other platforms stay.
func TestMoveChat(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	now := time.Now()
	opts := KeyOptions{GroupPerUser: true}
	mk := func(platform herald.Platform, chat, user string) *Session {
		src := herald.Source{Platform: platform, ChatID: chat, ChatType: herald.ChatGroup, UserID: user}
		sess := NewSession(Key(src, opts), src, now)
		if err := s.Append(ctx, sess, Message{SessionID: sess.ID, Role: "user", Content: "hi from " + user, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		return sess
	}
	alice, bob := mk("telegram", "-5", "1"), mk("telegram", "-5", "2")
	ended := mk("telegram", "-5", "3")
	if err := s.EndSession(ctx, ended.ID, "idle", now); err != nil {
		t.Fatal(err)
	}
	other, elsewhere := mk("telegram", "-6", "1"), mk("discord", "-5", "1")
	// carol already talks in the new supergroup: her old session stays
	carolOld, carolNew := mk("telegram", "-5", "4"), mk("telegram", "-1005", "4")

	n, err := s.MoveChat(ctx, "telegram", "-5", "-1005")
	if err != nil || n != 2 {
		t.Fatalf("moved %d, %v; want 2", n, err)
	}
	for _, tc := range []struct {
		sess *Session
		key  string
	}{
		{alice, "agent:main:telegram:group:-1005:1"},
		{bob, "agent:main:telegram:group:-1005:2"},
		{ended, "agent:main:telegram:group:-5:3"},
		{other, "agent:main:telegram:group:-6:1"},
		{elsewhere, "agent:main:discord:group:-5:1"},
		{carolOld, "agent:main:telegram:group:-5:4"},
		{carolNew, "agent:main:telegram:group:-1005:4"},
	} {
		got, err := s.Session(ctx, tc.sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Key != tc.key {
			t.Errorf("session of %s: key %s, want %s", tc.sess.Key, got.Key, tc.key)
		}
	}
	atNew, err := s.OpenSession(ctx, "agent:main:telegram:group:-1005:1")
	if err != nil || atNew == nil || atNew.ID != alice.ID || atNew.ChatID != "-1005" {
		t.Fatalf("open session at the new key: %+v %v", atNew, err)
	}
	msgs, err := s.Messages(ctx, atNew.ID, 10)
	if err != nil || len(msgs) != 1 || msgs[0].Content != "hi from 1" {
		t.Errorf("messages = %+v %v", msgs, err)
	}
	// moving again finds nothing left to move
	if n, err := s.MoveChat(ctx, "telegram", "-5", "-1005"); err != nil || n != 0 {
		t.Errorf("second move: %d, %v", n, err)
	}
}

func TestRekeyChat(t *testing.T) {
	for _, tc := range []struct {
		key, want string
		ok        bool
	}{
		{"agent:main:telegram:group:-5", "agent:main:telegram:group:-9", true},
		{"agent:main:telegram:group:-5:7:42", "agent:main:telegram:group:-9:7:42", true},
		{"agent:main:telegram:dm:-5", "agent:main:telegram:dm:-9", true},
		{"agent:main:telegram:group:-55", "agent:main:telegram:group:-55", false},
		{"agent:main:telegram:group", "agent:main:telegram:group", false},
	} {
		got, ok := RekeyChat(tc.key, "-5", "-9")
		if got != tc.want || ok != tc.ok {
			t.Errorf("RekeyChat(%s) = %s, %v; want %s, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
}
