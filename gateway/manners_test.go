package gateway

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
	"github.com/heraldgw/herald/agent"
)

func withLocal(pa PlatformAuth) harnessOpt {
	return func(c *Config) { c.Auth[herald.PlatformLocal] = pa }
}

// A command addressed to another bot is never herald's: in a group it
// gets no answer, even where herald answers without a mention, and
// /new@otherbot does not reset herald's session.
func TestCommandForAnotherBotInAGroup(t *testing.T) {
	for _, pa := range []PlatformAuth{
		{TrustAll: true, RequireMention: true},
		{TrustAll: true, RequireMention: false},
		{TrustAll: true, RequireMention: true, GroupManners: GroupManners{FreeResponseChannels: []string{"g1"}}},
	} {
		h := newHarness(t, nil, withLocal(pa))
		first := h.post(msg{Chat: "g1", User: "u1", Type: "group", Text: "hello", Mentioned: ptr(true)})
		if first.Status != adapters.StatusDone || first.SessionID == "" {
			t.Fatalf("%+v: mentioned hello: %+v", pa, first)
		}
		if r := h.post(msg{Chat: "g1", User: "u1", Type: "group", Text: "/status@otherbot", Mentioned: ptr(false)}); r.Status != adapters.StatusSkipped || len(r.Replies) != 0 {
			t.Fatalf("%+v: /status@otherbot answered: %+v", pa, r)
		}
		if r := h.post(msg{Chat: "g1", User: "u1", Type: "group", Text: "/new@otherbot", Mentioned: ptr(false)}); r.Status != adapters.StatusSkipped || len(r.Replies) != 0 {
			t.Fatalf("%+v: /new@otherbot answered: %+v", pa, r)
		}
		again := h.post(msg{Chat: "g1", User: "u1", Type: "group", Text: "still there?", Mentioned: ptr(true)})
		if again.SessionID != first.SessionID {
			t.Fatalf("%+v: /new@otherbot reset herald's session: %s → %s", pa, first.SessionID, again.SessionID)
		}
		h.close()
	}
}

// Commands in groups obey require_mention as other messages do.
func TestGroupCommandsObeyRequireMention(t *testing.T) {
	h := newHarness(t, nil, withLocal(PlatformAuth{TrustAll: true, RequireMention: true}))
	if r := h.post(msg{Chat: "g1", User: "u1", Type: "group", Text: "/status", Mentioned: ptr(false)}); r.Status != adapters.StatusSkipped || len(r.Replies) != 0 {
		t.Fatalf("unmentioned /status in a group answered: %+v", r)
	}
	if r := h.post(msg{Chat: "g1", User: "u1", Type: "group", Text: "/status", Mentioned: ptr(true)}); r.Status != adapters.StatusDone || len(r.Replies) != 1 {
		t.Fatalf("mentioned /status: %+v", r)
	}
	// a DM needs no mention
	if r := h.post(msg{Chat: "d1", User: "u1", Text: "/status", Mentioned: ptr(false)}); r.Status != adapters.StatusDone || len(r.Replies) != 1 {
		t.Fatalf("/status in a DM: %+v", r)
	}
}

