package sessions

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openTest(t *testing.T) *Store {
	t.Helper()
	st, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestPairingFlow(t *testing.T) {
	ctx := context.Background()
	st := openTest(t)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

	req, err := st.RequestPairing(ctx, "telegram", "u1", "ann", "c1", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Code) != PairingCodeLen || strings.Trim(req.Code, PairingAlphabet) != "" {
		t.Fatalf("code %q not %d chars of the alphabet", req.Code, PairingCodeLen)
	}
	if _, err := st.RequestPairing(ctx, "telegram", "u1", "ann", "c1", now.Add(5*time.Minute)); !errors.Is(err, ErrPairingRateLimited) {
		t.Fatalf("second request within 10 min: %v", err)
	}
	if ok, _ := st.Paired(ctx, "telegram", "u1"); ok {
		t.Fatal("paired before approval")
	}
	p, err := st.ApprovePairing(ctx, "telegram", strings.ToLower(req.Code), now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if p.UserID != "u1" || p.UserName != "ann" {
		t.Fatalf("approved %+v", p)
	}
	if ok, _ := st.Paired(ctx, "telegram", "u1"); !ok {
		t.Fatal("not paired after approval")
	}
	if ok, _ := st.Paired(ctx, "discord", "u1"); ok {
		t.Fatal("pairing leaked to another platform")
	}
	approved, pending, err := st.Pairings(ctx, now)
	if err != nil || len(approved) != 1 || len(pending) != 0 {
		t.Fatalf("list: %v %v %v", approved, pending, err)
	}
	if ok, err := st.RevokePairing(ctx, "telegram", "u1"); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if ok, _ := st.RevokePairing(ctx, "telegram", "u1"); ok {
		t.Fatal("second revoke found something")
	}
}

func TestPairingLimits(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	t.Run("expiry", func(t *testing.T) {
		st := openTest(t)
		req, err := st.RequestPairing(ctx, "slack", "u1", "", "", now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.ApprovePairing(ctx, "slack", req.Code, now.Add(PairingTTL)); !errors.Is(err, ErrNoSuchPairingCode) {
			t.Fatalf("approve after ttl: %v", err)
		}
	})
	t.Run("max pending per platform", func(t *testing.T) {
		st := openTest(t)
		for i, u := range []string{"a", "b", "c"} {
			if _, err := st.RequestPairing(ctx, "slack", u, "", "", now.Add(time.Duration(i)*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.RequestPairing(ctx, "slack", "d", "", "", now.Add(time.Minute)); !errors.Is(err, ErrTooManyPairings) {
			t.Fatalf("fourth pending: %v", err)
		}
		if _, err := st.RequestPairing(ctx, "slack", "d", "", "", now.Add(2*time.Minute)); !errors.Is(err, ErrPairingRateLimited) {
			t.Fatalf("refused request must count for the rate limit: %v", err)
		}
		if _, err := st.RequestPairing(ctx, "discord", "d", "", "", now.Add(time.Minute)); err != nil {
			t.Fatalf("other platform: %v", err)
		}
	})
	t.Run("lockout", func(t *testing.T) {
		st := openTest(t)
		req, err := st.RequestPairing(ctx, "slack", "u1", "", "", now)
		if err != nil {
			t.Fatal(err)
		}
		for i := range MaxPairingFailures {
			if _, err := st.ApprovePairing(ctx, "slack", "WRONGWRO", now.Add(time.Duration(i)*time.Second)); !errors.Is(err, ErrNoSuchPairingCode) {
				t.Fatalf("wrong code %d: %v", i, err)
			}
		}
		if _, err := st.ApprovePairing(ctx, "slack", req.Code, now.Add(time.Minute)); !errors.Is(err, ErrPairingLocked) {
			t.Fatalf("right code during lockout: %v", err)
		}
		if _, err := st.RequestPairing(ctx, "slack", "u2", "", "", now.Add(time.Minute)); !errors.Is(err, ErrPairingLocked) {
			t.Fatalf("request during lockout: %v", err)
		}
		later := now.Add(PairingLockout + 10*time.Second)
		req, err = st.RequestPairing(ctx, "slack", "u3", "", "", later)
		if err != nil {
			t.Fatalf("request after the lockout: %v", err)
		}
		if _, err := st.ApprovePairing(ctx, "slack", req.Code, later); err != nil {
			t.Fatalf("approve after the lockout: %v", err)
		}
	})
}

func TestResetPolicy(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	p := DefaultResetPolicy
	for _, tc := range []struct {
		name       string
		pol        ResetPolicy
		last, now  string
		wantReason string
	}{
		{"fresh", p, "2026-05-01 10:00", "2026-05-01 11:00", ""},
		{"idle a day", ResetPolicy{Mode: ResetIdle, IdleMinutes: 1440}, "2026-05-01 10:00", "2026-05-02 10:00", ResetIdle},
		{"idle just under", ResetPolicy{Mode: ResetIdle, IdleMinutes: 1440}, "2026-05-01 10:00", "2026-05-02 09:59", ""},
		{"daily crosses 4:00", ResetPolicy{Mode: ResetDaily, AtHour: 4}, "2026-05-01 03:59", "2026-05-01 04:00", ResetDaily},
		{"daily same side", ResetPolicy{Mode: ResetDaily, AtHour: 4}, "2026-05-01 04:00", "2026-05-02 03:59", ""},
		{"daily before hour uses yesterday", ResetPolicy{Mode: ResetDaily, AtHour: 4}, "2026-04-30 03:00", "2026-05-01 02:00", ResetDaily},
		{"both: idle first", p, "2026-04-28 10:00", "2026-05-01 10:00", ResetIdle},
		{"both: daily", p, "2026-05-01 03:00", "2026-05-01 05:00", ResetDaily},
		{"none", ResetPolicy{Mode: ResetNone}, "2020-01-01 00:00", "2026-05-01 05:00", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, ok := tc.pol.Expired(at(tc.last), at(tc.now))
			if reason != tc.wantReason || ok != (tc.wantReason != "") {
				t.Fatalf("Expired = %q %v, want %q", reason, ok, tc.wantReason)
			}
		})
	}
	if err := (ResetPolicy{Mode: "weekly"}).Validate(); err == nil {
		t.Fatal("weekly accepted")
	}
}
