package sessions

import (
	"testing"
	"time"
)

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