func TestChannelPolicy(t *testing.T) {
	h := newHarness(t, nil, withLocal(PlatformAuth{
		TrustAll: true, RequireMention: true, GroupManners: GroupManners{
			AllowedChannels:      []string{"ok", "free", "free-but-ignored"},
			IgnoredChannels:      []string{"free-but-ignored"},
			FreeResponseChannels: []string{"free", "free-but-ignored"},
			MentionPatterns:      []*regexp.Regexp{regexp.MustCompile(`(?i)^hey herald\b`)},
		}}))
	for _, tc := range []struct {
		name   string
		m      msg
		answer bool
	}{
		{"allowed, mentioned", msg{Chat: "ok", Text: "hi", Mentioned: ptr(true)}, true},
		{"allowed, not mentioned", msg{Chat: "ok", Text: "hi"}, false},
		{"not allowed, mentioned", msg{Chat: "elsewhere", Text: "hi", Mentioned: ptr(true)}, false},
		{"not allowed, /status mentioned", msg{Chat: "elsewhere", Text: "/status", Mentioned: ptr(true)}, false},
		{"ignored even when mentioned", msg{Chat: "free-but-ignored", Text: "hi", Mentioned: ptr(true)}, false},
		{"free response", msg{Chat: "free", Text: "hi"}, true},
		{"free response command", msg{Chat: "free", Text: "/status"}, true},
		{"wake word", msg{Chat: "ok", Text: "Hey Herald, what time is it?"}, true},
		{"wake word not at the start", msg{Chat: "ok", Text: "they said hey herald"}, false},
		{"DMs are not channels", msg{Chat: "dm-anywhere", Type: "dm", Text: "hi"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m
			m.User = "u1"
			if m.Mentioned == nil {
				m.Mentioned = ptr(false)
			}
			if m.Type == "" {
				m.Type = "group"
			}
			r := h.post(m)
			if got := len(r.Replies) > 0; got != tc.answer {
				t.Fatalf("answered = %v, want %v: %+v", got, tc.answer, r)
			}
			if !tc.answer && r.Status != adapters.StatusSkipped {
				t.Fatalf("status %q, want skipped", r.Status)
			}
		})
	}
}

// A Discord thread is in a channel list by its own id or its parent's.
func TestChannelPolicyMatchesThreadOrParent(t *testing.T) {
	pa := GroupManners{AllowedChannels: []string{"parent"}, IgnoredChannels: []string{"t-ign"}}
	for _, tc := range []struct {
		src  herald.Source
		want bool
	}{
		{herald.Source{ChatID: "parent", ThreadID: "t1", ChatType: herald.ChatThread}, true},
		{herald.Source{ChatID: "parent", ThreadID: "t-ign", ChatType: herald.ChatThread}, false},
		{herald.Source{ChatID: "other", ThreadID: "t1", ChatType: herald.ChatThread}, false},
		{herald.Source{ChatID: "other", ChatType: herald.ChatDM}, true},
	} {
		if got := pa.channelAllowed(tc.src); got != tc.want {
			t.Errorf("channelAllowed(%+v) = %v", tc.src, got)
		}
	}
	if !(GroupManners{AllowedChannels: []string{"*"}, FreeResponseChannels: []string{"*"}}).freeResponse(herald.Source{ChatID: "x", ChatType: herald.ChatGroup}) {
		t.Error(`"*" is every channel`)
	}
}

// allowed_roles lets members with a listed role in, in the server the
// message came from (the adapter puts the roles on the message); others
// stay out.
func TestAllowedRoles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fa := &fakeAdapter{name: herald.PlatformDiscord}
		b := newBubble(t, fa, nil, func(c *Config) {
			c.Auth[herald.PlatformDiscord] = PlatformAuth{AllowedUsers: []string{"owner"}, GroupManners: GroupManners{AllowedRoles: []string{"r-ops"}}}
		})
		defer b.stop()
		send := func(user string, roles []string, typ herald.ChatType) adapters.Outcome {
			return outcome(t, b.runner.Receive(context.Background(), herald.Message{ID: user + string(typ), Text: "hi", Mentioned: true, UserRoles: roles,
				Source: herald.Source{Platform: herald.PlatformDiscord, ChatID: "c1", ChatType: typ, UserID: user}}))
		}
		if o := send("member", []string{"r-other", "r-ops"}, herald.ChatGroup); o.Status != adapters.StatusDone {
			t.Fatalf("member with an allowed role: %+v", o)
		}
		if o := send("guest", []string{"r-other"}, herald.ChatGroup); o.Status != adapters.StatusSkipped {
			t.Fatalf("member without an allowed role: %+v", o)
		}
		// roles are a server's: a DM carries none that count
		if o := send("dmer", []string{"r-ops"}, herald.ChatDM); o.Status != adapters.StatusSkipped {
			t.Fatalf("roles in a DM: %+v", o)
		}
		if o := send("owner", nil, herald.ChatGroup); o.Status != adapters.StatusDone {
			t.Fatalf("allowed user: %+v", o)
		}
	})
}

