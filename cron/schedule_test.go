package cron

import (
	"errors"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in        string
		kind      Kind
		display   string
		first     time.Time
		second    time.Time // for recurring: the run after first
		recurring bool
	}{
		{in: "30m", kind: KindOnce, display: "once in 30m", first: now.Add(30 * time.Minute)},
		{in: "2h", kind: KindOnce, display: "once in 2h", first: now.Add(2 * time.Hour)},
		{in: "1d", kind: KindOnce, display: "once in 1d", first: now.Add(24 * time.Hour)},
		{in: "90 minutes", kind: KindOnce, display: "once in 1h30m", first: now.Add(90 * time.Minute)},
		{in: "every 30m", kind: KindInterval, display: "every 30m", first: now.Add(30 * time.Minute), second: now.Add(time.Hour), recurring: true},
		{in: "Every 2h", kind: KindInterval, display: "every 2h", first: now.Add(2 * time.Hour), second: now.Add(4 * time.Hour), recurring: true},
		{in: "0 9 * * *", kind: KindCron, display: "0 9 * * *", first: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), second: time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC), recurring: true},
		{in: "*/15 * * * *", kind: KindCron, display: "*/15 * * * *", first: now.Add(15 * time.Minute), second: now.Add(30 * time.Minute), recurring: true},
		{in: "CRON_TZ=America/New_York 0 9 * * *", kind: KindCron, display: "CRON_TZ=America/New_York 0 9 * * *",
			first: time.Date(2026, 3, 1, 9, 0, 0, 0, ny), second: time.Date(2026, 3, 2, 9, 0, 0, 0, ny), recurring: true},
		{in: "@daily", kind: KindCron, display: "@daily", first: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), second: time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC), recurring: true},
		{in: "2026-12-24T18:00", kind: KindOnce, display: "once at 2026-12-24 18:00", first: time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)},
		{in: "2026-12-24 18:00", kind: KindOnce, display: "once at 2026-12-24 18:00", first: time.Date(2026, 12, 24, 18, 0, 0, 0, time.UTC)},
		{in: "2026-12-24T18:00:00+01:00", kind: KindOnce, display: "once at 2026-12-24 17:00", first: time.Date(2026, 12, 24, 17, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			sc, err := Parse(tt.in, now, time.UTC)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if sc.Kind != tt.kind || sc.Display != tt.display {
				t.Fatalf("kind %q display %q, want %q %q", sc.Kind, sc.Display, tt.kind, tt.display)
			}
			if sc.Recurring() != tt.recurring {
				t.Fatalf("recurring = %v", sc.Recurring())
			}
			first := sc.First(now, time.UTC)
			if !first.Equal(tt.first) {
				t.Fatalf("first run %s, want %s", first, tt.first)
			}
			// the stored form reloads to the same schedule
			re, err := Load(sc.Kind, sc.Expr, sc.Display)
			if err != nil {
				t.Fatalf("Load(%q): %v", sc.Expr, err)
			}
			if tt.recurring {
				if got := re.Next(first, time.UTC); !got.Equal(tt.second) {
					t.Fatalf("second run %s, want %s", got, tt.second)
				}
			} else if got := re.First(now, time.UTC); !got.Equal(tt.first) {
				t.Fatalf("reloaded run time %s, want %s", got, tt.first)
			} else if !re.Next(first, time.UTC).IsZero() {
				t.Fatal("a once schedule has no next run")
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, in := range []string{
		"", "soon", "every", "every 10s", "every banana", "* * *", "0 9 * * * *", "61 * * * *",
		"CRON_TZ=", "CRON_TZ=UTC", "TZ=UTC", "CRON_TZ=Nowhere/City 0 9 * * *", "0m", "2026-13-45T99:00",
		// beyond time.Duration: refused, not wrapped around into another length
		"1000000000", "every 1000000000", "106752d", "@every 0", "@every 30s", "every 99999999999h", "9999999999999999999m", "every 5124095576030431h",
	} {
		t.Run(in, func(t *testing.T) {
			_, err := Parse(in, now, time.UTC)
			if !errors.Is(err, ErrSchedule) {
				t.Fatalf("Parse(%q) = %v, want ErrSchedule", in, err)
			}
		})
	}
}

func TestWakeGate(t *testing.T) {
	tests := []struct {
		out  string
		wake bool
	}{
		{`{"wakeAgent": false}`, false},
		{"checked 3 hosts\nall fine\n{\"wakeAgent\": false}\n\n", false},
		{`{"wakeAgent": true}`, true},
		{"{\"wakeAgent\": false}\nbut then more output", true},
		{"plain output", true},
		{"", true},
		{`{"other": 1}`, true},
		{`{not json`, true},
	}
	for _, tt := range tests {
		t.Run(tt.out, func(t *testing.T) {
			if got := wakeAgent(tt.out); got != tt.wake {
				t.Fatalf("wakeAgent(%q) = %v, want %v", tt.out, got, tt.wake)
			}
		})
	}
}

func TestIsSilent(t *testing.T) {
	for in, want := range map[string]bool{
		"[SILENT]": true, "[silent]": true, "[Silent] nothing new today": true, "all good\n[SILENT]": true,
		"SILENT": false, "Here is your report": false,
	} {
		if got := IsSilent(in); got != want {
			t.Errorf("IsSilent(%q) = %v, want %v", in, got, want)
		}
	}
}
