package gateway

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldgw/herald"
	"github.com/heraldgw/herald/adapters"
)

func TestPairing(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var clock = now
	h := newHarness(t, nil, allowOnly("owner"), func(c *Config) {
		c.UnauthorizedDM = DMPair
		c.Now = func() time.Time { return clock }
	})
	r := h.post(msg{User: "stranger", Text: "hello"})
	if r.Status != adapters.StatusSkipped || len(r.Replies) != 1 {
		t.Fatalf("first message: %+v", r)
	}
	code := regexp.MustCompile("`([A-Z2-9]{8})`").FindStringSubmatch(r.Replies[0].Text)
	if code == nil || !strings.Contains(r.Replies[0].Text, "herald pairing approve local "+code[1]) {
		t.Fatalf("pairing text %q", r.Replies[0].Text)
	}
	// the code is sent once: within the rate limit nothing more is said
	clock = now.Add(5 * time.Minute)
	if r := h.post(msg{User: "stranger", Text: "hello?"}); len(r.Replies) != 0 || r.Status != adapters.StatusSkipped {
		t.Fatalf("rate-limited user got %+v", r)
	}
	// groups are ignored, and never pair
	if r := h.post(msg{Chat: "g1", Type: "group", User: "stranger2", Text: "hi"}); len(r.Replies) != 0 {
		t.Fatalf("group: %+v", r)
	}
	// approval through the store (as `herald pairing approve` does) applies at once
	if _, err := h.store.ApprovePairing(context.Background(), "local", code[1], clock); err != nil {
		t.Fatal(err)
	}
	if r := h.post(msg{User: "stranger", Text: "now?"}); r.Status != adapters.StatusDone || r.text() != echo+"now?" {
		t.Fatalf("after approval: %+v", r)
	}
	if _, err := h.store.RevokePairing(context.Background(), "local", "stranger"); err != nil {
		t.Fatal(err)
	}
	if r := h.post(msg{User: "stranger", Text: "still?"}); r.Status != adapters.StatusSkipped {
		t.Fatalf("after revoke: %+v", r)
	}
}

func TestPairingBusyAndLockout(t *testing.T) {
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, nil, func(c *Config) {
		c.Auth[herald.PlatformLocal] = PlatformAuth{} // not trusted, no allowlist: pairs by default
		c.Now = func() time.Time { return clock }
	})
	for _, u := range []string{"a", "b", "c"} {
		if r := h.post(msg{Chat: u, User: u, Text: "hi"}); len(r.Replies) != 1 || !strings.Contains(r.Replies[0].Text, "pairing code") {
			t.Fatalf("%s: %+v", u, r)
		}
	}
	if r := h.post(msg{Chat: "d", User: "d", Text: "hi"}); len(r.Replies) != 1 || r.Replies[0].Text != PairingBusyText {
		t.Fatalf("fourth pending: %+v", r)
	}
	for range 5 {
		h.store.ApprovePairing(context.Background(), "local", "AAAAAAAA", clock)
	}
	clock = clock.Add(11 * time.Minute)
	if r := h.post(msg{Chat: "a", User: "a", Text: "hi"}); len(r.Replies) != 1 || r.Replies[0].Text != PairingBusyText {
		t.Fatalf("during lockout: %+v", r)
	}
}

func TestAuthRules(t *testing.T) {
	for _, tc := range []struct {
		name     string
		auth     PlatformAuth
		allowAll bool
		global   string
		user     string
		ok       bool
		replies  int
	}{
		{name: "local trusts everyone", auth: PlatformAuth{TrustAll: true}, user: "x", ok: true},
		{name: "allowlist member", auth: PlatformAuth{TrustAll: true, AllowedUsers: []string{"x"}}, user: "x", ok: true},
		{name: "allowlist stranger ignored by default", auth: PlatformAuth{TrustAll: true, AllowedUsers: []string{"x"}}, user: "y"},
		{name: "star allows anyone", auth: PlatformAuth{AllowedUsers: []string{"*"}}, user: "y", ok: true},
		{name: "GATEWAY_ALLOW_ALL_USERS", auth: PlatformAuth{AllowedUsers: []string{"x"}}, allowAll: true, user: "y", ok: true},
		{name: "no allowlist pairs", auth: PlatformAuth{}, user: "y", replies: 1},
		{name: "explicit pair overrides allowlist default", auth: PlatformAuth{AllowedUsers: []string{"x"}, UnauthorizedDM: DMPair}, user: "y", replies: 1},
		{name: "global ignore", auth: PlatformAuth{}, global: DMIgnore, user: "y"},
		{name: "platform pair beats global ignore", auth: PlatformAuth{UnauthorizedDM: DMPair}, global: DMIgnore, user: "y", replies: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil, func(c *Config) {
				c.Auth[herald.PlatformLocal] = tc.auth
				c.AllowAllUsers = tc.allowAll
				c.UnauthorizedDM = tc.global
			})
			r := h.post(msg{User: tc.user, Text: "hi"})
			if ok := r.Status == adapters.StatusDone; ok != tc.ok {
				t.Fatalf("allowed = %v, want %v (%+v)", ok, tc.ok, r)
			}
			if !tc.ok && len(r.Replies) != tc.replies {
				t.Fatalf("replies %q, want %d", r.texts(), tc.replies)
			}
		})
	}
}