// Replies in groups quote the message they answer: first (only the first
// message of a reply), all, or off; DMs never quote.
func TestReplyToMode(t *testing.T) {
	long := ""
	for range 30 {
		long += "word word word word word word word word word.\n\n"
	}
	for _, tc := range []struct {
		mode string
		typ  herald.ChatType
		want func(n int) []string
	}{
		{"first", herald.ChatGroup, func(n int) []string { return append([]string{"m1"}, make([]string, n-1)...) }},
		{"all", herald.ChatGroup, func(n int) []string { return slices.Repeat([]string{"m1"}, n) }},
		{"off", herald.ChatGroup, func(n int) []string { return make([]string, n) }},
		{"first", herald.ChatDM, func(n int) []string { return make([]string, n) }},
		{"all", herald.ChatDM, func(n int) []string { return make([]string, n) }},
	} {
		t.Run(tc.mode+"/"+string(tc.typ), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fa := &fakeAdapter{name: "fake", limits: adapters.Limits{MaxLength: 200}}
				b := newBubble(t, fa, agent.Echo{}, func(c *Config) {
					c.Auth["fake"] = PlatformAuth{TrustAll: true, GroupManners: GroupManners{ReplyToMode: tc.mode}}
				})
				defer b.stop()
				o := outcome(t, b.runner.Receive(context.Background(), herald.Message{ID: "m1", Text: long, Mentioned: true,
					Source: herald.Source{Platform: "fake", ChatID: "c1", ChatType: tc.typ, UserID: "u1"}}))
				if o.Status != adapters.StatusDone {
					t.Fatalf("outcome %+v", o)
				}
				fa.mu.Lock()
				var got []string
				for _, s := range fa.sent {
					got = append(got, s.ReplyTo)
				}
				fa.mu.Unlock()
				if len(got) < 3 || !slices.Equal(got, tc.want(len(got))) {
					t.Fatalf("ReplyTo of the %d messages = %q", len(got), got)
				}
			})
		})
	}
}

// A streamed reply quotes too: the preview message (which becomes the
// first part) by first and all, the parts after it by all only.
func TestReplyToModeStreamed(t *testing.T) {
	long := ""
	for range 30 {
		long += "word word word word word word word word word.\n\n"
	}
	for _, mode := range []string{"first", "all"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ea := &editAdapter{fakeAdapter: fakeAdapter{name: "fake", limits: adapters.Limits{MaxLength: 200}}}
				b := newBubble(t, ea, trickle{words: strings.Fields(long)}, func(c *Config) {
					c.Auth["fake"] = PlatformAuth{TrustAll: true, GroupManners: GroupManners{ReplyToMode: mode}}
				})
				defer b.stop()
				o := outcome(t, b.runner.Receive(context.Background(), herald.Message{ID: "m1", Text: "go", Mentioned: true,
					Source: herald.Source{Platform: "fake", ChatID: "c1", ChatType: herald.ChatGroup, UserID: "u1"}}))
				if o.Status != adapters.StatusDone {
					t.Fatalf("outcome %+v", o)
				}
				ea.mu.Lock()
				if len(ea.edits) == 0 {
					t.Fatal("nothing was streamed")
				}
				defer ea.mu.Unlock()
				if len(ea.sent) < 3 {
					t.Fatalf("sent %d messages", len(ea.sent))
				}
				for i, s := range ea.sent {
					want := ""
					if i == 0 || mode == "all" {
						want = "m1"
					}
					if s.ReplyTo != want {
						t.Fatalf("message %d of %d: ReplyTo %q, want %q", i+1, len(ea.sent), s.ReplyTo, want)
					}
				}
			})
		})
	}
}
